"""Energy of a run from its event counts.

Energy is counted, not simulated: every component counts its events (instructions by class,
cache hits and misses, bytes on each link, DRAM activations, accesses and refreshes), and this
module multiplies them by per-event energies from a table (``ndpsim/presets/energy``). Idle links
and SM leakage are charged for the run's duration. The result is a breakdown in nanojoules by
component (SMs, caches, crossbar, links, DRAM), the split TOM's Figure 10 and SNDP's Figure 10 use.
"""

from __future__ import annotations

from pydantic import Field

from ndpsim.config import Strict, load_preset


class SmEnergy(Strict):
    warp_instruction_pj: float = Field(ge=0)
    alu_lane_pj: float = Field(ge=0)
    sfu_lane_pj: float = Field(ge=0)
    memory_instruction_pj: float = Field(ge=0)
    shared_access_pj: float = Field(ge=0)
    leakage_pj_per_cycle: float = Field(ge=0)


class CacheEnergy(Strict):
    l1_hit_pj: float = Field(ge=0)
    l1_miss_pj: float = Field(ge=0)
    l2_hit_pj: float = Field(ge=0)
    l2_miss_pj: float = Field(ge=0)


class InterconnectEnergy(Strict):
    crossbar_pj_per_bit: float = Field(ge=0)
    link_pj_per_bit: float = Field(ge=0)
    link_idle_pj_per_bit: float = Field(ge=0)
    tsv_pj_per_bit: float = Field(ge=0)


class DramEnergy(Strict):
    activate_nj_per_4kb_row: float = Field(ge=0)
    access_pj_per_bit: float = Field(ge=0)
    refresh_nj: float = Field(ge=0)


class EnergyTable(Strict):
    name: str
    sm: SmEnergy
    cache: CacheEnergy
    interconnect: InterconnectEnergy
    dram: DramEnergy


def load_energy_table(name: str, overrides: dict | None = None) -> EnergyTable:
    """An energy table by name, with optional nested overrides (validated like the file, and
    blamed on the overrides)."""
    return load_preset(EnergyTable, "energy", name, overrides, "energy table")


def gpu_energy(
    table: EnergyTable,
    stats: dict,
    *,
    core_cycles: int,
    sm_count: int,
    time_ps: int,
    link_capacity_gbps: float,
    cube_link_bytes: int,
    crossbar_bytes: int,
    row_bytes: int,
    access_bytes: int,
) -> dict[str, float]:
    """Energy in nJ by component, from the totals of a GPU run's statistics."""
    sm = stats["sm"]["total"]
    l2 = stats["l2"]["total"]
    dram = stats["dram"]["total"]
    t = table
    other = sm["warp_instructions"] - sm["sfu_instructions"] - sm["memory_instructions"]
    average_lanes = sm["thread_instructions"] / max(1, sm["warp_instructions"])
    sm_pj = (
        sm["warp_instructions"] * t.sm.warp_instruction_pj
        + max(other, 0) * average_lanes * t.sm.alu_lane_pj
        + sm["sfu_instructions"] * average_lanes * t.sm.sfu_lane_pj
        + sm["memory_instructions"] * t.sm.memory_instruction_pj
        + sm["shared_accesses"] * t.sm.shared_access_pj
        + core_cycles * sm_count * t.sm.leakage_pj_per_cycle
    )
    cache_pj = (
        sm["l1_hits"] * t.cache.l1_hit_pj
        + sm["l1_misses"] * t.cache.l1_miss_pj
        + l2["hits"] * t.cache.l2_hit_pj
        + (l2["accesses"] - l2["hits"]) * t.cache.l2_miss_pj
    )
    crossbar_pj = crossbar_bytes * 8 * t.interconnect.crossbar_pj_per_bit
    capacity_bits = link_capacity_gbps * 1e9 * 8 * time_ps * 1e-12
    moved_bits = cube_link_bytes * 8
    link_pj = (
        moved_bits * t.interconnect.link_pj_per_bit
        + max(capacity_bits - moved_bits, 0.0) * t.interconnect.link_idle_pj_per_bit
    )
    dram_pj = (
        dram["activates"] * t.dram.activate_nj_per_4kb_row * 1000 * row_bytes / 4096
        + (dram["reads_done"] + dram["writes_done"]) * access_bytes * 8
        * t.dram.access_pj_per_bit
        + dram["refreshes"] * t.dram.refresh_nj * 1000
    )  # fmt: skip
    parts = {
        "sm": sm_pj,
        "caches": cache_pj,
        "crossbar": crossbar_pj,
        "links": link_pj,
        "dram": dram_pj,
    }
    out = {name: value / 1000 for name, value in parts.items()}
    out["total"] = sum(out.values())
    return out
