"""A GPU run's counters turned into its result: the statistics registry, the summary figures
(with the offload scheme's own), and the energy."""

from __future__ import annotations

from typing import Any

from ndpsim.energy import gpu_energy, load_energy_table
from ndpsim.engine.stats import StatsRegistry
from ndpsim.hw.core import sm as smmod
from ndpsim.hw.gpu import offload as ofl
from ndpsim.systems.gpu import model
from ndpsim.systems.gpu.layout import GpuLayout
from ndpsim.systems.gpu.summary import summary_rows
from ndpsim.systems.skeleton.results import (
    SystemRunResult,
    adopt_cores,
    adopt_dram,
    adopt_links,
    dram_figures,
    headline,
    link_figures,
)

#: The load-latency histogram: bins of this many core cycles, and how many.
LATENCY_BIN_CYCLES, LATENCY_BINS = 50, 64


class GpuRunResult(SystemRunResult):
    """What a GPU run measured: summary figures and every counter."""

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
    adopt_cores(registry, layout.cores, sm_stats)
    if c.ndp:
        registry.adopt("offload", ofl.OFFLOAD_STAT_NAMES, offload_stats,
                       [f"stack{k}" for k in range(c.memory.cubes)])  # fmt: skip
    registry.adopt("l2", model.L2_STAT_NAMES, mem.stats)
    adopt_dram(registry, dram)
    adopt_links(registry, links, [layout.link_label(i) for i in range(len(links.busy_ps))])
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
    capacity = sum(c.links.gbps(kind) for kind in net.kinds)
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
    sm, l2 = registry.totals("sm"), registry.totals("l2")

    def channel(kind):
        return link_figures(links, [i for i, k in enumerate(net.kinds) if k == kind], time_ps)

    return {
        **headline(time_ps, cycles, instructions, threads),
        "links": {
            "gpu_to_memory": channel("host-to-cube"),
            "memory_to_gpu": channel("cube-to-host"),
            "memory_to_memory": channel("cube"),
        },
        **dram_figures(registry.totals("dram")),
        "l1_hit_rate": sm["l1_hits"] / sm["l1_accesses"] if sm["l1_accesses"] else 0.0,
        "l2_hit_rate": l2["hits"] / l2["accesses"] if l2["accesses"] else 0.0,
        "stall_breakdown": {
            "unit_busy": sm["no_issue_unit_busy"],
            "dependency": sm["no_issue_dependency"],
            "idle": sm["no_issue_idle"],
        },
    }
