"""Reproducing TOM's evaluation (Hsieh et al., ISCA 2016, sec. 6): Figures 2, 8, 9 and 10.

Every workload runs on the baseline GPU (68 SMs) and on the NDP system (64 GPU SMs + one SM per
stack) with and without dynamic offload control (``ctrl`` / ``no-ctrl``) and with the baseline or
the learned data mapping (``bmap`` / ``tmap``), plus Figure 2's ideal NDP system. Each figure is
a table of per-workload values normalized to the baseline, our average beside the paper's.

Averages: speedups by geometric mean (the mean of ratios), traffic, energy and fractions by
arithmetic mean.
"""

from __future__ import annotations

from typing import Any

from ndpsim.experiments.paper import Figure, Paper, PaperNumbers, Switch, Table, register
from ndpsim.experiments.results import results_document
from ndpsim.experiments.runner import Variant

WORKLOADS = ("bp", "bfs", "km", "cfd", "hw", "lib", "ray", "fwt", "sp", "rd")
VARIANT_NAMES = (
    "baseline",
    "no-ctrl-bmap",
    "no-ctrl-tmap",
    "ctrl-bmap",
    "ctrl-tmap",
    "ideal",
    "ideal-unbounded",
)

#: The GPU-to-stack link bandwidth every bandwidth switch is a multiple of: TOM Table 1's 80 GB/s
#: per link, both directions together (40 GB/s TX + 40 GB/s RX). A cross-stack link of ``x``
#: times it carries ``x * 40`` GB/s each way; a stack's internal bandwidth of ``x`` times it is
#: ``x * 80`` GB/s, shared by reads and writes (sec. 5.1: 2x, and 1x in sec. 6.5).
LINK_GBPS = 80.0

#: The paper's averages (text of sec. 2 and 6; per-figure bars are not given as numbers).
#: ctrl-bmap's speedup is derived from "tmap provides an additional 10% over bmap".
# fmt: off
PAPER_AVERAGES = {
    "speedup": {"no-ctrl-bmap": 0.93, "no-ctrl-tmap": 0.97, "ctrl-bmap": 1.30 / 1.10,
                "ctrl-tmap": 1.30, "ideal": 1.58},
    "traffic": {"no-ctrl-tmap": 0.62, "ctrl-tmap": 0.87},
    "memory_to_memory": {"no-ctrl-bmap": 0.55, "no-ctrl-tmap": 0.22},
    "energy": {"no-ctrl-bmap": 1.08, "ctrl-tmap": 0.89},
    "sm_energy_share": {"baseline": 0.77, "ctrl-tmap": 0.68},
    "link_energy_share": {"baseline": 0.07, "ctrl-tmap": 0.05},
    "offloaded_instruction_fraction": {"no-ctrl-tmap": 0.464, "ctrl-tmap": 0.157},
    "colocation": {"baseline mapping": 0.38, "best consecutive bits": 0.75,
                   "learned from 0.1%": 0.72},
}
# fmt: on
#: The paper's statistics of its candidate blocks: the most live registers in an offloaded
#: block against a whole thread's (sec. 6.4), and the most candidates of a workload (sec. 6.6:
#: a table of 40 entries is "2x the maximum number of entries observed").
PAPER_CANDIDATES = {"live_registers_max": 26, "thread_live_registers_max": 49, "blocks": 20}
#: Sec. 5.3: the workloads are those whose baseline memory bandwidth utilization exceeds this.
SELECTION_UTILIZATION = 0.5
#: Per-workload speedups the text states (sec. 6.1).
PAPER_WORKLOADS = {
    "km": {"ctrl-bmap": 1.03, "ctrl-tmap": 1.39},
    "rd": {"ctrl-bmap": 1.51, "ctrl-tmap": 1.76},
    "bfs": {"ctrl-bmap": 1.29, "ctrl-tmap": 1.21},
    "lib": {"no-ctrl-tmap": 0.36, "ctrl-tmap": 1.52},
}

