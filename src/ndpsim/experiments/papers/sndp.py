"""Reproducing SNDP's evaluation (Kim et al., SC 2017, sec. 6-7): Figures 7, 8, 9 and 10.

Every workload runs on the baseline GPU (64 SMs), on a GPU with 8 more SMs
(``baseline-morecore``) and on the NDP system (64 SMs + one NSU per HMC) with each offload
decision: every instance (``naive``), a static random ratio (``ratio-0.2`` .. ``ratio-1.0``),
Algorithm 1's dynamic ratio (``dyn``) and the dynamic ratio with the cache-locality-aware
benefit (``dyn-cache``). Each figure is a table of per-workload values normalized to the
baseline, our average beside the paper's.

Averages: speedups by geometric mean (the mean of ratios), every other metric (no-issue cycles,
traffic, energy, fractions) by arithmetic mean.
"""

from __future__ import annotations

from typing import Any

from ndpsim.experiments.paper import (
    Claim,
    Figure,
    Paper,
    PaperNumbers,
    Rows,
    Study,
    Switch,
    Table,
    register,
)
from ndpsim.experiments.papers import sndp_target
from ndpsim.experiments.results import results_document
from ndpsim.experiments.runner import Variant

#: SNDP's ten workloads (Table 1); ``spmv`` is our MiniFE (its kernel is a sparse mat-vec).
WORKLOADS = ("bp", "bfs", "bicg", "fwt", "km", "spmv", "sp", "stn", "stcl", "vadd")
#: The paper's names, for tables and plots.
PAPER_NAMES = {"bp": "BPROP", "bfs": "BFS", "bicg": "BICG", "fwt": "FWT", "km": "KMN",
               "spmv": "MiniFE", "sp": "SP", "stn": "STN", "stcl": "STCL",
               "vadd": "VADD"}  # fmt: skip
RATIOS = (0.2, 0.4, 0.6, 0.8, 1.0)
RATIO_NAMES = tuple(f"ratio-{r:.1f}" for r in RATIOS)
BASELINE_NAMES = ("baseline", "baseline-morecore")
NDP_NAMES = ("naive", *RATIO_NAMES, "dyn", "dyn-cache")
VARIANT_NAMES = (*BASELINE_NAMES, *NDP_NAMES)
#: Not a system: per workload, the best of the static ratios that ran (sec. 7.1 compares the
#: dynamic ratio with it).
BEST_STATIC = "best-static"

#: The paper's averages (sec. 6, 7.2-7.4; the figures' bars are not given as numbers). Speedups
#: are "x% on average" read as 1 + x; the paper does not say which mean it takes.
# fmt: off
PAPER_AVERAGES = {
    "speedup": {"naive": 0.48, "dyn": 1.149, "dyn-cache": 1.179},
    "energy": {"dyn": 0.925, "dyn-cache": 0.914},
}
#: With the NSU at 175 MHz (sec. 7.6): the only average given, for the dynamic ratio with
#: cache-locality awareness.
PAPER_AVERAGES_175MHZ = {"speedup": {"dyn-cache": 1.141}}
#: Per-workload figures the text states: {metric: {workload: {variant: value}}}.
PAPER_WORKLOADS = {
    "speedup": {
        "km": {"baseline-morecore": 1.257, "dyn": 1.668, BEST_STATIC: 1.636},  # sec. 6, 7.1-2
        "stn": {"naive": 0.14, "dyn": 0.83},                                   # sec. 6, 7.2
        "bfs": {"ratio-0.4": 1.31},                                           # sec. 7.1
        # sec. 7.2: dyn 1.249, "9% lower than the best static ratio" (read as 1.249 / 0.91)
        "vadd": {"dyn": 1.249, BEST_STATIC: 1.249 / 0.91},
    },
    "energy": {"km": {"dyn": 0.624}},    # sec. 7.4: "up to 37.6% for KMN ... with NDP(Dyn)"
    "l2_hit_rate": {"stn": {"baseline": 0.45}},  # sec. 7.1: STN's L2 read hit rate
}
PAPER_WORKLOADS_175MHZ = {"speedup": {"km": {"dyn-cache": 1.677}}}
#: What the text says without a number we can put in a column.
PAPER_NOTES = (
    "sec. 6: Baseline_MoreCore gains less than 3% on every workload except KMN (+25.7%)",
    "sec. 6: NaiveNDP slows every workload down (up to 86% for STN, 52% on average)",
    "sec. 6 / Fig. 8: with NaiveNDP warp-idle cycles grow (warps wait for offload acks)",
    "sec. 7.1: BPROP, BICG, STN and STCL only lose with static ratios 0.2-1.0; BICG gains "
    "11.5% at ratio 0.15; no single static ratio is best for all workloads",
    "sec. 7.4: Baseline_MoreCore uses nearly the same energy as the baseline",
    "sec. 7.3: with a 2x GPU the dynamic, cache-aware system still gains 11.6% on average",
)
# fmt: on


