#!/usr/bin/env python3
"""DRAM-only speed and fidelity: the three 1M-request anchor traces on the HBM2 anchor preset.

The traces are those of ``../shared/anchors/dram_reference.md`` (same generator, same seed):
``seq`` (sequential 64 B reads), ``rand`` (uniform random 64 B reads over 4 GiB) and ``mix``
(random, one third writes). Each case runs in a fresh process so its peak RSS is its own. The
first call in that process runs a 1,000-request trace: that is the one-time cost of compiling,
or loading from numba's on-disk cache, and is reported separately; the timed run comes after.
Refresh, tFAW/tRRD, write drain and FR-FCFS are all on (the preset's defaults).

Ramulator's figures on the same traces and memory are printed next to ndpsim's for comparison,
and so is how fast ndpsim reads the same trace written as Ramulator's LD/ST text (``parse M
lines/s``, best of ``--repeat``), which is what a Ramulator user hands it.

    python bench/dram.py [--cases seq,rand,mix] [--inject-per-cycle 8] [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

CASES = ("seq", "rand", "mix")
TARGET_RAND = 1_000_000  # simulated requests per wall second on rand (issue 3)
# Ramulator 2.0 / 2.1 on the same traces and memory at K = 8 (dram_reference.md): DRAM cycles,
# row hits, and simulated requests per wall second.
RAMULATOR = {
    "seq": {"2.0": (249_954, 968_480, 386_000), "2.1": (190_742, 936_001, 376_000)},
    "rand": {"2.0": (482_338, 161, 262_000), "2.1": (433_545, 92, 209_000)},
    "mix": {"2.0": (481_856, 133, 216_000), "2.1": (475_216, 73, 211_000)},
}


def anchor_trace(name: str) -> tuple[np.ndarray, np.ndarray]:
    """The anchor trace ``name``: 1,000,000 64 B requests drawn with seed 12345, in the order
    the reference generator draws them (``rand`` first, then ``mix``'s addresses and writes)."""
    n, line, span = 1_000_000, 64, 4 << 30
    if name == "seq":
        return np.arange(n, dtype=np.uint64) * line, np.zeros(n, np.uint8)
    rng = np.random.default_rng(12345)
    rand = rng.integers(0, span // line, n, dtype=np.uint64) * line
    if name == "rand":
        return rand, np.zeros(n, np.uint8)
    addresses = rng.integers(0, span // line, n, dtype=np.uint64) * line
    writes = (rng.random(n) < 1.0 / 3.0).astype(np.uint8)
    return addresses, writes


def measure(case: str, inject_per_cycle: int, repeat: int) -> dict:
    from ndpsim.hw.dram.spec import load_dram_preset
    from ndpsim.systems.dram_trace import run_dram_trace

    preset = load_dram_preset("hbm2-anchor")
    addresses, writes = anchor_trace(case)
    start = time.perf_counter()
    run_dram_trace(preset, addresses[:1000], writes[:1000], inject_per_cycle=inject_per_cycle)
    first_call = time.perf_counter() - start
    best = None
    for _ in range(repeat):
        result = run_dram_trace(preset, addresses, writes, inject_per_cycle=inject_per_cycle)
        if best is None or result.wall_seconds < best.wall_seconds:
            best = result
    s = best.stats
    peak_rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # before parsing
    return {
        "parse_lines_per_s": parse_rate(addresses, writes, repeat),
        "case": case,
        "requests": best.requests,
        "cycles": best.cycles,
        "row_hits": s["row_hits"],
        "row_non_hits": s["row_misses"] + s["row_conflicts"],
        "refreshes": s["refreshes"],
        "seconds": best.wall_seconds,
        "requests_per_s": best.requests_per_second,
        "cycles_per_s": best.cycles / best.wall_seconds,
        "first_call_s": first_call,
        "peak_rss_mb": peak_rss_mb,
    }


def parse_rate(addresses: np.ndarray, writes: np.ndarray, repeat: int) -> float:
    """Lines a second :func:`read_ldst` reads of the requests written as an LD/ST text trace."""
    from ndpsim.traceio.ramulator import read_ldst, write_ldst

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "trace.ldst"
        write_ldst(path, addresses, writes)
        best = float("inf")
        for _ in range(repeat):
            start = time.perf_counter()
            read, _ = read_ldst(path)
            best = min(best, time.perf_counter() - start)
    assert np.array_equal(read, addresses)
    return len(addresses) / best


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", default=",".join(CASES))
    parser.add_argument("--inject-per-cycle", type=int, default=8)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--one", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(measure(args.one, args.inject_per_cycle, args.repeat)))
        return 0
    print(f"HBM2 anchor preset, K = {args.inject_per_cycle}, best of {args.repeat}")
    print(f"{'trace':5} {'cycles':>9} {'vs R2.0':>8} {'vs R2.1':>8} {'row hits':>9} "
          f"{'wall s':>7} {'M req/s':>8} {'M cyc/s':>8} {'x R2.0':>7} {'JIT/load s':>10} "
          f"{'RSS MB':>7} {'parse M lines/s':>15}")  # fmt: skip
    for case in args.cases.split(","):
        out = subprocess.run(
            [sys.executable, __file__, "--one", case, "--repeat", str(args.repeat),
             "--inject-per-cycle", str(args.inject_per_cycle)],
            check=True, capture_output=True, text=True,
        ).stdout  # fmt: skip
        r = json.loads(out.strip().splitlines()[-1])
        ref = RAMULATOR[case]
        print(f"{case:5} {r['cycles']:>9,} {r['cycles'] / ref['2.0'][0] - 1:>+8.1%} "
              f"{r['cycles'] / ref['2.1'][0] - 1:>+8.1%} {r['row_hits']:>9,} "
              f"{r['seconds']:>7.2f} {r['requests_per_s'] / 1e6:>8.2f} "
              f"{r['cycles_per_s'] / 1e6:>8.2f} {r['requests_per_s'] / ref['2.0'][2]:>7.1f} "
              f"{r['first_call_s']:>10.2f} {r['peak_rss_mb']:>7.0f} "
              f"{r['parse_lines_per_s'] / 1e6:>15.2f}")  # fmt: skip
        if case == "rand":
            met = r["requests_per_s"] >= TARGET_RAND
            print(f"      target on rand: >= {TARGET_RAND / 1e6:.0f}M req/s: "
                  f"{'met' if met else 'MISSED'}")  # fmt: skip
    print("Ramulator row hits: seq 968,480 (2.0) / 936,001 (2.1); rand and mix < 200")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
