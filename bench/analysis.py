#!/usr/bin/env python3
"""Analysis speed: seconds per compiler pass on synthetic kernels of 1k, 10k and 100k instructions.

The kernels (``tests/analysis/synthetic_kernels.py``) come in three shapes: ``straight`` (one
basic block of loads, arithmetic and stores), ``nested`` (loop nests of depth three) and
``branches`` (a chain of small loops, a backward branch every ten instructions). Each pass is
timed once, in the order the analyses build on each other, so a pass's time excludes the passes
it reads (``tom-loops`` includes the per-pc tables both TOM rules share). Each kernel is analysed
in a fresh process, so no kernel's leftovers slow another's garbage collection. A pass that took
more than ``--skip-after`` seconds at a shape's smaller size is skipped at the larger ones, and so
is every pass that needs it, so the benchmark ends in bounded time.

    python bench/analysis.py [--sizes 1000,10000,100000] [--shapes straight,nested,branches]
                             [--skip-after 10]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the tests' kernel generator

from ndpsim.analysis import FunctionAnalysis
from ndpsim.analysis.sndp import sndp_blocks
from ndpsim.analysis.tom import tom_candidates
from ndpsim.frontend.parser import parse_ptx
from tests.analysis.synthetic_kernels import SHAPES, synthetic_kernel

TARGET_SIZE, TARGET_S = 10_000, 2.0  # every pass under 2 s at 10k instructions (issue 36)

# pass: the passes whose results it reads (each is timed on its own, in this order)
NEEDS = {
    "parse": (),
    "cfg": ("parse",),
    "dominators": ("cfg",),
    "liveness": ("cfg",),
    "def-use": ("liveness",),
    "loops": ("dominators", "def-use"),
    "classify": ("def-use",),
    "tom-loops": ("loops", "liveness", "classify"),
    "tom-maximal": ("tom-loops",),
    "sndp": ("liveness", "classify"),
}
# the passes that are a property of FunctionAnalysis, computed on first access
ATTRIBUTES = {"cfg": "cfg", "dominators": "dominance", "def-use": "defuse", "loops": "loops",
              "classify": "classes"}  # fmt: skip


def run_pass(name: str, state: dict) -> None:
    """Run one pass, leaving what later passes read in ``state``."""
    if name == "parse":
        state["function"] = parse_ptx(state["ptx"]).functions["k"]
        state["analysis"] = FunctionAnalysis(state["function"])
        return
    analysis, function = state["analysis"], state["function"]
    if name == "liveness":
        analysis.liveness.live_before(0)  # the per-instruction sets, which TOM and SNDP read
    elif name in ATTRIBUTES:
        getattr(analysis, ATTRIBUTES[name])
    elif name.startswith("tom-"):
        tom_candidates(function, name.removeprefix("tom-"))
    else:
        sndp_blocks(function)


def measure(shape: str, size: int, slow: set[str]) -> tuple[int, dict[str, float | None]]:
    """Seconds per pass (None: skipped) on one kernel; ``slow`` names the passes to skip."""
    kernel = synthetic_kernel(shape, size)
    state: dict = {"ptx": kernel.ptx}
    seconds: dict[str, float | None] = {}
    for name, needs in NEEDS.items():
        if name in slow or any(seconds[n] is None for n in needs):
            seconds[name] = None
            continue
        start = time.perf_counter()
        run_pass(name, state)
        seconds[name] = time.perf_counter() - start
    return kernel.num_instructions, seconds


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--shapes", default=",".join(SHAPES))
    parser.add_argument("--skip-after", type=float, default=10.0, metavar="SECONDS")
    parser.add_argument("--one", help=argparse.SUPPRESS)  # SHAPE:SIZE:PASSES-TO-SKIP
    args = parser.parse_args()
    if args.one:
        shape, size, skip = args.one.split(":")
        print(json.dumps(measure(shape, int(size), set(skip.split(",")))))
        return 0
    sizes = sorted(int(s) for s in args.sizes.split(","))
    print(f"{'shape':9} {'instr':>7}" + "".join(f" {name:>11}" for name in NEEDS))
    missed = []
    for shape in args.shapes.split(","):
        slow: set[str] = set()
        for size in sizes:
            out = subprocess.run(
                [sys.executable, __file__, "--one", f"{shape}:{size}:{','.join(slow)}"],
                check=True, capture_output=True, text=True,
            ).stdout  # fmt: skip
            num_instructions, seconds = json.loads(out)
            cells = []
            for name, s in seconds.items():
                cells.append(f"{'skipped':>11}" if s is None else f"{s:>11.3f}")
                if s is not None and s > args.skip_after:
                    slow.add(name)
                if size == TARGET_SIZE and (s is None or s >= TARGET_S):
                    missed.append(f"{shape}/{name}")
            print(f"{shape:9} {num_instructions:>7,}" + "".join(cells), flush=True)
    print(f"seconds per pass; skipped: > {args.skip_after:g} s at a smaller size, or needs a "
          "pass that was")  # fmt: skip
    if TARGET_SIZE in sizes:
        verdict = "met" if not missed else "MISSED by " + ", ".join(missed)
        print(f"target: every pass < {TARGET_S:g} s at {TARGET_SIZE:,} instructions: {verdict}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