def build_variants(nsu_mhz: int, target: str) -> list[Variant]:
    """The systems, with the NSU clock and the target-NSU policy applied to every NDP system."""

    def ndp(**decision: Any) -> dict[str, Any]:
        return {"ndp": {**decision, "nsu_clock_ghz": nsu_mhz / 1000, "target": target}}

    return [
        Variant("baseline", "sndp-baseline", {}),
        Variant("baseline-morecore", "sndp-baseline", {"sm": {"count": 72}}),
        Variant("naive", "sndp-ndp", ndp(decision="always")),
        *(Variant(name, "sndp-ndp", ndp(decision="ratio", ratio=r))
          for name, r in zip(RATIO_NAMES, RATIOS, strict=True)),
        Variant("dyn", "sndp-ndp", ndp(decision="dynamic")),
        Variant("dyn-cache", "sndp-ndp", ndp(decision="dynamic", cache_aware=True)),
    ]  # fmt: skip


# ------------------------------------------------------------------ one run's raw quantities
def _link_bytes(summary: dict, channel: str) -> int:
    return int(summary.get("links", {}).get(channel, {}).get("bytes", 0))


def _no_issue(summary: dict) -> dict[str, float]:
    stalls = summary.get("stall_breakdown", {})
    return {k: float(stalls.get(k, 0)) for k in ("unit_busy", "dependency", "idle")}


#: Energy components grouped as in the figures: the GPU's SMs with their caches and on-chip
#: network, the NSUs (when the energy model reports them apart), the off-chip links and DRAM.
ENERGY_GROUPS = {"sm": ("sm", "caches", "crossbar"), "nsu": ("nsu",), "links": ("links",),
                 "dram": ("dram",)}  # fmt: skip
ENERGY_PARTS = ("energy_sm", "energy_nsu", "energy_links", "energy_dram", "energy_other")


def _energy_groups(energy: dict[str, float]) -> dict[str, float]:
    """Energy by figure group; components the groups do not name go to ``other``, so the
    groups always add up to the total."""
    known = {c for parts in ENERGY_GROUPS.values() for c in parts}
    out = {g: sum(energy[c] for c in parts if c in energy)
           for g, parts in ENERGY_GROUPS.items() if any(c in energy for c in parts)}  # fmt: skip
    other = sum(v for k, v in energy.items() if k not in known and k != "total")
    if other:
        out["other"] = other
    return out


def credit_peaks(credits: dict[str, Any]) -> dict[str, float]:
    """Per NSU buffer kind, the most ever reserved as a fraction of its capacity, from the
    run summary's ``credits`` record (``{kind: {"most_reserved", "capacity"}, "overdrawn"}``)."""
    return {kind: record["most_reserved"] / record["capacity"]
            for kind, record in credits.items() if kind != "overdrawn"}  # fmt: skip


