"""Averaging an experiment's per-workload metrics into one figure per variant.

Speedups are ratios, so their average is the geometric mean; every other metric (traffic,
energy, fractions, stall cycles) is averaged arithmetically. Every reproduction says so in its
results document.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Sequence


def geomean(values: Sequence[float]) -> float:
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else float("nan")


def mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else float("nan")


def averages(per_variant: dict[str, dict[str, dict[str, float]]],
             geometric: Collection[str] = ("speedup",)) -> dict[str, dict[str, float]]:  # fmt: skip
    """Per variant, the mean of every metric over the workloads that have it: geometric for the
    metrics named in ``geometric``, arithmetic for the rest."""
    out = {}
    for variant, by_workload in per_variant.items():
        keys = sorted({k for m in by_workload.values() for k in m})
        out[variant] = {
            k: (geomean if k in geometric else mean)([m[k] for m in by_workload.values() if k in m])
            for k in keys
        }
    return out


__all__ = ["averages", "geomean", "mean"]
