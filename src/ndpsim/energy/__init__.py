"""Energy: per-event energies from cited tables, applied to a run's counters."""

from ndpsim.energy.model import EnergyTable, gpu_energy, load_energy_table

__all__ = ["EnergyTable", "gpu_energy", "load_energy_table"]