def _offload_metrics(offload: dict[str, Any]) -> dict[str, float]:
    m: dict[str, float] = {}
    if "offloaded_fraction" in offload:
        m["offloaded_instance_fraction"] = offload["offloaded_fraction"]
    if "offloaded_instruction_fraction" in offload:
        m["offloaded_instruction_fraction"] = offload["offloaded_instruction_fraction"]
    if "rdf_hit_rate" in offload:  # read-and-forward packets answered by the GPU's caches
        m["rdf_hit_rate"] = offload["rdf_hit_rate"]
    if "ratio_mean" in offload:  # the run's time-weighted mean; its timeline is in time order
        m["offload_ratio_mean"] = offload["ratio_mean"]
        m["offload_ratio_final"] = float(offload["ratio_timeline"][-1][1])
    credits = offload.get("credits")
    if credits is not None:
        m["credits_overdrawn"] = float(credits.get("overdrawn", 0))
        for kind, fraction in credit_peaks(credits).items():
            m[f"credits_peak_{kind}"] = fraction
    return m


# ------------------------------------------------------------------------------ the metrics
def metrics(runs: dict[str, dict[str, dict[str, Any]]]) -> dict[str, dict[str, dict[str, float]]]:
    """{variant: {workload: metrics}} from {workload: {variant: run}}: speedup; no-issue cycles
    by cause, off-chip traffic by channel and energy by group (each normalized to the
    baseline's total); memory-network megabytes; the L2 hit rate; and for NDP systems the
    fraction offloaded, the offload ratio over time and the NSU buffer credits used."""
    out: dict[str, dict[str, dict[str, float]]] = {}
    for workload, by_variant in runs.items():
        base = by_variant["baseline"]
        bs = base["summary"]
        base_traffic = sum(_link_bytes(bs, c) for c in
                           ("gpu_to_memory", "memory_to_gpu", "memory_to_memory")) or 1  # fmt: skip
        base_stall = sum(_no_issue(bs).values()) or 1.0
        base_energy = base["energy_nj"].get("total") or 1.0
        for variant, run in by_variant.items():
            s = run["summary"]
            tx, rx = _link_bytes(s, "gpu_to_memory"), _link_bytes(s, "memory_to_gpu")
            m2m = _link_bytes(s, "memory_to_memory")
            stalls = _no_issue(s)
            energy = run["energy_nj"]
            m = {
                "speedup": base["time_ps"] / run["time_ps"],
                "stall": sum(stalls.values()) / base_stall,
                **{f"stall_{k}": v / base_stall for k, v in stalls.items()},
                "traffic": (tx + rx + m2m) / base_traffic,
                "traffic_gpu": (tx + rx) / base_traffic,
                "traffic_tx": tx / base_traffic,
                "traffic_rx": rx / base_traffic,
                "traffic_memory_to_memory": m2m / base_traffic,
                "memory_to_memory_mb": m2m / 1e6,
                "energy": energy.get("total", 0.0) / base_energy,
                **{f"energy_{g}": v / base_energy for g, v in _energy_groups(energy).items()},
            }
            if "l2_hit_rate" in s:
                m["l2_hit_rate"] = s["l2_hit_rate"]
            if s.get("offload"):
                m.update(_offload_metrics(s["offload"]))
            out.setdefault(variant, {})[workload] = m
    best = best_static(out)
    if best:
        out[BEST_STATIC] = best
    return out


def best_static(per_variant: dict[str, dict[str, dict[str, float]]]) -> dict[str, dict]:
    """Per workload, the fastest static ratio that ran: {workload: {speedup, best_ratio}}."""
    out: dict[str, dict[str, float]] = {}
    for name, ratio in zip(RATIO_NAMES, RATIOS, strict=True):
        for workload, m in per_variant.get(name, {}).items():
            if workload not in out or m["speedup"] > out[workload]["speedup"]:
                out[workload] = {"speedup": m["speedup"], "best_ratio": ratio}
    return out