SWITCHES = (
    Switch("stack_warps", int, 1, "Stack-SM warp capacity, x 48 warps (the paper: 1, 2 or 4).",
           positive=True),
    Switch("internal_bw", float, 2.0, "Internal stack bandwidth, x the 80 GB/s GPU link (its "
           "two directions together; the paper: 1 or 2).", positive=True),
    Switch("cross_bw", float, 0.5, "Cross-stack link bandwidth, x the 80 GB/s GPU link (both "
           "directions; 0.5: 20 GB/s each way; the paper: 0.125 to 1).", positive=True),
)  # fmt: skip


def build_variants(stack_warps: int, internal_bw: float, cross_bw: float) -> list[Variant]:
    """The systems, with the sensitivity switches applied: stack-SM warp capacity (x48 warps),
    internal stack bandwidth and cross-stack link bandwidth (x the 80 GB/s GPU link, see
    :data:`LINK_GBPS`). The internal bandwidth applies to the baseline too: it is a property of
    the stacks."""
    memory = {"memory": {"internal_gbps": internal_bw * LINK_GBPS}}
    ndp = {**memory, "links": {"cube_to_cube_gbps": cross_bw * LINK_GBPS / 2}}  # per direction

    def nd(control: bool, mapping: str, ideal: bool = False,
           warp_limit: bool = False) -> dict[str, Any]:  # fmt: skip
        switches = {"control": control, "mapping": mapping, "ideal": ideal,
                    "warp_limit": warp_limit, "stack_warps": 48 * stack_warps}  # fmt: skip
        return {**ndp, "ndp": switches}

    return [
        Variant("baseline", "tom-baseline", memory),
        Variant("no-ctrl-bmap", "tom-ndp", nd(False, "baseline")),
        Variant("no-ctrl-tmap", "tom-ndp", nd(False, "learned")),
        Variant("ctrl-bmap", "tom-ndp", nd(True, "baseline")),
        Variant("ctrl-tmap", "tom-ndp", nd(True, "learned")),
        # Figure 2's ideal removes the costs of offloading, not the stack SMs' warp slots
        Variant("ideal", "tom-ndp", nd(False, "baseline", ideal=True, warp_limit=True)),
        Variant("ideal-unbounded", "tom-ndp", nd(False, "baseline", ideal=True)),
    ]


def _offchip(summary: dict) -> dict[str, int]:
    links = summary["links"]
    return {
        "tx": links["gpu_to_memory"]["bytes"],
        "rx": links["memory_to_gpu"]["bytes"],
        "memory_to_memory": links["memory_to_memory"]["bytes"],
    }


def metrics(runs: dict[str, dict[str, dict[str, Any]]]) -> dict[str, dict[str, dict[str, float]]]:
    """{variant: {workload: metrics}} from {workload: {variant: run}}: speedup, off-chip
    traffic by channel and energy by source (each normalized to the baseline's total), the
    fraction of instructions offloaded and the co-location probability."""
    out: dict[str, dict[str, dict[str, float]]] = {}
    for workload, by_variant in runs.items():
        base = by_variant["baseline"]
        base_traffic = sum(_offchip(base["summary"]).values()) or 1
        base_energy = base["energy_nj"]["total"] or 1.0
        for variant, run in by_variant.items():
            s = run["summary"]
            traffic = _offchip(s)
            e = run["energy_nj"]
            m = {
                "speedup": base["time_ps"] / run["time_ps"],
                "traffic": sum(traffic.values()) / base_traffic,
                **{f"traffic_{k}": v / base_traffic for k, v in traffic.items()},
                "energy": e["total"] / base_energy,
                # SMs with their caches and on-chip network (what GPUWattch reports as SM)
                "energy_sm": (e["sm"] + e["caches"] + e["crossbar"]) / base_energy,
                "energy_links": e["links"] / base_energy,
                "energy_dram": e["dram"] / base_energy,
            }
            offload = s.get("offload")
            if offload:
                m["offloaded_instruction_fraction"] = offload["offloaded_instruction_fraction"]
                m["offloaded_instance_fraction"] = offload["offloaded_fraction"]
                m["colocation"] = offload["colocation"]
                mapping = offload["mapping"]
                if "colocation_baseline" in mapping:
                    m["colocation_baseline_map"] = mapping["colocation_baseline"]
                    m["colocation_best_bits"] = mapping["colocation_best"]
                    m["colocation_learned"] = mapping["colocation_learned"]
                    # the part of the run spent learning, with the data over PCIe
                    m["learning_share"] = offload["learning_us"] * 1e6 / run["time_ps"]
            out.setdefault(variant, {})[workload] = m
    return out


