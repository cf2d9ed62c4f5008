"""A GPU run's counters turned into its result: the statistics registry, the summary figures
(with the offload scheme's own), and the energy."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ndpsim.energy import gpu_energy, load_energy_table
from ndpsim.engine.stats import StatsRegistry
from ndpsim.hw import link as linkmod
from ndpsim.hw.core import sm as smmod
from ndpsim.hw.dram import controller as ctl
from ndpsim.hw.gpu import offload as ofl
from ndpsim.systems.gpu import model
from ndpsim.systems.gpu.layout import GpuLayout
from ndpsim.systems.gpu.summary import summary_rows

#: The load-latency histogram: bins of this many core cycles, and how many.
LATENCY_BIN_CYCLES, LATENCY_BINS = 50, 64


@dataclass
class GpuRunResult:
    """What a run measured: summary figures and every counter."""

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
        return summary_rows(self.summary, self.energy)


def gpu_result(
    layout: GpuLayout,
    time_ps,
    kernels,
    sm_stats,
    mem,
    links,
    dram,
    instructions,
    threads,
    wall,
    plan,
    offload_stats,
    ratio,
    fewest_credits,
) -> GpuRunResult:
    """The run's result from its counters: ``plan``, ``ratio`` and ``fewest_credits`` are the
    offload scheme's (None without near-data processing)."""
    c = layout.config
    registry = StatsRegistry()
    for group in layout.cores.groups:
        registry.adopt(group.name, group.kind.stat_names, sm_stats[group.first : group.end],
                       group.instance_labels())  # fmt: skip
    if c.ndp:
        registry.adopt("offload", ofl.OFFLOAD_STAT_NAMES, offload_stats,
                       [f"stack{k}" for k in range(c.memory.cubes)])  # fmt: skip
    registry.adopt("l2", model.L2_STAT_NAMES, mem.stats)
    registry.adopt("dram", ctl.STAT_NAMES, dram.stats)
    link_names = [f"{cls}_{what}" for cls in linkmod.CLASS_NAMES for what in ("bytes", "packets")]
    traffic = links.traffic.reshape(links.traffic.shape[0], -1)
    labels = [f"{layout.link_label(i)}" for i in range(traffic.shape[0])]
    registry.adopt("links", link_names, traffic, labels)
    busy = links.busy_ps.reshape(-1, 1)
    registry.adopt("link_busy", ["busy_ps"], busy, labels)
    registry.adopt_histogram("load_latency_cycles", LATENCY_BIN_CYCLES, mem.latency_hist)
    cycles = max(1, layout.core.cycles(time_ps))
    summary = _summary(layout, registry, time_ps, cycles, instructions, threads, links)
    if c.ndp:
        summary["offload"] = _offload_summary(layout, plan, offload_stats, sm_stats, threads,
                                                   ratio, fewest_credits, time_ps)  # fmt: skip
    memory_requests = int(sm_stats[:, smmod.T_TRANSACTIONS].sum())
    registry.check()
    stats = registry.as_dict()
    # energy counts every SM, the stacks' included
    energy_stats = {**stats, "sm": {"total": dict(zip(smmod.SM_STAT_NAMES,
                                                      map(int, sm_stats.sum(axis=0)),
                                                      strict=True))}}  # fmt: skip
    net = layout.network
    # the memory network's links (GPU <-> cubes, cube <-> cube) come first; all of them
    # move data and idle
    capacity = sum(
        {"host-to-cube": c.links.host_to_cube_gbps, "cube-to-host": c.links.cube_to_host_gbps,
         "cube": c.links.cube_to_cube_gbps}[kind] for kind in net.kinds
    )  # fmt: skip
    per_link = links.traffic[:, :, 0].sum(axis=1)
    crossbar_end = len(net.links) + c.sm.count + c.l2.slices  # TSV links follow
    org = layout.dram_preset.organization
    energy = gpu_energy(
        load_energy_table(c.energy),
        energy_stats,
        core_cycles=cycles,
        sm_count=layout.sms,
        time_ps=int(time_ps),
        link_capacity_gbps=capacity,
        cube_link_bytes=int(per_link[: len(net.links)].sum()),
        crossbar_bytes=int(per_link[len(net.links) : crossbar_end].sum()),
        row_bytes=org.row_bytes,
        access_bytes=org.access_bytes,
    )
    return GpuRunResult(
        system=c.name,
        time_ps=int(time_ps),
        core_cycles=cycles,
        kernels=kernels,
        summary=summary,
        stats=stats,
        wall_seconds=wall,
        warp_instructions=instructions,
        thread_instructions=threads,
        memory_requests=memory_requests,
        energy=energy,
    )


