"""Reproducing MPU's evaluation (Xie et al., MICRO 2021, sec. VI): Figures 8, 9 and 11-15.

Every workload of Table I runs on the V100-like GPU (``baseline``, the ``v100`` preset) and on
MPU (the ``mpu`` preset: the location annotation, near-bank shared memory, four row buffers per
bank), and on MPU's variants: far-bank shared memory (Fig. 11), one and two row buffers per bank
(Fig. 12), every instruction on the base die (PonB, Fig. 13) and the other instruction location
policies (Fig. 15: the hardware's default, all near, all far). Fig. 14's register split is the
location annotation's, from the PTX alone.

Averages: speedups by geometric mean, every other metric (the energy reduction and the
speedups of MPU over one of its variants among them) by arithmetic mean; the paper does not say
which mean it takes.
"""

from __future__ import annotations

from typing import Any

from ndpsim.analysis import mpu as locations
from ndpsim.experiments.paper import Figure, Paper, PaperNumbers, Table, register
from ndpsim.experiments.results import results_document
from ndpsim.experiments.runner import Variant
from ndpsim.workloads import get_workload, kernel_module

#: Table I in ndpsim's suite, each kernel laid out as the authors' benchmarks lay theirs out.
WORKLOADS = ("blur", "conv", "gemv", "hist", "kmeans", "knn", "ttrans", "maxp", "nw", "upsamp",
             "axpy", "pr")  # fmt: skip
PAPER_NAMES = {"blur": "BLUR", "conv": "CONV", "gemv": "GEMV", "hist": "HIST",
               "kmeans": "KMEANS", "knn": "KNN", "ttrans": "TTRANS", "maxp": "MAXP", "nw": "NW",
               "upsamp": "UPSAMP", "axpy": "AXPY", "pr": "PR"}  # fmt: skip
POLICIES = ("hw-default", "all-near", "all-far")
VARIANT_NAMES = ("baseline", "mpu", "remote-cache", "far-smem", "rb-1", "rb-2", "ponb",
                 *POLICIES)  # fmt: skip
#: MPU-Sim's read-only cache of remote loads in each core's network interface (its default
#: configuration: 32 KB), which the paper does not describe ("MPU has no hardware cache").
MPU_SIM_REMOTE_CACHE_BYTES = 32768

#: The paper's averages (sec. VI-B to VI-D; its figures' bars are not given as numbers). The
#: abstract says 3.46x, sec. VI-B 3.45x and Fig. 15 3.45x with the annotation: 3.46 is taken.
# fmt: off
PAPER_AVERAGES = {
    "speedup": {"mpu": 3.46, "hw-default": 1.92, "all-near": 1.22, "all-far": 1.78},
    "energy_reduction": {"mpu": 2.57},
    "speedup_over_far_smem": {"mpu": 1.48},
    "tsv_traffic_improvement": {"mpu": 1.89},
    "speedup_over_one_row_buffer": {"rb-2": 1.10, "mpu": 1.25},
    "row_buffer_miss_rate": {"rb-1": 0.156, "rb-2": 0.092, "mpu": 0.0545},
    "speedup_over_ponb": {"mpu": 1.46},
}
# fmt: on
PAPER_NOTES = (
    "sec. VI-B: MPU provides 4.13x the GPU's memory bandwidth (measured); the speedup follows "
    "each workload's memory intensity, KMEANS above it, TTRANS and UPSAMP below",
    "sec. VI-B: 92.94% of MPU's energy is computation (ALU 39.82%), data access (31.90%) and "
    "data movement (21.22%; TSV 16.79%, network 4.43%)",
    "sec. VI-C: KNN, UPSAMP and AXPY gain most from more row buffers",
    "sec. VI-C: with near-bank shared memory, HIST and NW move slightly more over the TSVs",
)


