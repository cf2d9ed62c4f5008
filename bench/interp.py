#!/usr/bin/env python3
"""Interpreter speed: thread- and warp-instructions per second, and peak memory.

Runs VADD, SPMV and BFS of the suite at ``small`` size (and BFS on an R-MAT graph, whose skewed
degrees leave few lanes active: a stress case, reported for honesty). Each measurement runs in a
fresh process so its peak RSS is its own; a tiny run first warms numba's caches so compilation is
not timed. Trace generation (the interpreter with recording on) is what is timed; input generation
and the reference check are not.

    python bench/interp.py [--size small] [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time

CASES = ("vadd", "spmv", "bfs", "bfs-rmat")
TARGETS = {"vadd": 50e6, "spmv": 50e6, "bfs": 10e6}  # thread-instructions/s (issue 2)


def measure(case: str, size: str, repeat: int) -> dict:
    import numpy as np

    from ndpsim.workloads import get_workload, kernel_module, run_workload
    from ndpsim.workloads.base import Device

    name = "bfs" if case == "bfs-rmat" else case
    cls = get_workload(name)
    if case == "bfs-rmat":
        from ndpsim.workloads.generators import rmat_graph

        class RmatBFS(cls):  # the suite's BFS kernels on a Graph500-style R-MAT graph
            def inputs(self, rng):
                graph = rmat_graph(rng, 15, 16)
                return {"graph": graph, "source": int(np.argmax(np.diff(graph.row_offsets)))}

        cls = RmatBFS
    run_workload(name, "tiny")  # warm numba's on-disk caches
    workload = cls(size, 0)
    inputs = workload.inputs(workload.rng())
    best = None
    for _ in range(repeat):
        device = Device(kernel_module(workload.module_name))
        start = time.perf_counter()
        outputs = workload.run(device, inputs)
        seconds = time.perf_counter() - start
        best = seconds if best is None else min(best, seconds)
    check = workload.check(outputs, workload.reference(inputs))
    thread = sum(t.num_thread_instructions for t in device.traces)
    warp = sum(t.num_warp_instructions for t in device.traces)
    return {
        "case": case,
        "size": size,
        "seconds": best,
        "warp_instructions": warp,
        "thread_instructions": thread,
        "thread_per_s": thread / best,
        "warp_per_s": warp / best,
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "check": check.passed,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", default="small")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--one", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(measure(args.one, args.size, args.repeat)))
        return 0
    print(f"{'case':10} {'warp-instr':>12} {'thread-instr':>14} {'seconds':>8} "
          f"{'M thread/s':>11} {'M warp/s':>9} {'peak RSS MB':>11}  target")  # fmt: skip
    for case in CASES:
        out = subprocess.run(
            [sys.executable, __file__, "--one", case, "--size", args.size,
             "--repeat", str(args.repeat)],
            check=True, capture_output=True, text=True,
        ).stdout  # fmt: skip
        r = json.loads(out.strip().splitlines()[-1])
        target = TARGETS.get(case)
        verdict = ""
        if target:
            verdict = (
                f">= {target / 1e6:.0f}M: {'met' if r['thread_per_s'] >= target else 'MISSED'}"
            )
        if not r["check"]:
            verdict += " (OUTPUT MISMATCH)"
        print(f"{case:10} {r['warp_instructions']:>12,} {r['thread_instructions']:>14,} "
              f"{r['seconds']:>8.3f} {r['thread_per_s'] / 1e6:>11.1f} "
              f"{r['warp_per_s'] / 1e6:>9.2f} {r['peak_rss_mb']:>11.0f}  {verdict}")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
