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

from collections.abc import Iterable, Sequence
from typing import Any

from ndpsim.errors import ConfigError
from ndpsim.reproduce import averages as means
from ndpsim.reproduce.report import Rows
from ndpsim.reproduce.runner import Variant, provenance

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
NSU_MHZ = (350, 175)
TARGETS = ("first", "optimal")

#: The paper's averages (sec. 6, 7.2-7.4; the figures' bars are not given as numbers). Speedups
#: are "x% on average" read as 1 + x; the paper does not say which mean it takes.
# fmt: off
PAPER = {
    "speedup": {"naive": 0.48, "dyn": 1.149, "dyn-cache": 1.179},
    "energy": {"dyn": 0.925, "dyn-cache": 0.914},
}
#: With the NSU at 175 MHz (sec. 7.6): the only average given, for the dynamic ratio with
#: cache-locality awareness.
PAPER_175MHZ = {"speedup": {"dyn-cache": 1.141}}
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


def variants(nsu_mhz: int = 350, target: str = "first",
             names: Iterable[str] | None = None) -> list[Variant]:  # fmt: skip
    """The systems, with the NSU clock and the target-NSU policy applied to every NDP system;
    ``names`` selects a subset (in the order of :data:`VARIANT_NAMES`)."""
    if nsu_mhz not in NSU_MHZ:
        raise ConfigError(f"the NSU clock must be one of {NSU_MHZ} MHz, got {nsu_mhz}")
    if target not in TARGETS:
        raise ConfigError(f"the target NSU policy must be one of {TARGETS}, got {target!r}")
    wanted = set(VARIANT_NAMES if names is None else names)
    unknown = wanted - set(VARIANT_NAMES)
    if unknown:
        raise ConfigError(f"unknown SNDP variant(s) {', '.join(sorted(unknown))}; expected "
                          f"some of {', '.join(VARIANT_NAMES)}")  # fmt: skip

    def ndp(**decision: Any) -> dict[str, Any]:
        return {"ndp": {**decision, "nsu_clock_ghz": nsu_mhz / 1000, "target": target}}

    every = [
        Variant("baseline", "sndp-baseline", {}),
        Variant("baseline-morecore", "sndp-baseline", {"sm": {"count": 72}}),
        Variant("naive", "sndp-ndp", ndp(decision="always")),
        *(Variant(name, "sndp-ndp", ndp(decision="ratio", ratio=r))
          for name, r in zip(RATIO_NAMES, RATIOS, strict=True)),
        Variant("dyn", "sndp-ndp", ndp(decision="dynamic")),
        Variant("dyn-cache", "sndp-ndp", ndp(decision="dynamic", cache_aware=True)),
    ]  # fmt: skip
    return [v for v in every if v.name in wanted]


def paper_averages(nsu_mhz: int = 350) -> dict[str, dict[str, float]]:
    return PAPER if nsu_mhz == 350 else PAPER_175MHZ


def paper_workloads(nsu_mhz: int = 350) -> dict[str, dict[str, dict[str, float]]]:
    return PAPER_WORKLOADS if nsu_mhz == 350 else PAPER_WORKLOADS_175MHZ


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


def document(runs, size: str, seed: int, switches: dict[str, Any],
             figure5: dict | None = None) -> dict[str, Any]:  # fmt: skip
    """The ``--json`` document: each variant's per-workload metrics at the top level (variant
    names as keys, plus ``best-static``), their means under ``average``, the paper's figures
    under ``paper``; the dynamic ratio over time, the raw credit records and the Figure 5
    study beside them."""
    nsu_mhz = switches.get("nsu_mhz", 350)
    per_variant = metrics(runs)
    ran = [n for n in (*VARIANT_NAMES, BEST_STATIC) if n in per_variant]
    doc: dict[str, Any] = {name: per_variant[name] for name in ran}
    doc["average"] = means.averages(per_variant)
    doc["mean"] = means.which_mean("workloads")
    doc["paper"] = {"average": paper_averages(nsu_mhz), "workloads": paper_workloads(nsu_mhz),
                    "notes": list(PAPER_NOTES), "nsu_mhz": nsu_mhz}  # fmt: skip
    doc["meta"] = {"experiment": "sndp", "size": size, "seed": seed,
                   "workloads": list(runs), "paper_names": PAPER_NAMES,
                   "variants": [n for n in VARIANT_NAMES if n in per_variant],
                   "switches": switches,
                   **provenance(runs)}  # fmt: skip
    offloads = {(w, v): r["summary"].get("offload") or {}
                for w, by in runs.items() for v, r in by.items()}  # fmt: skip
    doc["ratio_timeline"] = _by_variant(offloads, "ratio_timeline")
    doc["credits"] = _by_variant(offloads, "credits")
    if figure5 is not None:
        doc["figure5"] = figure5
    return doc


def _by_variant(offloads: dict[tuple[str, str], dict], key: str) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for (workload, variant), offload in offloads.items():
        if key in offload:
            out.setdefault(variant, {})[workload] = offload[key]
    return out


