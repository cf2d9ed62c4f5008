#!/usr/bin/env python3
"""MPU's speed against its authors' simulator: AXPY and GEMV on the ``mpu`` preset, whole
processes, as MPU-Sim was measured.

MPU-Sim (SimPy), on its own default configuration (the same 8 x 16-core machine), simulated
about 230 warp-instructions per wall second on a 16,384-element vector add (15,872
warp-instructions in 34 s) and 80-230 on GEMV 128 x 128 to 512 x 512, with 390-560 MB of memory
and a cost growing faster than the input (issue 48). Here each case is one
``ndpsim run --system mpu`` process, start to end: importing, interpreting the kernel to record
its trace (and checking its output), simulating, writing the result. A ``tiny`` run first fills
numba's cache (or finds it filled), so compiling is not counted. Each line prints the simulated
warp-instructions, the core cycles, the process's wall time, warp-instructions per wall second
and its peak RSS; then the time ratios of inputs 16x apart.

Targets (issue 48): at least 230,000 warp-instructions per second on AXPY 16k (1,000x MPU-Sim),
and 16x the input costing at most 17x the time.

    python bench/mpu.py [--quick]     # --quick: the two smaller sizes of each
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

#: MPU-Sim's grid for both (512 CTAs of 128 threads, its drivers' defaults), as it ran them.
AUTHORS_GRID = {"grid": 512, "block": 128}
AXPY = [("axpy", {"n": n, **AUTHORS_GRID}) for n in (16_384, 262_144, 4_194_304)]
GEMV = [("gemv", {"rows": d, "cols": d, **AUTHORS_GRID}) for d in (128, 512, 2048)]
TARGET_RATE = 230_000  # warp-instructions per wall second on AXPY 16k
TARGET_RATIO = 17.0  # time of 16x the input, at most


def run_case(workload: str, params: dict, out: Path) -> dict:
    """One whole ``ndpsim run`` process; its wall time, peak RSS and result."""
    command = [sys.executable, "-m", "ndpsim", "run", "--system", "mpu", "--workload", workload,
               "--size", "tiny", "--json", str(out)]  # fmt: skip
    for key, value in params.items():
        command += ["--param", f"{key}={value}"]
    start = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(process.pid, 0)  # this process's own peak, not the largest yet
    wall = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{' '.join(command)} failed")
    summary = json.loads(out.read_text())["summary"]
    return {"wall_s": wall, "peak_mb": usage.ru_maxrss / 1024,
            "warp_instructions": summary["warp_instructions"],
            "core_cycles": summary["core_cycles"]}  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="the two smaller sizes of each")
    args = parser.parse_args()
    cases = [AXPY[:2], GEMV[:2]] if args.quick else [AXPY, GEMV]
    with tempfile.TemporaryDirectory() as scratch:
        out = Path(scratch) / "run.json"
        warm = time.perf_counter()
        run_case("axpy", {}, out)
        print(f"warm-up (tiny AXPY, numba's cache filled or found): "
              f"{time.perf_counter() - warm:.1f} s")  # fmt: skip
        print(f"{'case':<16} {'warp instr':>12} {'cycles':>12} {'wall s':>8} {'winst/s':>10} "
              f"{'peak MB':>8}")  # fmt: skip
        for family in cases:
            results = []
            for workload, params in family:
                r = run_case(workload, params, out)
                results.append(r)
                shape = [v for k, v in params.items() if k not in AUTHORS_GRID]
                label = workload + " " + "x".join(str(v) for v in shape)
                rate = r["warp_instructions"] / r["wall_s"]
                print(f"{label:<16} {r['warp_instructions']:>12,} {r['core_cycles']:>12,} "
                      f"{r['wall_s']:>8.2f} {rate:>10,.0f} {r['peak_mb']:>8.0f}")  # fmt: skip
            for small, large in itertools.pairwise(results):
                ratio = large["wall_s"] / small["wall_s"]
                verdict = "meets" if ratio <= TARGET_RATIO else "misses"
                print(f"  16x the input: {ratio:.1f}x the time ({verdict} <= {TARGET_RATIO:.0f}x)")
            if family is cases[0]:
                rate = results[0]["warp_instructions"] / results[0]["wall_s"]
                verdict = "meets" if rate >= TARGET_RATE else "misses"
                print(f"  AXPY 16k: {rate:,.0f} warp-instructions/s, {rate / 230:,.0f}x MPU-Sim "
                      f"({verdict} >= {TARGET_RATE:,})")  # fmt: skip


if __name__ == "__main__":
    main()
