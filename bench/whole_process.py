#!/usr/bin/env python3
"""What a user of ``ndpsim dram-trace`` waits for, start to end: the whole process on the three
1M-request anchor traces, as LD/ST text and as ``.npz``, next to the simulation alone (the
``wall_seconds`` the command reports), so that start-up and reading a trace show beside it; and
the start-up of ``ndpsim --help`` and ``ndpsim systems`` against Python importing NumPy.

Every figure is the best of ``--repeat`` runs, each a fresh process, the compiled model already
in numba's cache (one run first loads or compiles it).

    python bench/whole_process.py [--cases seq,rand,mix] [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from dram import CASES, anchor_trace  # the anchor traces, as bench/dram.py draws them

NDPSIM = [sys.executable, "-m", "ndpsim"]


def best_wall(command: list[str], repeat: int, env: dict[str, str] | None = None) -> float:
    """The shortest wall time of ``command`` over ``repeat`` fresh processes."""
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL, env=env)
        best = min(best, time.perf_counter() - start)
    return best


def dram_trace(path: Path, repeat: int) -> tuple[float, float]:
    """(whole process, simulation alone) of ``ndpsim dram-trace`` on ``path``, best of
    ``repeat``."""
    whole, simulation = float("inf"), float("inf")
    figures = path.with_suffix(".json")
    for _ in range(repeat):
        start = time.perf_counter()
        subprocess.run([*NDPSIM, "dram-trace", str(path), "--preset", "hbm2-anchor", "--json",
                        str(figures)], check=True, stdout=subprocess.DEVNULL)  # fmt: skip
        whole = min(whole, time.perf_counter() - start)
        simulation = min(simulation, json.loads(figures.read_text())["wall_seconds"])
    return whole, simulation


def numba_floor(repeat: int) -> float:
    """The whole process of importing numba and calling one trivial function loaded from its
    on-disk cache: what any process that runs compiled code pays before its own work (numba
    sets up its typing and lowering registries on the first call, cached or not)."""
    with tempfile.TemporaryDirectory() as tmp:
        program = Path(tmp) / "one_cached_function.py"
        program.write_text(
            "import numba\n\n@numba.njit(cache=True)\ndef one(x):\n    return x + 1\n\none(1)\n"
        )
        command = [sys.executable, str(program)]
        subprocess.run(command, check=True, env={**os.environ, "NUMBA_CACHE_DIR": tmp})
        return best_wall(command, repeat, env={**os.environ, "NUMBA_CACHE_DIR": tmp})


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", default=",".join(CASES))
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    numpy_s = best_wall([sys.executable, "-c", "import numpy"], args.repeat + 2)
    help_s = best_wall([*NDPSIM, "--help"], args.repeat + 2)
    systems_s = best_wall([*NDPSIM, "systems"], args.repeat + 2)
    print(f"start-up, best of {args.repeat + 2}: python -c 'import numpy' {numpy_s:.2f} s, "
          f"ndpsim --help {help_s:.2f} s ({help_s / numpy_s:.1f}x), ndpsim systems "
          f"{systems_s:.2f} s ({systems_s / numpy_s:.1f}x)")  # fmt: skip
    numba_s = numba_floor(args.repeat + 2)
    print(f"numba's own share of any run, best of {args.repeat + 2}: a process that imports "
          f"numba and calls one cached function takes {numba_s:.2f} s, "
          f"{numba_s - numpy_s:.2f} s more than importing NumPy")  # fmt: skip
    print(f"\nndpsim dram-trace, hbm2-anchor, best of {args.repeat} (s)")
    print(f"{'trace':6}{'format':>7}{'whole':>8}{'simulation':>12}{'rest':>7}{'text/npz':>10}")
    with tempfile.TemporaryDirectory() as tmp:
        from ndpsim.traceio.ramulator import write_ldst

        for case in args.cases.split(","):
            addresses, writes = anchor_trace(case)
            text, npz = Path(tmp) / f"{case}.ldst", Path(tmp) / f"{case}.npz"
            write_ldst(text, addresses, writes)
            np.savez(npz, addr=addresses, is_write=writes)
            dram_trace(npz, 1)  # the compiled model, loaded or compiled once
            rows = {path.suffix[1:]: dram_trace(path, args.repeat) for path in (text, npz)}
            for kind, (whole, simulation) in rows.items():
                ratio = rows["ldst"][0] / rows["npz"][0] if kind == "ldst" else 1.0
                print(f"{case:6}{kind:>7}{whole:>8.2f}{simulation:>12.2f}"
                      f"{whole - simulation:>7.2f}{ratio:>10.2f}")  # fmt: skip
    print(
        "targets (issue 54): text within 1.25x of .npz; .npz at most 0.4 s above the "
        "simulation; --help and systems within 3x of importing NumPy"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