# ------------------------------------------------------------------------ tables beyond rows
def split_rows(doc: dict[str, Any], variants: Sequence[str], parts: Sequence[str],
               total: str) -> Rows:  # fmt: skip
    """A stacked figure's averages: (variant, [mean of each part..., mean total])."""
    return [(v, [doc["average"].get(v, {}).get(p) for p in (*parts, total)])
            for v in variants if v in doc["average"]]  # fmt: skip


def credit_rows(doc: dict[str, Any]) -> tuple[list[str], Rows]:
    """NSU buffer credits per NDP system: the largest fraction of each buffer ever reserved
    (over the workloads) and the overdrawn reservations summed (must be 0)."""
    kinds = sorted({k.removeprefix("credits_peak_") for v in NDP_NAMES
                    for m in doc.get(v, {}).values() for k in m
                    if k.startswith("credits_peak_")})  # fmt: skip
    rows = []
    for v in NDP_NAMES:
        by_workload = doc.get(v, {})
        if not any("credits_overdrawn" in m for m in by_workload.values()):
            continue
        peaks = [max((m[f"credits_peak_{k}"] for m in by_workload.values()
                      if f"credits_peak_{k}" in m), default=None) for k in kinds]  # fmt: skip
        overdrawn = sum(m.get("credits_overdrawn", 0.0) for m in by_workload.values())
        rows.append((v, [*peaks, overdrawn]))
    return [*(f"{k} (max used)" for k in kinds), "overdrawn"], rows


def claims(doc: dict[str, Any]) -> list[tuple[str, float | None, float]]:
    """Each per-workload figure the paper states for a workload that ran, ours beside it
    (None when the variant did not run): (what, ours, paper)."""
    ran = set(doc["meta"]["workloads"])
    out = []
    for metric, by_workload in doc["paper"]["workloads"].items():
        for workload, by_variant in by_workload.items():
            if workload not in ran:
                continue
            for variant, value in by_variant.items():
                ours = doc.get(variant, {}).get(workload, {}).get(metric)
                label = f"{PAPER_NAMES.get(workload, workload)} {variant} {metric}"
                out.append((label, ours, value))
    morecore = [m["speedup"] for w, m in doc.get("baseline-morecore", {}).items() if w != "km"]
    if morecore:
        out.append(("baseline-morecore: best speedup but KMN's (paper: below)",
                    max(morecore), 1.03))  # fmt: skip
    naive = [m["speedup"] for m in doc.get("naive", {}).values()]
    if naive:
        out.append(("naive: best speedup (paper: every workload below)", max(naive), 1.0))
    return out


#: The figures: (file stem, title, metric per variant, variants shown, stacked parts)
FIGURES = (
    ("fig7_speedup", "Figure 7: naive NDP speedup over the baseline (64 SMs)", "speedup",
     ("baseline-morecore", "naive"), ()),
    ("fig8_no_issue", "Figure 8: GPU no-issue cycles (normalized to the baseline's total)",
     "stall", ("baseline", "baseline-morecore", "naive"),
     ("stall_unit_busy", "stall_dependency", "stall_idle")),
    ("fig9_speedup", "Figure 9: speedup of static and dynamic offload ratios", "speedup",
     (*RATIO_NAMES, BEST_STATIC, "dyn", "dyn-cache"), ()),
    ("fig10_energy", "Figure 10: energy (normalized to the baseline)", "energy",
     ("baseline", "baseline-morecore", "naive", "dyn", "dyn-cache"), ENERGY_PARTS),
    ("offloaded_instances", "Fraction of offload block instances offloaded",
     "offloaded_instance_fraction", NDP_NAMES, ()),
    ("offload_ratio", "Offload ratio, mean over time", "offload_ratio_mean", NDP_NAMES, ()),
    ("rdf_hit_rate", "Read-and-forward packets answered by the GPU's caches", "rdf_hit_rate",
     NDP_NAMES, ()),
    ("gpu_traffic", "GPU off-chip link traffic (normalized to the baseline's off-chip total)",
     "traffic_gpu", VARIANT_NAMES, ("traffic_tx", "traffic_rx")),
    ("memory_network_mb", "Memory-network (hypercube) traffic in MB: data forwarded between "
     "HMCs", "memory_to_memory_mb", VARIANT_NAMES, ()),
)  # fmt: skip


__all__ = ["BASELINE_NAMES", "BEST_STATIC", "ENERGY_PARTS", "FIGURES", "NDP_NAMES",
           "NSU_MHZ", "PAPER", "PAPER_175MHZ", "PAPER_NAMES", "PAPER_NOTES", "PAPER_WORKLOADS",
           "PAPER_WORKLOADS_175MHZ", "RATIOS", "RATIO_NAMES", "TARGETS", "VARIANT_NAMES",
           "WORKLOADS", "best_static", "claims", "credit_peaks", "credit_rows",
           "document", "metrics", "paper_averages", "paper_workloads", "split_rows",
           "variants"]  # fmt: skip
