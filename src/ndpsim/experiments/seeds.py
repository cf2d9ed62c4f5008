"""An experiment repeated with several seeds: how far its figures move with what a seed draws
(the inputs, the random page placement, the random offload choices), so that a difference
between two systems can be told from that noise.

Each seed's results document is kept whole; this module only sets their figures side by side,
averaging over the seeds the way the averages over workloads do
(:mod:`ndpsim.experiments.averages`); :mod:`ndpsim.reports` shows them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ndpsim.experiments import averages as means

#: The figures compared across seeds: those every reproduction normalizes to its baseline.
METRICS = ("speedup", "energy")


def _spread(per_seed: dict[int, float], metric: str) -> dict[str, Any]:
    values = list(per_seed.values())
    return {"per_seed": per_seed, "mean": means.mean_of(metric, values), "min": min(values),
            "max": max(values)}  # fmt: skip


def across_seeds(docs: Mapping[int, dict[str, Any]],
                 metrics: Sequence[str] = METRICS) -> dict[str, dict[str, Any]]:  # fmt: skip
    """Per variant and metric, the average over the workloads in each seed's document with
    their mean, min and max over the seeds, and the same per workload: ``{variant: {metric:
    {"per_seed": {seed: x}, "mean", "min", "max", "workloads": {workload: {...}}}}}``. Only
    variants and workloads every seed ran are compared."""
    if not docs:
        raise ValueError("no seeds to compare")
    first = next(iter(docs.values()))
    variants = [v for v in first["average"] if all(v in d["average"] for d in docs.values())]
    workloads = [w for w in first["meta"]["workloads"]
                 if all(w in d["meta"]["workloads"] for d in docs.values())]  # fmt: skip
    out: dict[str, dict[str, Any]] = {}
    for v in variants:
        for metric in metrics:
            if not all(metric in d["average"][v] for d in docs.values()):
                continue
            entry = _spread({s: d["average"][v][metric] for s, d in docs.items()}, metric)
            entry["workloads"] = {
                w: _spread({s: d[v][w][metric] for s, d in docs.items()}, metric)
                for w in workloads
                if all(metric in d.get(v, {}).get(w, {}) for d in docs.values())
            }
            out.setdefault(v, {})[metric] = entry
    return out


def document(docs: Mapping[int, dict[str, Any]], experiment: str) -> dict[str, Any]:
    """The ``--json`` document of a run over several seeds: the comparison under
    ``across_seeds``, every seed's whole document under ``seeds``."""
    first = next(iter(docs.values()))["meta"]
    meta = {k: first[k] for k in ("size", "workloads", "variants", "switches") if k in first}
    return {
        "across_seeds": across_seeds(docs),
        "mean": means.which_mean("workloads, then over seeds"),
        "meta": {"experiment": experiment, "seeds": list(docs), **meta},
        "seeds": {str(s): d for s, d in docs.items()},
    }


__all__ = ["METRICS", "across_seeds", "document"]
