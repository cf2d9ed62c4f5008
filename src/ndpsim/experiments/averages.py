"""Averaging an experiment's per-workload metrics into one figure per variant.

Speedups are ratios, so their average is the geometric mean; every other metric (traffic,
energy, fractions, stall cycles) is averaged arithmetically. Every reproduction says so in its
results document.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Sequence

#: Metrics that are ratios, averaged by geometric mean; all others by arithmetic mean.
GEOMETRIC = frozenset({"speedup"})


def geomean(values: Sequence[float]) -> float:
    """The geometric mean, kept within the values: the exponential of a mean of logarithms can
    round to just outside them (equal values, or values a few ulps apart)."""
    if not values:
        return float("nan")
    g = math.exp(sum(math.log(v) for v in values) / len(values))
    return min(max(g, min(values)), max(values))


def mean(values: Sequence[float]) -> float:
    """The arithmetic mean, kept within the values: a sum of equal values divided by their count
    can round one ulp outside them (0.1 three times gives 0.10000000000000002)."""
    if not values:
        return float("nan")
    return min(max(sum(values) / len(values), min(values)), max(values))


def mean_of(metric: str, values: Sequence[float],
            geometric: Collection[str] = GEOMETRIC) -> float:  # fmt: skip
    """The mean of ``metric``'s values: geometric if it is named in ``geometric``."""
    return (geomean if metric in geometric else mean)(values)


def which_mean(over: str, geometric: Collection[str] = GEOMETRIC) -> dict[str, str]:
    """Says, for a results document, which mean its averages over ``over`` take."""
    return {**{m: f"geometric mean over {over}" for m in sorted(geometric)},
            "other metrics": f"arithmetic mean over {over}"}  # fmt: skip


def averages(per_variant: dict[str, dict[str, dict[str, float]]],
             geometric: Collection[str] = GEOMETRIC) -> dict[str, dict[str, float]]:  # fmt: skip
    """Per variant, the mean of every metric over the workloads that have it: geometric for the
    metrics named in ``geometric``, arithmetic for the rest."""
    out = {}
    for variant, by_workload in per_variant.items():
        keys = sorted({k for m in by_workload.values() for k in m})
        out[variant] = {
            k: mean_of(k, [m[k] for m in by_workload.values() if k in m], geometric) for k in keys
        }
    return out


__all__ = ["GEOMETRIC", "averages", "geomean", "mean", "mean_of", "which_mean"]
