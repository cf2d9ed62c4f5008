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
from ndpsim.errors import ConfigError


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
    llc_hit_pj: float = Field(0.0, ge=0, description="a CPU host's last-level cache (GPUs: none)")
    llc_miss_pj: float = Field(0.0, ge=0)


class CpuEnergy(Strict):
    """A CPU core: per instruction retired, and per core per cycle of the run."""

    instruction_pj: float = Field(ge=0)
    leakage_pj_per_cycle: float = Field(ge=0)


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
    sm: SmEnergy | None = None  # systems with SIMT cores
    cpu: CpuEnergy | None = None  # systems with CPU cores
    cache: CacheEnergy
    interconnect: InterconnectEnergy
    dram: DramEnergy


def load_energy_table(name: str, overrides: dict | None = None) -> EnergyTable:
    """An energy table by name, with optional nested overrides (validated like the file, and
    blamed on the overrides)."""
    return load_preset(EnergyTable, "energy", name, overrides, "energy table")


def core_energy_pj(table: EnergyTable, sm: dict, core_cycles: int, units: int) -> float:
    """SIMT cores: each warp instruction issued, its lanes by class, memory instructions, shared
    memory accesses (``sm``: the totals of the SIMT core's counters), and every unit's leakage
    for the run's cycles."""
    t = table
    if t.sm is None:
        raise ConfigError(f"energy table {t.name!r} has no [sm] section for SIMT cores")
    other = sm["warp_instructions"] - sm["sfu_instructions"] - sm["memory_instructions"]
    average_lanes = sm["thread_instructions"] / max(1, sm["warp_instructions"])
    return (
        sm["warp_instructions"] * t.sm.warp_instruction_pj
        + max(other, 0) * average_lanes * t.sm.alu_lane_pj
        + sm["sfu_instructions"] * average_lanes * t.sm.sfu_lane_pj
        + sm["memory_instructions"] * t.sm.memory_instruction_pj
        + sm["shared_accesses"] * t.sm.shared_access_pj
        + core_cycles * units * t.sm.leakage_pj_per_cycle
    )


def cpu_core_energy_pj(table: EnergyTable, instructions: int, core_cycles: int,
                       units: int) -> float:  # fmt: skip
    """CPU cores: each instruction retired, and every core's leakage for the run's cycles."""
    if table.cpu is None:
        raise ConfigError(f"energy table {table.name!r} has no [cpu] section for CPU cores")
    return (instructions * table.cpu.instruction_pj
            + core_cycles * units * table.cpu.leakage_pj_per_cycle)  # fmt: skip


def link_energy_pj(table: EnergyTable, capacity_gbps: float, time_ps: int,
                   moved_bytes: int) -> float:  # fmt: skip
    """Links that move data and idle: the bits moved, and the capacity left unused for the
    run's duration (``capacity_gbps``: the links' bandwidths summed)."""
    capacity_bits = capacity_gbps * 1e9 * 8 * time_ps * 1e-12
    moved_bits = moved_bytes * 8
    return (
        moved_bits * table.interconnect.link_pj_per_bit
        + max(capacity_bits - moved_bits, 0.0) * table.interconnect.link_idle_pj_per_bit
    )


def dram_energy_pj(table: EnergyTable, dram: dict, row_bytes: int, access_bytes: int) -> float:
    """DRAM: activations (scaled from the table's 4 KB row to the preset's), the bits accessed,
    and refreshes (``dram``: the totals of the controller's counters)."""
    t = table
    return (
        dram["activates"] * t.dram.activate_nj_per_4kb_row * 1000 * row_bytes / 4096
        + (dram["reads_done"] + dram["writes_done"]) * access_bytes * 8
        * t.dram.access_pj_per_bit
        + dram["refreshes"] * t.dram.refresh_nj * 1000
    )  # fmt: skip


def by_component(parts_pj: dict[str, float]) -> dict[str, float]:
    """Energies in pJ by component as a run reports them: nJ by component, then their
    ``total``."""
    out = {name: value / 1000 for name, value in parts_pj.items()}
    out["total"] = sum(out.values())
    return out


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
    t = table
    cache_pj = (
        sm["l1_hits"] * t.cache.l1_hit_pj
        + sm["l1_misses"] * t.cache.l1_miss_pj
        + l2["hits"] * t.cache.l2_hit_pj
        + (l2["accesses"] - l2["hits"]) * t.cache.l2_miss_pj
    )
    return by_component({
        "sm": core_energy_pj(t, sm, core_cycles, sm_count),
        "caches": cache_pj,
        "crossbar": crossbar_bytes * 8 * t.interconnect.crossbar_pj_per_bit,
        "links": link_energy_pj(t, link_capacity_gbps, time_ps, cube_link_bytes),
        "dram": dram_energy_pj(t, stats["dram"]["total"], row_bytes, access_bytes),
    })  # fmt: skip
