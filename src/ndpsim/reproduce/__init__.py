"""One-command reproductions of the papers' key results: experiment definitions, a runner
that spreads workloads over processes, and reports (tables, CSV, PNG)."""