def document(runs, size: str, seed: int, switches: dict[str, Any]) -> dict[str, Any]:
    """The ``--json`` document: each variant's per-workload metrics at the top level (variant
    names as keys), their means under ``average``, and the paper's figures under ``paper``;
    then the learned mappings, the candidate blocks and the baseline's link utilization."""
    per_variant = metrics(runs)
    numbers = {"average": PAPER_AVERAGES, "workloads": PAPER_WORKLOADS}
    doc = results_document(PAPER, runs, per_variant, size, seed, switches, numbers, {})
    doc["mapping"] = {
        w: {**by["ctrl-tmap"]["summary"]["offload"]["mapping"],
            "learning_share": per_variant["ctrl-tmap"][w].get("learning_share", 0.0)}
        for w, by in runs.items() if "ctrl-tmap" in by
    }  # fmt: skip
    doc["candidates"] = {w: candidates for w, by in runs.items()
                         if (candidates := _candidates(by)) is not None}  # fmt: skip
    doc["baseline_utilization"] = {w: utilization(by["baseline"]["summary"])
                                   for w, by in runs.items()}  # fmt: skip
    return doc


def _candidates(by_variant: dict[str, dict]) -> dict[str, Any] | None:
    """A workload's candidate-block statistics, as an NDP run of it reports them (every NDP
    variant runs the same blocks)."""
    for run in by_variant.values():
        offload = run["summary"].get("offload")
        if offload and "candidates" in offload:
            return offload["candidates"]
    return None


def utilization(summary: dict) -> dict[str, Any]:
    """A run's GPU-memory link utilization in each direction (TX: GPU to memory, RX: memory to
    GPU), and whether it passes sec. 5.3's selection rule (either above 50%)."""
    links = summary["links"]
    tx = links["gpu_to_memory"]["utilization"]
    rx = links["memory_to_gpu"]["utilization"]
    return {"tx": tx, "rx": rx, "selected": max(tx, rx) > SELECTION_UTILIZATION}


def tables(doc: dict[str, Any]) -> list[Table]:
    """The learned mappings, the candidate blocks and the baseline's link utilization, each
    beside the paper's statistics."""
    return [_mapping_table(doc), *_candidates_table(doc), _utilization_table(doc)]


def _mapping_table(doc: dict[str, Any]) -> Table:
    rows = [(w, [m["bits"], f"{m['colocation_baseline']:.2f}",
                 f"{m['best_bits']} ({m['colocation_best']:.2f})",
                 f"{m['colocation_learned']:.2f}", f"{m['learning_share']:.2f}"])
            for w, m in doc["mapping"].items() if "colocation_baseline" in m]  # fmt: skip
    paper = PAPER_AVERAGES["colocation"]
    rows.append(("paper (average)", ["-", f"{paper['baseline mapping']:.2f}",
                                     f"{paper['best consecutive bits']:.2f}",
                                     f"{paper['learned from 0.1%']:.2f}", "-"]))  # fmt: skip
    columns = ("stack bits", "co-location: baseline map", "best bits", "learned, all instances",
               "learning phase, share of run")  # fmt: skip
    return Table("Learned data mapping (ctrl-tmap)", columns, rows)


