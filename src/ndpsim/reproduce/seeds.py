"""An experiment repeated with several seeds: how far its figures move with what a seed draws
(the inputs, the random page placement, the random offload choices), so that a difference
between two systems can be told from that noise.

Each seed's results document is kept whole; this module only sets their figures side by side,
averaging over the seeds the way the averages over workloads do (:mod:`ndpsim.reproduce.averages`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ndpsim.reproduce import averages as means
from ndpsim.reproduce.report import Rows

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


def seed_rows(summary: dict[str, dict[str, Any]], metric: str,
              paper: Mapping[str, float] | None = None) -> tuple[list[str], Rows]:  # fmt: skip
    """A table of ``metric`` averaged over the workloads: a row per variant, a column per seed,
    then the mean, min and max over the seeds and the paper's average when given."""
    seeds = sorted({s for by in summary.values() if metric in by for s in by[metric]["per_seed"]})
    columns = [*(f"seed {s}" for s in seeds), "mean", "min", "max"]
    if paper:
        columns.append("paper")
    rows: Rows = []
    for v, by in summary.items():
        if metric not in by:
            continue
        m = by[metric]
        values = [*(m["per_seed"].get(s) for s in seeds), m["mean"], m["min"], m["max"]]
        if paper:
            values.append(paper.get(v))
        rows.append((v, values))
    return columns, rows


def write_png(path, title: str, summary: dict[str, dict[str, Any]], metric: str) -> None:
    """Grouped bars of ``metric`` per workload and on average, one bar per variant at its mean
    over the seeds, a whisker from the lowest seed to the highest."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    shown = {v: by[metric] for v, by in summary.items() if metric in by}
    groups = list(next(iter(shown.values()))["workloads"]) if shown else []
    fig, ax = plt.subplots(figsize=(max(6, 0.6 * (len(groups) + 1) * max(1, len(shown))), 3.6))
    width = 0.8 / max(1, len(shown))
    for k, (v, m) in enumerate(shown.items()):
        entries = [m["workloads"][w] for w in groups] + [m]
        xs = [g + (k - (len(shown) - 1) / 2) * width for g in range(len(entries))]
        heights = [e["mean"] for e in entries]
        below = [e["mean"] - e["min"] for e in entries]
        above = [e["max"] - e["mean"] for e in entries]
        ax.bar(xs, heights, width, yerr=[below, above], capsize=2, label=v)
    ax.set_xticks(range(len(groups) + 1), [*(w.upper() for w in groups), "average"])
    ax.axhline(1.0, color="gray", linewidth=0.6)
    ax.set_title(title, fontsize=9)
    ax.legend(fontsize=7, ncol=min(len(shown), 5))
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


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


__all__ = ["METRICS", "across_seeds", "document", "seed_rows", "write_png"]
