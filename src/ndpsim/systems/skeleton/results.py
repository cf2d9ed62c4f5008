"""A run's counters turned into its result, the same way in every kind: the statistics
registry of the cores and the memory path, the headline figures, the summary rows a person
reads, and the result itself. A kind adds its own components' counters and figures."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ndpsim.engine.stats import StatsRegistry
from ndpsim.hw import link as linkmod
from ndpsim.hw.core.contract import Cores
from ndpsim.hw.dram import controller as ctl


@dataclass
class SystemRunResult:
    """What a run measured: summary figures and every counter (``ndpsim.systems.RunResult``).
    A kind with rows of its own overrides :meth:`summary_rows`."""

    system: str
    time_ps: int
    core_cycles: int
    kernels: int
    summary: dict[str, Any]
    stats: dict[str, Any]
    wall_seconds: float
    warp_instructions: int
    thread_instructions: int
    memory_requests: int
    energy: dict[str, float] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {
            "system": self.system,
            "time_ps": self.time_ps,
            "core_cycles": self.core_cycles,
            "kernels": self.kernels,
            "summary": self.summary,
            "energy_nj": self.energy,
            "wall_seconds": self.wall_seconds,
            "stats": self.stats,
        }

    def summary_rows(self) -> list[tuple[str, str]]:
        s = self.summary
        return [*headline_rows(s), ("DRAM row-buffer hit rate",
                                    f"{100 * s['dram_row_hit_rate']:.1f}%"),
                *energy_rows(self.energy)]  # fmt: skip


def adopt_cores(registry: StatsRegistry, cores: Cores, stats: np.ndarray) -> None:
    """Each group of core units under its kind's name, a row per unit (``stats``: every
    unit's counters, in the groups' order)."""
    for group in cores.groups:
        registry.adopt(group.name, group.kind.stat_names, stats[group.first : group.end],
                       group.instance_labels())  # fmt: skip


def adopt_dram(registry: StatsRegistry, dram) -> None:
    """The DRAM controllers' counters, a row per channel."""
    registry.adopt("dram", ctl.STAT_NAMES, dram.stats)


def adopt_links(registry: StatsRegistry, links, labels: list[str]) -> None:
    """Every link's bytes and packets by class, and its busy time."""
    names = [f"{cls}_{what}" for cls in linkmod.CLASS_NAMES for what in ("bytes", "packets")]
    traffic = links.traffic.reshape(links.traffic.shape[0], -1)
    registry.adopt("links", names, traffic, labels)
    registry.adopt("link_busy", ["busy_ps"], links.busy_ps.reshape(-1, 1), labels)


def headline(time_ps: int, cycles: int, instructions: int, threads: int) -> dict[str, Any]:
    """The figures every run reports first: cycles of its cores' clock, time, instructions
    and their rates."""
    return {
        "core_cycles": cycles,
        "time_us": time_ps / 1e6,
        "warp_instructions": instructions,
        "thread_instructions": threads,
        "ipc": threads / cycles,
        "warp_ipc": instructions / cycles,
    }


def dram_figures(dram: dict[str, int]) -> dict[str, Any]:
    """The DRAM's row-buffer hit rate, reads and writes (``dram``: its counters' totals)."""
    row_total = dram["row_hits"] + dram["row_misses"] + dram["row_conflicts"]
    return {
        "dram_row_hit_rate": dram["row_hits"] / row_total if row_total else 0.0,
        "dram_reads": dram["reads"],
        "dram_writes": dram["writes"],
    }


def link_figures(links, ids: list[int], time_ps: int) -> dict[str, Any]:
    """Bytes, bandwidth and utilization of the links ``ids`` together."""
    seconds = time_ps * 1e-12
    moved = int(links.traffic[ids, :, 0].sum()) if ids else 0
    # the last packets (a write's acknowledgement) may leave after the run's last event
    span = max(time_ps, int(links.busy_until[ids].max())) if ids else time_ps
    return {"bytes": moved, "gbps": moved / seconds / 1e9 if seconds else 0.0,
            "utilization": float(links.busy_ps[ids].sum() / (span * len(ids)))
            if ids and span else 0.0}  # fmt: skip


def headline_rows(summary: dict[str, Any]) -> list[tuple[str, str]]:
    """The rows of :func:`headline`'s figures."""
    s = summary
    return [
        ("core cycles", f"{s['core_cycles']:,}"),
        ("simulated time", f"{s['time_us']:.2f} us"),
        ("IPC (thread instructions per cycle)", f"{s['ipc']:.1f}"),
        ("warp instructions", f"{s['warp_instructions']:,}"),
    ]


def energy_rows(energy: dict[str, float]) -> list[tuple[str, str]]:
    """The energy row: the total and each component, in uJ (none for a kind that reports no
    energy)."""
    if not energy:
        return []
    parts = ", ".join(f"{k} {v / 1000:.2f}" for k, v in energy.items() if k != "total")
    return [("energy (uJ)", f"{energy['total'] / 1000:.2f} ({parts})")]
