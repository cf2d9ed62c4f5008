"""``ndpsim sweep STUDY.toml``: every run of a study that its result store lacks, with
progress, each stored as it ends."""

from __future__ import annotations

import time
from pathlib import Path

import typer
from rich.markup import escape
from rich.table import Table

from ndpsim.cli import options
from ndpsim.cli.main import app, console, reports_errors
from ndpsim.cli.paths import output_directory
from ndpsim.cli.progress import tracking
from ndpsim.cli.stopping import stops_cleanly
from ndpsim.compilation import COMPILING_NOTICE
from ndpsim.errors import ConfigError
from ndpsim.experiments.rows import Run
from ndpsim.sweeps.expansion import counts
from ndpsim.sweeps.sweep import BACKENDS, Sweep, prepare
from ndpsim.sweeps.worker import Outcome

#: The most runs ``--dry-run`` lists one by one.
LISTED_RUNS = 40


@app.command("sweep")
@reports_errors
def sweep(
    study: Path = typer.Argument(
        ..., help="The study file (TOML; see docs/sweeps.md).", metavar="STUDY.toml"
    ),
    jobs: int = options.jobs(1, "1, the runs one after another in this process"),
    out: Path = options.out("the stored runs", "results/sweep-NAME, NAME the study's"),
    dry_run: bool = typer.Option(
        False, "--dry-run", help="List the runs and which are stored; run nothing."
    ),
    backend: str = typer.Option(
        "local",
        "--backend",
        metavar="local|ray",
        help="local: worker processes on this machine; ray: Ray tasks, on a local Ray "
        "instance of --jobs CPUs or a cluster (pip install 'ndpsim\\[ray]').",
    ),
    ray_address: str = typer.Option(
        None,
        "--ray-address",
        metavar="ADDRESS",
        help="The Ray cluster to run on (default: RAY_ADDRESS, else a local instance).",
    ),
) -> None:
    """Run a design-space study: every system, swept value, workload, size and seed; runs
    already in the result directory are not run again, so a killed sweep resumes."""
    if backend not in BACKENDS:
        raise ConfigError(f"--backend {backend!r}: expected one of {', '.join(BACKENDS)}")
    if ray_address and backend != "ray":
        raise ConfigError("--ray-address is for --backend ray")
    work = prepare(study, out)
    _describe(work)
    if dry_run:
        _list(work)
        return
    if not work.pending:
        console.print("nothing to run", highlight=False)
        return
    output_directory(work.store.root, "--out")
    to_run = len(work.pending)
    start = time.perf_counter()
    with stops_cleanly(work.store, "running the same sweep again"):
        failed = _run(work, jobs, backend, ray_address)
    elapsed = time.perf_counter() - start
    console.print(f"{to_run - len(failed)} runs stored in {escape(str(work.store.root))} in "
                  f"{elapsed:.1f} s ({elapsed / to_run:.3f} s a run with {jobs} "
                  f"job{'s' if jobs > 1 else ''})", highlight=False, soft_wrap=True)  # fmt: skip
    if failed:
        for run, outcome in failed:
            console.print(f"[red]failed:[/] {escape(run.label())}: {escape(outcome.error or '')}",
                          highlight=False, soft_wrap=True)  # fmt: skip
        console.print(f"[red]{len(failed)} runs failed[/]; they are not stored, and the next "
                      "sweep runs them again", highlight=False, soft_wrap=True)  # fmt: skip
        raise typer.Exit(1)


def _describe(work: Sweep) -> None:
    """How many runs, from what, and how many the store already holds."""
    plan = work.plan
    dimensions = " x ".join(f"{n} {what if n != 1 else what[:-1]}"
                            for what, n in counts(plan).items())  # fmt: skip
    merged = plan.combinations - len(plan.runs)
    note = f" ({merged} combinations leave a system unchanged and run once)" if merged else ""
    console.print(f"study {escape(plan.study.name)}: {len(plan.runs)} runs = {dimensions}"
                  f"{note}; {work.stored} stored in {escape(str(work.store.root))}, "
                  f"{len(work.pending)} to run", highlight=False, soft_wrap=True)  # fmt: skip


def _list(work: Sweep) -> None:
    pending = {run.key for run in work.pending}
    table = Table(title=f"runs of study {work.plan.study.name}", title_justify="left")
    for column in ("run", "stored"):
        table.add_column(column)
    for run in work.plan.runs[:LISTED_RUNS]:
        table.add_row(escape(run.label()), "no" if run.key in pending else "yes")
    console.print(table)
    if len(work.plan.runs) > LISTED_RUNS:
        console.print(f"... and {len(work.plan.runs) - LISTED_RUNS} more", highlight=False)


def _run(work: Sweep, jobs: int, backend: str,
         ray_address: str | None) -> list[tuple[Run, Outcome]]:  # fmt: skip
    """Every pending run, a bar (or a line per run in a log) saying how many are done,
    running and failed, and the time left."""
    total = len(work.pending)
    name = work.plan.study.name
    with tracking(f"sweep {name}", total) as tracker:
        failures = 0

        def done(run: Run, outcome: Outcome) -> None:
            nonlocal failures
            failures += outcome.error is not None
            running = min(jobs, total - tracker.done - 1)
            tracker.label = (f"sweep {name}: {running} running"
                             + (f", {failures} failed" if failures else ""))  # fmt: skip
            tracker.advance(run.label() + (" FAILED" if outcome.error else ""))

        def compiling(started: bool) -> None:
            tracker.note(COMPILING_NOTICE if started else "compiled")

        return work.run(jobs=jobs, backend=backend, ray_address=ray_address, on_done=done,
                        on_compiling=compiling)  # fmt: skip
