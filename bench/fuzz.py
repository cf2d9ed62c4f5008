#!/usr/bin/env python3
"""A PTX fuzz campaign: mutants of the committed kernels, loaded and then run.

Each mutant (``ndpsim.fuzz.mutate``: token and targeted edits) is parsed and decoded; an accepted
one is run by the host program of every workload using its module, at ``tiny`` size, under
``ndpsim.fuzz.FUZZ_LIMITS``. Prints how many were accepted, rejected (an ndpsim error, at load or
at run time), crashed (any other exception) and hung (past ``--seconds``), every distinct crash
signature with one example's edit, the time taken and the peak memory of the process. The
issue's bar: 0 crashed and 0 hung over at least 30,000 mutants, memory bounded.

    python bench/fuzz.py [--mutants 30000] [--seed 0] [--load-only] [--seconds 10]
"""

from __future__ import annotations

import argparse
import collections
import difflib
import random
import resource
import time


def _edit(original: str, mutant: str) -> str:
    lines = difflib.unified_diff(original.splitlines(), mutant.splitlines(), lineterm="", n=0)
    changed = [x for x in lines if x[:1] in "+-" and x[:3] not in ("+++", "---")]
    return " / ".join(x[:120] for x in changed[:4])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mutants", type=int, default=30_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--load-only", action="store_true", help="Do not run accepted mutants.")
    parser.add_argument("--seconds", type=float, default=10.0, help="Time one mutant may take.")
    args = parser.parse_args()

    from ndpsim.fuzz import kernel_texts, mutate, try_mutant
    from ndpsim.workloads import run_workload

    run_workload("vadd", "tiny")  # warm numba's caches so the first mutants are not timed out
    texts = kernel_texts()
    modules = sorted(texts)
    rng = random.Random(args.seed)
    counts: collections.Counter = collections.Counter()
    crashes: collections.Counter = collections.Counter()
    examples: dict[str, tuple[str, str, str]] = {}
    growth: list[tuple[float, str, str]] = []  # (MB the peak grew by, module, edit)
    peak_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    start = time.perf_counter()
    for i in range(args.mutants):
        module = rng.choice(modules)
        text = mutate(texts[module], rng)
        outcome = try_mutant(text, module, run=not args.load_only, seconds=args.seconds)
        counts[outcome.kind] += 1
        counts[f"{outcome.kind} at {outcome.stage}"] += 1
        if outcome.kind in ("crashed", "hung"):
            crashes[outcome.signature] += 1
            examples.setdefault(outcome.signature, (module, outcome.detail,
                                                    _edit(texts[module], text)))  # fmt: skip
        now_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        if now_kb - peak_kb > 64 << 10:  # this mutant raised the peak by more than 64 MB
            growth.append(((now_kb - peak_kb) / 1024, module, _edit(texts[module], text)))
        peak_kb = now_kb
        if (i + 1) % 5000 == 0:
            print(f"  {i + 1:,} mutants, {time.perf_counter() - start:,.0f} s", flush=True)
    seconds = time.perf_counter() - start
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

    print(f"{args.mutants:,} mutants (seed {args.seed}) in {seconds:,.0f} s, "
          f"{1e3 * seconds / args.mutants:.1f} ms each; peak RSS {peak_mb:,.0f} MB")  # fmt: skip
    for kind in ("accepted", "rejected", "crashed", "hung"):
        stages = ", ".join(f"{counts[f'{kind} at {s}']:,} at {s}" for s in ("load", "run")
                           if counts[f"{kind} at {s}"])  # fmt: skip
        print(f"  {kind:9s} {counts[kind]:>7,}" + (f"  ({stages})" if stages else ""))
    for mb, module, edit in sorted(growth, reverse=True)[:3]:
        print(f"  raised the peak by {mb:,.0f} MB: [{module}] {edit}")
    if crashes:
        print("distinct crash signatures:")
        for sig, n in crashes.most_common():
            module, detail, edit = examples[sig]
            print(f"  {n:>6,}  {sig}  [{module}] {detail[:160]!r}\n          edit: {edit}")


if __name__ == "__main__":
    main()
