#!/usr/bin/env python3
"""What a sweep costs beyond its simulations: 200 ``tiny`` runs through ``ndpsim sweep``, and
resuming the finished sweep.

The reference is the sum of the single runs' times: each run of the study done alone in one
warm process, as ``ndpsim run`` does it without starting Python and loading the configuration
(interpret the workload, build the system, simulate). The sweep is then timed as a user runs
it, a fresh ``ndpsim sweep --jobs N`` process (start-up, expansion, workers, storing every row
included), and again on the finished store (which must run nothing). The overhead per run is
the workers' time not spent as the single runs spend it: ``(jobs x wall - sum of single runs)
/ runs``.
Targets (issue 37): the sweep under 2x the sum of the single runs, resuming under 5 s.

    python bench/sweep.py [--jobs 2]
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

STUDY = """\
name = "bench"
systems = ["tom-baseline", "tom-ndp"]
workloads = ["vadd", "rd", "hist", "sp", "spmv"]
sizes = ["tiny"]
seeds = [0, 1]
[grid]
"links.host_to_cube_gbps" = [10.0, 20.0, 40.0, 60.0, 80.0]
"sm.count" = [32, 64]
"""


def single_runs(study: Path) -> tuple[int, float, float]:
    """The runs of the study, each done alone (interpreted, built, simulated; its validated
    configuration taken as given): how many, and the sum of their wall and CPU times."""
    from ndpsim.sweeps.expansion import expand
    from ndpsim.sweeps.study import load_study
    from ndpsim.systems import build_system
    from ndpsim.workloads import kernel_module, run_workload

    plan = expand(load_study(study))
    warm = run_workload("vadd", "tiny")  # load the compiled model once, outside the timing
    build_system(plan.runs[0].config).run(warm.traces, kernel_module("vadd"), warm.memory)
    wall = cpu = 0.0
    for run in plan.runs:
        start, start_cpu = time.perf_counter(), time.process_time()
        functional = run_workload(run.workload, run.size, run.seed)
        module = kernel_module(functional.workload.module_name)
        build_system(run.config).run(functional.traces, module, functional.memory,
                                     seed=run.seed)  # fmt: skip
        wall += time.perf_counter() - start
        cpu += time.process_time() - start_cpu
    return len(plan.runs), wall, cpu


def timed(command: list[str]) -> tuple[float, float, str]:
    """The wall and CPU time (of the command and its workers) of a command, and its output."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, check=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    return wall, cpu, done.stdout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="ndpsim-bench-sweep-"))
    try:
        study = root / "study.toml"
        study.write_text(STUDY)
        runs, single, single_cpu = single_runs(study)
        ndpsim = [sys.executable, "-c", "from ndpsim.cli.main import app; app()"]
        command = [*ndpsim, "sweep", str(study), "--out", str(root / "out"), "--jobs",
                   str(args.jobs)]  # fmt: skip
        wall, cpu, _ = timed(command)
        resume, _, output = timed(command)
        assert "nothing to run" in output, output
    finally:
        shutil.rmtree(root)
    print(f"{runs} tiny runs, {args.jobs} jobs, on {os.cpu_count()} cores "
          f"(load average {os.getloadavg()[0]:.1f} at the end)")  # fmt: skip
    print(f"sum of single runs        {single:7.2f} s  ({single / runs * 1e3:.1f} ms a run; "
          f"CPU {single_cpu:.2f} s)")  # fmt: skip
    print(f"ndpsim sweep              {wall:7.2f} s  ({wall / single:.2f}x the sum; target < 2x; "
          f"CPU {cpu:.2f} s)")  # fmt: skip
    print(f"overhead per run          {(args.jobs * wall - single) / runs * 1e3:7.1f} ms  "
          "(worker time beyond a single run's)")  # fmt: skip
    print(f"  in CPU time             {(cpu - single_cpu) / runs * 1e3:7.1f} ms  (start-up, "
          "expansion and storing included)")  # fmt: skip
    print(f"resuming the finished one {resume:7.2f} s  (target < 5 s)")


if __name__ == "__main__":
    main()