def document(runs, size: str, seed: int, switches: dict[str, Any]) -> dict[str, Any]:
    """The ``--json`` document: each variant's per-workload metrics at the top level (variant
    names as keys, plus ``best-static``), their means under ``average``, the paper's figures
    under ``paper``; the dynamic ratio over time and the raw credit records beside them."""
    per_variant = metrics(runs)
    paper = PAPER.numbers_for(switches)
    numbers = {"average": paper.averages, "workloads": paper.workloads,
               "notes": list(paper.notes), "nsu_mhz": switches.get("nsu_mhz", 350)}  # fmt: skip
    meta = {"paper_names": PAPER_NAMES,
            "variants": [n for n in VARIANT_NAMES if n in per_variant]}  # fmt: skip
    doc = results_document(PAPER, runs, per_variant, size, seed, switches, numbers, meta)
    offloads = {(w, v): r["summary"].get("offload") or {}
                for w, by in runs.items() for v, r in by.items()}  # fmt: skip
    doc["ratio_timeline"] = _by_variant(offloads, "ratio_timeline")
    doc["credits"] = _by_variant(offloads, "credits")
    return doc


def _by_variant(offloads: dict[tuple[str, str], dict], key: str) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for (workload, variant), offload in offloads.items():
        if key in offload:
            out.setdefault(variant, {})[workload] = offload[key]
    return out


# ------------------------------------------------------------------------ tables beyond figures
def credit_rows(doc: dict[str, Any]) -> tuple[list[str], Rows]:
    """NSU buffer credits per NDP system: the largest fraction of each buffer ever reserved
    (over the workloads) and the overdrawn reservations summed (must be 0)."""
    kinds = sorted({k.removeprefix("credits_peak_") for v in NDP_NAMES
                    for m in doc.get(v, {}).values() for k in m
                    if k.startswith("credits_peak_")})  # fmt: skip
    rows: Rows = []
    for v in NDP_NAMES:
        by_workload = doc.get(v, {})
        if not any("credits_overdrawn" in m for m in by_workload.values()):
            continue
        peaks = [max((m[f"credits_peak_{k}"] for m in by_workload.values()
                      if f"credits_peak_{k}" in m), default=None) for k in kinds]  # fmt: skip
        overdrawn = sum(m.get("credits_overdrawn", 0.0) for m in by_workload.values())
        rows.append((v, [*peaks, overdrawn]))
    return [*(f"{k} (max used)" for k in kinds), "overdrawn"], rows


def tables(doc: dict[str, Any]) -> list[Table]:
    """The NSU buffer credits, when an NDP system ran."""
    columns, rows = credit_rows(doc)
    if not rows:
        return []
    title = "NSU buffer credits: largest fraction reserved, overdrawn reservations"
    return [Table(title, columns, rows, "system")]


def claims(doc: dict[str, Any]) -> list[Claim]:
    """The text's statements about every workload: Baseline_MoreCore gains less than 3% but
    on KMN, NaiveNDP slows every workload down."""
    out: list[Claim] = []
    morecore = [m["speedup"] for w, m in doc.get("baseline-morecore", {}).items() if w != "km"]
    if morecore:
        out.append(("baseline-morecore: best speedup but KMN's (paper: below)",
                    max(morecore), 1.03))  # fmt: skip
    naive = [m["speedup"] for m in doc.get("naive", {}).values()]
    if naive:
        out.append(("naive: best speedup (paper: every workload below)", max(naive), 1.0))
    return out


