"""Reproducing TOM's evaluation (Hsieh et al., ISCA 2016, sec. 6): Figures 2, 8, 9 and 10.

Every workload runs on the baseline GPU (68 SMs) and on the NDP system (64 GPU SMs + one SM per
stack) with and without dynamic offload control (``ctrl`` / ``no-ctrl``) and with the baseline or
the learned data mapping (``bmap`` / ``tmap``), plus Figure 2's ideal NDP system. Each figure is
a table of per-workload values normalized to the baseline, our average beside the paper's.

Averages: speedups by geometric mean (the mean of ratios), traffic, energy and fractions by
arithmetic mean.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ndpsim.errors import ConfigError
from ndpsim.reproduce import averages as means
from ndpsim.reproduce.runner import Variant, provenance

WORKLOADS = ("bp", "bfs", "km", "cfd", "hw", "lib", "ray", "fwt", "sp", "rd")
VARIANT_NAMES = ("baseline", "no-ctrl-bmap", "no-ctrl-tmap", "ctrl-bmap", "ctrl-tmap", "ideal")

#: The GPU-to-stack link bandwidth every bandwidth switch is a multiple of (TOM Table 1).
LINK_GBPS = 80.0

#: The paper's averages (text of sec. 2 and 6; per-figure bars are not given as numbers).
#: ctrl-bmap's speedup is derived from "tmap provides an additional 10% over bmap".
# fmt: off
PAPER = {
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
#: Per-workload figures the text states (sec. 6.1).
PAPER_WORKLOADS = {
    "km": {"ctrl-bmap": 1.03, "ctrl-tmap": 1.39},
    "rd": {"ctrl-bmap": 1.51, "ctrl-tmap": 1.76},
    "bfs": {"ctrl-bmap": 1.29, "ctrl-tmap": 1.21},
    "lib": {"no-ctrl-tmap": 0.36, "ctrl-tmap": 1.52},
}


def variants(warp_scale: int = 1, internal: float = 2.0, cross: float = 0.5,
             names: Iterable[str] | None = None) -> list[Variant]:  # fmt: skip
    """The six systems, with the sensitivity switches applied: stack-SM warp capacity
    (x48 warps), internal stack bandwidth and cross-stack link bandwidth (x the 80 GB/s GPU
    link). The internal bandwidth applies to the baseline too: it is a property of the stacks.
    ``names`` selects a subset (in the order of :data:`VARIANT_NAMES`)."""
    wanted = set(VARIANT_NAMES if names is None else names)
    unknown = wanted - set(VARIANT_NAMES)
    if unknown:
        raise ConfigError(f"unknown TOM variant(s) {', '.join(sorted(unknown))}; expected "
                          f"some of {', '.join(VARIANT_NAMES)}")  # fmt: skip
    memory = {"memory": {"internal_gbps": internal * LINK_GBPS}}
    ndp = {**memory, "links": {"cube_to_cube_gbps": cross * LINK_GBPS}}

    def nd(control: bool, mapping: str, ideal: bool = False) -> dict[str, Any]:
        return {**ndp, "ndp": {"control": control, "mapping": mapping, "ideal": ideal,
                               "stack_warps": 48 * warp_scale}}  # fmt: skip

    every = [
        Variant("baseline", "tom-baseline", memory),
        Variant("no-ctrl-bmap", "tom-ndp", nd(False, "baseline")),
        Variant("no-ctrl-tmap", "tom-ndp", nd(False, "learned")),
        Variant("ctrl-bmap", "tom-ndp", nd(True, "baseline")),
        Variant("ctrl-tmap", "tom-ndp", nd(True, "learned")),
        Variant("ideal", "tom-ndp", nd(False, "baseline", ideal=True)),
    ]
    return [v for v in every if v.name in wanted]


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


def document(runs, size: str, seed: int, switches: dict[str, float]) -> dict[str, Any]:
    """The ``--json`` document: each variant's per-workload metrics at the top level (variant
    names as keys), their means under ``average``, and the paper's figures under ``paper``."""
    per_variant = metrics(runs)
    doc: dict[str, Any] = {name: per_variant[name] for name in VARIANT_NAMES
                           if name in per_variant}  # fmt: skip
    doc["average"] = means.averages(per_variant)
    doc["mean"] = means.which_mean("workloads")
    doc["paper"] = {"average": PAPER, "workloads": PAPER_WORKLOADS}
    doc["meta"] = {"experiment": "tom", "size": size, "seed": seed,
                   "workloads": list(runs), "switches": switches,
                   **provenance(runs)}  # fmt: skip
    doc["mapping"] = {
        w: {**by["ctrl-tmap"]["summary"]["offload"]["mapping"],
            "learning_share": per_variant["ctrl-tmap"][w].get("learning_share", 0.0)}
        for w, by in runs.items() if "ctrl-tmap" in by
    }  # fmt: skip
    return doc


#: The figures: (file stem, title, metric per variant, variants shown, stacked parts)
FIGURES = (
    ("fig2_ideal_speedup", "Figure 2: ideal NDP speedup", "speedup", ("ideal",), ()),
    ("fig8_speedup", "Figure 8: speedup over the baseline GPU", "speedup",
     VARIANT_NAMES[1:5], ()),
    ("fig9_traffic", "Figure 9: off-chip traffic (normalized to the baseline)", "traffic",
     VARIANT_NAMES[:5], ("traffic_tx", "traffic_rx", "traffic_memory_to_memory")),
    ("fig10_energy", "Figure 10: energy (normalized to the baseline)", "energy",
     VARIANT_NAMES[:5], ("energy_sm", "energy_links", "energy_dram")),
    ("offloaded_instructions", "Fraction of instructions offloaded",
     "offloaded_instruction_fraction", VARIANT_NAMES[1:6], ()),
    ("colocation", "Co-location probability (instances within one stack)", "colocation",
     VARIANT_NAMES[1:5], ()),
)  # fmt: skip


__all__ = ["FIGURES", "PAPER", "VARIANT_NAMES", "WORKLOADS", "document", "metrics",
           "variants"]  # fmt: skip