def build_variants() -> list[Variant]:
    """The V100-like GPU, MPU, and MPU with one thing changed each (``remote-cache``: the
    remote caches of the authors' simulator, which the paper does not have)."""

    def mpu(section: str, values: dict[str, Any]) -> dict[str, Any]:
        return {section: values}

    def row_buffers(n: int) -> dict[str, Any]:
        return mpu("memory", {"dram_overrides": {"organization": {"subarrays": n}}})

    return [
        Variant("baseline", "v100", {}),
        Variant("mpu", "mpu", {}),
        Variant(
            "remote-cache",
            "mpu",
            mpu("pipeline", {"remote_cache_bytes": MPU_SIM_REMOTE_CACHE_BYTES}),
        ),
        Variant("far-smem", "mpu", mpu("pipeline", {"shared_memory": "far"})),
        Variant("rb-1", "mpu", row_buffers(1)),
        Variant("rb-2", "mpu", row_buffers(2)),
        Variant("ponb", "mpu", mpu("pipeline", {"near_bank": False})),
        Variant("hw-default", "mpu", mpu("pipeline", {"locations": "hardware"})),
        Variant("all-near", "mpu", mpu("pipeline", {"locations": "all-near"})),
        Variant("all-far", "mpu", mpu("pipeline", {"locations": "all-far"})),
    ]


def metrics(runs: dict[str, dict[str, dict[str, Any]]]) -> dict[str, dict[str, dict[str, float]]]:
    """{variant: {workload: metrics}}: the speedup and the energy reduction over the GPU, the
    row-buffer miss rate, what ran near the banks and crossed the TSVs, and MPU's speedup over
    each variant that differs from it in one thing (on the variant the paper reports it for)."""
    out: dict[str, dict[str, dict[str, float]]] = {}
    for workload, by_variant in runs.items():
        base = by_variant["baseline"]
        for variant, run in by_variant.items():
            s = run["summary"]
            m = {
                "speedup": base["time_ps"] / run["time_ps"],
                "energy_reduction": base["energy_nj"]["total"] / run["energy_nj"]["total"],
                "row_buffer_miss_rate": 1.0 - s["dram_row_hit_rate"],
            }
            if "near_bank_share" in s:
                m["near_bank_share"] = s["near_bank_share"]
                m["tsv_bytes"] = s["tsv"]["bytes"]
            out.setdefault(variant, {})[workload] = m
        _relative(out, workload, by_variant)
    return out


def _relative(out, workload: str, by_variant: dict[str, dict[str, Any]]) -> None:
    """MPU over far-bank shared memory (and the TSV traffic it saves), over PonB, and each row
    buffer count over one, where both ran."""

    def time(name):
        return by_variant[name]["time_ps"]

    if "mpu" in by_variant:
        mpu = out["mpu"][workload]
        if "far-smem" in by_variant:
            mpu["speedup_over_far_smem"] = time("far-smem") / time("mpu")
            far_tsv = by_variant["far-smem"]["summary"]["tsv"]["bytes"]
            mpu["tsv_traffic_improvement"] = far_tsv / max(mpu["tsv_bytes"], 1)
        if "ponb" in by_variant:
            mpu["speedup_over_ponb"] = time("ponb") / time("mpu")
    if "rb-1" in by_variant:
        for name in ("rb-1", "rb-2", "mpu"):
            if name in by_variant:
                out[name][workload]["speedup_over_one_row_buffer"] = time("rb-1") / time(name)


def register_split(workloads) -> dict[str, dict[str, float]]:
    """Fig. 14: each workload's registers by location under the annotation (the shares of the
    annotated registers of all its kernels), from the PTX alone."""
    out = {}
    for workload in workloads:
        module = kernel_module(get_workload(workload)("tiny", 0).module_name)
        counts = {locations.NEAR: 0, locations.FAR: 0, locations.BOTH: 0}
        for function in module.kernels:
            split = locations.mpu_locations(function).split()
            for k in counts:
                counts[k] += split[k]
        total = sum(counts.values()) or 1
        out[workload] = {locations.NAMES[k]: n / total for k, n in counts.items()}
    return out