NORMALIZED = "normalized to the baseline"
# fmt: off
FIGURES = (
    Figure("fig7_speedup", "Figure 7: naive NDP speedup over the baseline (64 SMs)", "speedup",
           ("baseline-morecore", "naive"), "speedup over the baseline (x)"),
    Figure("fig8_no_issue", "Figure 8: GPU no-issue cycles (normalized to the baseline's total)",
           "stall", ("baseline", "baseline-morecore", "naive"),
           "no-issue cycles (normalized to the baseline's total)",
           ("stall_unit_busy", "stall_dependency", "stall_idle")),
    Figure("fig9_speedup", "Figure 9: speedup of static and dynamic offload ratios", "speedup",
           (*RATIO_NAMES, BEST_STATIC, "dyn", "dyn-cache"), "speedup over the baseline (x)"),
    Figure("fig10_energy", "Figure 10: energy (normalized to the baseline)", "energy",
           ("baseline", "baseline-morecore", "naive", "dyn", "dyn-cache"),
           f"energy ({NORMALIZED})", ENERGY_PARTS),
    Figure("offloaded_instances", "Fraction of offload block instances offloaded",
           "offloaded_instance_fraction", NDP_NAMES, "block instances offloaded (fraction)"),
    Figure("offload_ratio", "Offload ratio, mean over time", "offload_ratio_mean", NDP_NAMES,
           "offload ratio (fraction offloaded)"),
    Figure("rdf_hit_rate", "Read-and-forward packets answered by the GPU's caches",
           "rdf_hit_rate", NDP_NAMES, "packets answered by GPU caches (fraction)"),
    Figure("gpu_traffic", "GPU off-chip link traffic (normalized to the baseline's off-chip "
           "total)", "traffic_gpu", VARIANT_NAMES,
           "GPU link bytes (normalized to the baseline's off-chip total)",
           ("traffic_tx", "traffic_rx")),
    Figure("memory_network_mb", "Memory-network (hypercube) traffic in MB: data forwarded "
           "between HMCs", "memory_to_memory_mb", VARIANT_NAMES, "memory-network traffic (MB)"),
)

SWITCHES = (
    Switch("nsu_mhz", int, 350, "NSU clock of the NDP systems: 350 or 175.", choices=(350, 175),
           directory="nsu{}",
           numbers={175: PaperNumbers(PAPER_AVERAGES_175MHZ, PAPER_WORKLOADS_175MHZ,
                                      PAPER_NOTES)}),
    Switch("target", str, "first", "Target NSU: 'first' (sec. 4.1) or 'optimal' (Figure 5).",
           choices=("first", "optimal"), directory="{}"),
)
# fmt: on

PAPER = register(Paper(
    name="sndp",
    citation="Kim et al., Toward Standardized Near-Data Processing with Unrestricted Data "
    "Placement for GPUs, SC 2017",
    summary="SNDP (SC 2017): baseline GPUs vs NDP with naive, static-ratio and dynamic "
    "offloading.",
    workloads=WORKLOADS,
    workload_names=PAPER_NAMES,
    variant_names=VARIANT_NAMES,
    derived_variants=(BEST_STATIC,),
    build_variants=build_variants,
    switches=SWITCHES,
    figures=FIGURES,
    numbers=PaperNumbers(PAPER_AVERAGES, PAPER_WORKLOADS, PAPER_NOTES),
    metrics=metrics,
    document=document,
    claims=claims,
    tables=tables,
    studies=(Study("figure5", "SNDP Figure 5: target NSU study",
                   "Only the Figure 5 target-NSU study (no simulation).", sndp_target.figure5,
                   sndp_target.tables, sndp_target.figures),),
))  # fmt: skip


__all__ = ["BASELINE_NAMES", "BEST_STATIC", "ENERGY_PARTS", "FIGURES", "NDP_NAMES", "PAPER",
           "PAPER_AVERAGES", "PAPER_AVERAGES_175MHZ", "PAPER_NAMES", "PAPER_NOTES",
           "PAPER_WORKLOADS", "PAPER_WORKLOADS_175MHZ", "RATIOS", "RATIO_NAMES", "SWITCHES",
           "VARIANT_NAMES", "WORKLOADS", "best_static", "build_variants", "claims",
           "credit_peaks", "credit_rows", "document", "metrics", "tables"]  # fmt: skip
