"""What every paper's results document holds, and the paper's statements set beside ours.

A document has each variant's per-workload metrics under the variant's name, their averages,
which mean those take, the paper's numbers and how the runs were obtained; a paper adds its
own sections after these.
"""

from __future__ import annotations

from typing import Any

from ndpsim.experiments import averages as means
from ndpsim.experiments.paper import Claim, Metrics, Paper, Runs
from ndpsim.experiments.runner import provenance


def results_document(paper: Paper, runs: Runs, per_variant: Metrics, size: str, seed: int,
                     switches: dict[str, Any], numbers: dict[str, Any],
                     meta: dict[str, Any]) -> dict[str, Any]:  # fmt: skip
    """The sections every paper's document shares: the variants that ran (the paper's order,
    derived ones last), ``average``, ``mean``, ``paper`` (``numbers``, without the averages
    unless the runs cover exactly the paper's workloads) and ``meta`` (with the paper's own
    entries, ``meta``, after the workloads)."""
    order = (*paper.variant_names, *paper.derived_variants)
    doc: dict[str, Any] = {name: per_variant[name] for name in order if name in per_variant}
    doc["average"] = means.averages(per_variant)
    doc["mean"] = means.which_mean("workloads")
    # the paper's averages are over all its workloads: beside an average over some of them, or
    # over others, they would compare different things
    whole = sorted(runs) == sorted(paper.workloads)
    doc["paper"] = numbers if whole else {**numbers, "average": {}}
    doc["meta"] = {"experiment": paper.name, "size": size, "seed": seed,
                   "workloads": list(runs), **meta, "switches": switches,
                   **provenance(runs)}  # fmt: skip
    return doc


def claims(paper: Paper, doc: dict[str, Any]) -> list[Claim]:
    """Each per-workload number the paper gives for a workload that ran, ours beside it (None
    when its variant did not run), then the paper's statements of its own."""
    numbers = paper.numbers_for(doc["meta"]["switches"])
    ran = set(doc["meta"]["workloads"])
    out: list[Claim] = []
    for metric, by_workload in numbers.workloads.items():
        for workload, by_variant in by_workload.items():
            if workload not in ran:
                continue
            for variant, value in by_variant.items():
                ours = doc.get(variant, {}).get(workload, {}).get(metric)
                label = f"{paper.workload_names.get(workload, workload)} {variant} {metric}"
                out.append((label, ours, value))
    return [*out, *(paper.claims(doc) if paper.claims else [])]


__all__ = ["claims", "results_document"]