def _candidates_table(doc: dict[str, Any]) -> list[Table]:
    if not doc["candidates"]:
        return []
    rule = next(iter(doc["candidates"].values()))["rule"]
    rows = [(w, [str(c["blocks"]), f"{c['instructions_mean']:.0f}, {c['instructions_max']}",
                 str(c["live_registers_max"]), str(c["thread_live_registers_max"])])
            for w, c in doc["candidates"].items()]  # fmt: skip
    paper = PAPER_CANDIDATES
    rows.append(("paper (all workloads)", [f"<= {paper['blocks']}", "-",
                                           str(paper["live_registers_max"]),
                                           str(paper["thread_live_registers_max"])]))  # fmt: skip
    columns = ("blocks", "instructions (mean, max)", "live registers: block max", "thread max")
    return [Table(f"Candidate blocks ({rule} rule; sec. 6.4 and 6.6)", columns, rows)]


def _utilization_table(doc: dict[str, Any]) -> Table:
    limit = SELECTION_UTILIZATION
    rows = [(w, [f"{u['tx']:.2f}", f"{u['rx']:.2f}", "yes" if u["selected"] else "no"])
            for w, u in doc["baseline_utilization"].items()]  # fmt: skip
    title = ("Baseline GPU-memory link utilization (sec. 5.3 selects workloads above "
             f"{limit:.0%})")  # fmt: skip
    return Table(title, ("TX (GPU to memory)", "RX (memory to GPU)", f"above {limit:.0%}"), rows)


NORMALIZED = "normalized to the baseline"
# fmt: off
FIGURES = (
    Figure("fig2_ideal_speedup", "Figure 2: ideal NDP speedup", "speedup",
           ("ideal", "ideal-unbounded"), "speedup over the baseline GPU (x)"),
    Figure("fig8_speedup", "Figure 8: speedup over the baseline GPU", "speedup",
           VARIANT_NAMES[1:5], "speedup over the baseline GPU (x)"),
    Figure("fig9_traffic", "Figure 9: off-chip traffic (normalized to the baseline)", "traffic",
           VARIANT_NAMES[:5], f"off-chip bytes ({NORMALIZED})",
           ("traffic_tx", "traffic_rx", "traffic_memory_to_memory")),
    Figure("fig10_energy", "Figure 10: energy (normalized to the baseline)", "energy",
           VARIANT_NAMES[:5], f"energy ({NORMALIZED})",
           ("energy_sm", "energy_links", "energy_dram")),
    Figure("offloaded_instructions", "Fraction of instructions offloaded",
           "offloaded_instruction_fraction", VARIANT_NAMES[1:],
           "instructions offloaded (fraction)"),
    Figure("colocation", "Co-location probability (instances within one stack)", "colocation",
           VARIANT_NAMES[1:5], "co-location probability (fraction)"),
)
# fmt: on

PAPER = register(Paper(
    name="tom",
    citation="Hsieh et al., Transparent Offloading and Mapping (TOM): Enabling "
    "Programmer-Transparent Near-Data Processing in GPU Systems, ISCA 2016",
    summary="TOM (ISCA 2016): baseline GPU vs NDP with/without offload control and learned "
    "mapping.",
    workloads=WORKLOADS,
    variant_names=VARIANT_NAMES,
    build_variants=build_variants,
    switches=SWITCHES,
    figures=FIGURES,
    numbers=PaperNumbers(averages=PAPER_AVERAGES, workloads={"speedup": PAPER_WORKLOADS}),
    metrics=metrics,
    document=document,
    tables=tables,
))  # fmt: skip


__all__ = ["FIGURES", "PAPER", "PAPER_AVERAGES", "PAPER_CANDIDATES", "SELECTION_UTILIZATION",
           "SWITCHES", "VARIANT_NAMES", "WORKLOADS", "build_variants", "document", "metrics",
           "tables", "utilization"]  # fmt: skip