def _offload_summary(layout: GpuLayout, plan, offload_stats, sm_stats, threads, ratio,
                     fewest_credits, time_ps) -> dict[str, Any]:  # fmt: skip
    totals = dict(zip(ofl.OFFLOAD_STAT_NAMES, map(int, offload_stats.sum(axis=0)),
                      strict=True))  # fmt: skip
    instances = sum(len(launch[1]) for launch in plan.launches)
    candidates = sum(len(launch[0]) for launch in plan.launches)
    stack_threads = int(sm_stats[layout.gpu_sms :, smmod.T_THREAD_INSTRUCTIONS].sum())
    out = {
        "candidate_blocks": candidates,  # summed over launches
        "instances": instances,
        **totals,
        "offloaded_fraction": totals["offloaded"] / instances if instances else 0.0,
        "offloaded_instruction_fraction": stack_threads / threads if threads else 0.0,
        "colocation": plan.colocation,
    }
    out.update(layout.scheme.summary(plan, totals, ratio, fewest_credits, time_ps,
                                   layout.config.ndp))  # fmt: skip
    return out


def _summary(layout: GpuLayout, registry, time_ps, cycles, instructions, threads, links):
    net = layout.network
    totals = lambda path: registry.totals(path)  # noqa: E731
    sm, l2, dram = totals("sm"), totals("l2"), totals("dram")
    per_link = links.traffic[:, :, 0].sum(axis=1)
    seconds = time_ps * 1e-12

    def channel(kind):
        ids = [i for i, k in enumerate(net.kinds) if k == kind]
        moved = int(per_link[ids].sum()) if ids else 0
        # the last packets (a write's acknowledgement) may leave after the run's last event
        span = max(time_ps, int(links.busy_until[ids].max())) if ids else time_ps
        return {"bytes": moved, "gbps": moved / seconds / 1e9 if seconds else 0.0,
                "utilization": float(links.busy_ps[ids].sum() / (span * len(ids)))
                if ids and span else 0.0}  # fmt: skip

    row_total = dram["row_hits"] + dram["row_misses"] + dram["row_conflicts"]
    return {
        "core_cycles": cycles,
        "time_us": time_ps / 1e6,
        "warp_instructions": instructions,
        "thread_instructions": threads,
        "ipc": threads / cycles,
        "warp_ipc": instructions / cycles,
        "links": {
            "gpu_to_memory": channel("host-to-cube"),
            "memory_to_gpu": channel("cube-to-host"),
            "memory_to_memory": channel("cube"),
        },
        "dram_row_hit_rate": dram["row_hits"] / row_total if row_total else 0.0,
        "dram_reads": dram["reads"],
        "dram_writes": dram["writes"],
        "l1_hit_rate": sm["l1_hits"] / sm["l1_accesses"] if sm["l1_accesses"] else 0.0,
        "l2_hit_rate": l2["hits"] / l2["accesses"] if l2["accesses"] else 0.0,
        "stall_breakdown": {
            "unit_busy": sm["no_issue_unit_busy"],
            "dependency": sm["no_issue_dependency"],
            "idle": sm["no_issue_idle"],
        },
    }
