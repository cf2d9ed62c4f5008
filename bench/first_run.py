#!/usr/bin/env python3
"""What a new user waits for: the first ``ndpsim run`` on a machine, compiling the simulator.

Runs ``ndpsim run --system SYSTEM --workload WORKLOAD --size tiny`` in a fresh process with an
empty compilation cache (a temporary ``NDPSIM_CACHE_DIR``), then once more with the cache it
filled: the difference is the one-time compilation. Prints the wall time and peak memory of
both runs.

    python bench/first_run.py [--system tom-baseline] [--workload vadd]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time


def timed_run(system: str, workload: str, cache_dir: str,
              out_dir: str) -> tuple[float, float, float]:  # fmt: skip
    """Wall seconds, CPU seconds and peak RSS (MB) of one CLI run in a child process (CPU time
    tells more than wall time on a busy machine)."""
    env = dict(os.environ, NDPSIM_CACHE_DIR=cache_dir)
    env.pop("NUMBA_CACHE_DIR", None)
    cli = "from ndpsim.cli.main import app; app(prog_name='ndpsim')"
    command = [sys.executable, "-c", cli, "run", "--system", system,
               "--workload", workload, "--size", "tiny", "--json",
               os.path.join(out_dir, "result.json")]  # fmt: skip
    start = time.perf_counter()
    child = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(child.pid, 0)  # this child's own peak, not the largest so far
    seconds = time.perf_counter() - start
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode != 0:
        raise SystemExit(f"{' '.join(command)} exited with status {child.returncode}")
    return seconds, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--system", default="tom-baseline")
    parser.add_argument("--workload", default="vadd")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as cache_dir, tempfile.TemporaryDirectory() as out_dir:
        first = timed_run(args.system, args.workload, cache_dir, out_dir)
        second = timed_run(args.system, args.workload, cache_dir, out_dir)
    print(f"{'run':<8}{'wall s':>10}{'CPU s':>10}{'peak MB':>10}")
    for name, (wall_s, cpu_s, peak_mb) in (("first", first), ("second", second)):
        print(f"{name:<8}{wall_s:>10.1f}{cpu_s:>10.1f}{peak_mb:>10.0f}")
    print(
        f"compilation (first - second): {first[0] - second[0]:.1f} s wall, "
        f"{first[1] - second[1]:.1f} s CPU"
    )


if __name__ == "__main__":
    main()
