"""Energy: per-event energies from cited tables, applied to a run's counters, component by
component (a system kind sums the components it has)."""

from ndpsim.energy.model import (
    EnergyTable,
    by_component,
    core_energy_pj,
    cpu_core_energy_pj,
    dram_energy_pj,
    gpu_energy,
    link_energy_pj,
    load_energy_table,
)

__all__ = [
    "EnergyTable",
    "by_component",
    "core_energy_pj",
    "cpu_core_energy_pj",
    "dram_energy_pj",
    "gpu_energy",
    "link_energy_pj",
    "load_energy_table",
]