def document(runs, size: str, seed: int, switches: dict[str, Any]) -> dict[str, Any]:
    """The ``--json`` document: each variant's per-workload metrics, their means, the paper's
    numbers, and Fig. 14's register split."""
    numbers = {"average": PAPER_AVERAGES, "workloads": {}, "notes": list(PAPER_NOTES)}
    doc = results_document(PAPER, runs, metrics(runs), size, seed, switches, numbers,
                           {"paper_names": PAPER_NAMES})  # fmt: skip
    doc["register_split"] = register_split(runs)
    return doc


def tables(doc: dict[str, Any]) -> list[Table]:
    split = doc["register_split"]
    names = [locations.NAMES[k] for k in (locations.NEAR, locations.FAR, locations.BOTH)]
    rows = [(PAPER_NAMES.get(w, w), [f"{s[n]:.3f}" for n in names]) for w, s in split.items()]
    if split:
        mean = [sum(s[n] for s in split.values()) / len(split) for n in names]
        rows.append(("average", [f"{v:.3f}" for v in mean]))
    paper = locations.PAPER_SPLIT
    rows.append(("paper (average)", [f"{paper[k]:.3f}" for k in
                                     (locations.NEAR, locations.FAR, locations.BOTH)]))  # fmt: skip
    return [Table("Figure 14: registers by location (the annotation, shares)", names, rows,
                  stem="fig14_register_split")]  # fmt: skip


OVER_GPU = "over the V100-like GPU (x)"
# fmt: off
FIGURES = (
    Figure("fig8_speedup", "Figure 8: MPU's speedup over the V100-like GPU (and with MPU-Sim's "
           "remote caches)", "speedup", ("mpu", "remote-cache"), f"speedup {OVER_GPU}"),
    Figure("fig9_energy", "Figure 9: MPU's energy reduction over the V100-like GPU",
           "energy_reduction", ("mpu", "remote-cache"), f"energy reduction {OVER_GPU}"),
    Figure("fig11_shared_memory", "Figure 11: near-bank over far-bank shared memory",
           "speedup_over_far_smem", ("mpu",), "speedup over far-bank shared memory (x)"),
    Figure("fig11_tsv_traffic", "Figure 11: TSV traffic, far-bank over near-bank shared memory",
           "tsv_traffic_improvement", ("mpu",), "TSV bytes, far-bank / near-bank (x)"),
    Figure("fig12_row_buffers", "Figure 12 (1): activated row buffers per bank, speedup",
           "speedup_over_one_row_buffer", ("rb-1", "rb-2", "mpu"),
           "speedup over one row buffer (x)"),
    Figure("fig12_miss_rate", "Figure 12 (2): row-buffer miss rate", "row_buffer_miss_rate",
           ("rb-1", "rb-2", "mpu"), "row-buffer miss rate (fraction)"),
    Figure("fig13_ponb", "Figure 13: MPU over processing on the base die (PonB)",
           "speedup_over_ponb", ("mpu",), "speedup over PonB (x)"),
    Figure("fig15_policies", "Figure 15: instruction location policies", "speedup",
           ("mpu", *POLICIES), f"speedup {OVER_GPU}"),
)
# fmt: on

PAPER = register(Paper(
    name="mpu",
    citation="Xie et al., MPU: Memory-centric SIMT Processor via In-DRAM Near-bank Computing, "
    "MICRO 2021",
    summary="MPU (MICRO 2021): near-bank SIMT processors against a V100-like GPU, with their "
    "shared memory, row buffers, PonB and location policies.",
    workloads=WORKLOADS,
    variant_names=VARIANT_NAMES,
    build_variants=build_variants,
    figures=FIGURES,
    numbers=PaperNumbers(averages=PAPER_AVERAGES, workloads={}, notes=PAPER_NOTES),
    metrics=metrics,
    document=document,
    tables=tables,
    workload_names=PAPER_NAMES,
))  # fmt: skip


__all__ = ["FIGURES", "PAPER", "PAPER_AVERAGES", "PAPER_NAMES", "VARIANT_NAMES", "WORKLOADS",
           "build_variants", "document", "metrics", "register_split", "tables"]  # fmt: skip
