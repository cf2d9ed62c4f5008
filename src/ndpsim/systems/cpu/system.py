"""A ``cpu`` system: a host of CPU cores built from the config, and one run of a program on it on
the skeleton (:mod:`ndpsim.systems.skeleton`).

Each kernel launch is a phase of the program: its CTAs are spread over the cores in contiguous
shares, one CPU thread per core (:mod:`ndpsim.trace.cpu_threads`), and the next launch starts
when every core has finished and every write has reached memory. The caches and the DRAM keep
their state from one launch to the next.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial
from typing import Any

import numpy as np

from ndpsim.energy import (
    by_component,
    cpu_core_energy_pj,
    dram_energy_pj,
    link_energy_pj,
    load_energy_table,
)
from ndpsim.engine import events as ev
from ndpsim.engine.clock import PS_PER_NS
from ndpsim.engine.stats import StatsRegistry
from ndpsim.engine.timeline import Timeline
from ndpsim.errors import ConfigError
from ndpsim.hw import link as linkmod
from ndpsim.hw import requests as rq
from ndpsim.hw.core.contract import HOST, place_cores
from ndpsim.hw.core.cpu import CPU
from ndpsim.hw.cpu import caches as cc
from ndpsim.hw.cpu import core as cpu
from ndpsim.hw.dram import address_map, controller
from ndpsim.hw.dram import vaults as vaultmod
from ndpsim.hw.hops import build_hops
from ndpsim.hw.host_interface import build_host_interface
from ndpsim.hw.network import build_network
from ndpsim.hw.pagetable import PageTable
from ndpsim.policy.mapping import ADDRESS_MAPPINGS
from ndpsim.systems.cpu import model
from ndpsim.systems.cpu.config import CpuSystemConfig
from ndpsim.systems.cpu.results import CpuRunResult
from ndpsim.systems.cpu.timeline import CpuSampler
from ndpsim.systems.skeleton import checks, memory, results
from ndpsim.systems.skeleton import program as skeleton
from ndpsim.systems.skeleton.links import add_tsv_links
from ndpsim.systems.skeleton.program import Program, ProgramMix
from ndpsim.systems.skeleton.timeline import DramSampler, LinkSampler, RunTimeline
from ndpsim.systems.stepping import SteppedRun
from ndpsim.trace.cpu_threads import PRIVATE_STRIDE, cpu_launch
from ndpsim.trace.cpu_work import build_cpu_work, merge_cpu_works
from ndpsim.trace.work import LINE_BYTES


class CpuSystem(skeleton.ProgramSystem):
    def __init__(self, config: CpuSystemConfig):
        c = self.config = config
        cube = c.dram_preset().in_accesses_of(LINE_BYTES)  # one cube's (DDR: the whole memory)
        self.channels_per_cube = cube.organization.channels
        self.dram = memory.all_cubes(cube, c.memory.cubes)
        self.policy = ADDRESS_MAPPINGS.get(c.memory.mapping)()
        self.mapping = memory.dram_address_mapping(self.policy, cube, c.memory.cubes,
                                                   c.memory.page_bytes,
                                                   c.memory.xor_cube)  # fmt: skip
        links = c.links
        # DDR channels have no links: a network of one cube keeps the model's arrays typed
        self.network = build_network(
            c.memory.cubes, host=True, topology=links.cube_topology if links else "star",
            mesh_columns=links.mesh_columns if links else None,
            host_cubes=links.host_cubes if links else None)  # fmt: skip
        self.clock = c.cores.clock()
        self.cores = place_cores([c.cores.kind], c, self.clock, models=(CPU,), sites=(HOST,))
        (self.group,) = self.cores.groups
        self.energy_table = load_energy_table(c.energy)

    def channel_label(self, ch: int) -> str:
        if self.config.links is None:
            return f"channel{ch}"
        return f"cube{ch // self.channels_per_cube}-vault{ch % self.channels_per_cube}"

    def link_label(self, i: int) -> str:
        net = self.network
        if i < len(net.links):
            return net.link_label(i, "cpu")
        return f"cube{i - len(net.links)}-tsv"

    def links(self) -> tuple[linkmod.Links, np.ndarray]:
        """The memory network's links, then each cube's TSVs (when modelled), fresh; and the TSV
        link of each cube (-1: none). A host without links has none."""
        c = self.config
        if c.links is None:
            return linkmod.build_links([], []), np.full(1, -1, dtype=np.int64)
        kinds = self.network.kinds
        bandwidth = [c.links.built_gbps(k) for k in kinds]
        latency = [round(c.links.latency_ns * PS_PER_NS)] * len(kinds)
        tsv = add_tsv_links(bandwidth, latency, c.memory.cubes, c.memory.internal_gbps)
        return linkmod.build_links(bandwidth, latency), tsv

    def program_capacity_bytes(self) -> int:
        """What the programs' pages may fill: the memory less the CPU threads' private
        buffers at its top."""
        c, org = self.config, self.dram.organization
        private = 2 * c.cores.count * PRIVATE_STRIDE  # every thread's shared and local buffers
        if private >= org.capacity_bytes:
            raise ConfigError(f"memory.dram {c.memory.dram!r} holds {org.capacity_bytes:,} bytes, "
                             f"less than the {c.cores.count} CPU threads' private "
                             "buffers")  # fmt: skip
        return org.capacity_bytes - private

    def machine(self, module, device_memory, seed: int) -> CpuRun:
        table = memory.program_pages(device_memory, self.config.memory.page_bytes,
                                     self.program_capacity_bytes(), self.policy,
                                     seed)  # fmt: skip
        return CpuRun(self, module, table)

    def run_programs(self, programs: Sequence[Program], seed: int | None = None,
                     on_epoch: Callable[[Any], None] | None = None,
                     timeline: Timeline | None = None) -> CpuRunResult:  # fmt: skip
        """Simulate several programs at once, each on its own cores (split evenly among them,
        :meth:`~ndpsim.hw.core.contract.Cores.programs`) and in its own address space, sharing
        the LLC and the memory; each program's launches run in order, the next as soon as its
        cores have finished the one before. The result reports each program apart
        (``programs``) beside the shared components."""
        return self.start_programs(programs, seed, on_epoch, timeline).finish()

    def start_programs(self, programs: Sequence[Program], seed: int | None = None,
                       on_epoch: Callable[[Any], None] | None = None,
                       timeline: Timeline | None = None) -> SteppedRun:  # fmt: skip
        """:meth:`run_programs`, for its caller to advance step by step."""
        seed = self.config.seed if seed is None else seed
        mix = ProgramMix(tuple(programs))
        return skeleton.start_program(partial(CpuMixRun, self, mix, seed), [mix], on_epoch,
                                      timeline)  # fmt: skip


class CpuRun(skeleton.Machine):
    """The hardware of one run, launch by launch."""

    def __init__(self, system: CpuSystem, module, page_table: PageTable):
        c, self.system, self.module = system.config, system, module
        cores = c.cores.count
        org = system.dram.organization
        self.page_table = page_table
        programs_bytes = system.program_capacity_bytes()
        self.clocks = model.clock_fields(
            system.clock.period_ps, round(c.memory.path_latency_ns * PS_PER_NS),
            model.PRIVATE_LINE, programs_bytes // LINE_BYTES,
            (org.capacity_bytes - programs_bytes) // LINE_BYTES,
            c.links.header_bytes if c.links else None)  # fmt: skip
        k = c.caches
        self.caches = cc.build_caches(
            cores, system.clock.period_ps, 1 << model.CPU_LINE_SHIFT,
            (k.l1_bytes, k.l1_ways, k.l1_cycles), (k.l2_bytes, k.l2_ways, k.l2_cycles),
            (k.llc_bytes, k.llc_ways, k.llc_cycles), k.llc_mshrs, k.coherence_cycles,
            k.prefetch_streams, k.prefetch_degree, 1 << model.BLOCK_SHIFT)  # fmt: skip
        self.dram = controller.build_dram_state(system.dram)
        self.links, tsv = system.links()
        self.host = build_host_interface(system.network)
        self.hops = build_hops(system.network)
        self.vaults = vaultmod.build_vaults(system.dram.timing.tCK_ps, org.channels, tsv)
        self.amap = address_map.build_address_map(LINE_BYTES, system.channels_per_cube,
                                                  *system.mapping.arrays())  # fmt: skip
        self.pool, self.events = rq.request_pool(16384), ev.event_queue(16384)
        self.params = c.cores.params(system.clock.period_ps, system.group.kind.in_order)
        self.latencies = c.cores.latencies()
        self.stats = np.zeros((cores, len(cpu.CORE_STAT_NAMES)), dtype=np.int64)
        self.instructions = 0
        self.view = skeleton.LaunchView()

    def epoch(self, index, now_ps):
        return self.view

    def sampler(self, timeline: Timeline) -> RunTimeline:
        system = self.system
        cores = [system.cores.label(u) for u in range(system.cores.count)]
        channels = [system.channel_label(ch) for ch in range(len(self.vaults.tick_at))]
        samplers = [CpuSampler(timeline, cores)]
        if system.config.links:
            labels = [system.link_label(i) for i in range(len(self.links.busy_ps))]
            samplers.append(LinkSampler(timeline, labels))
        samplers.append(DramSampler(timeline, channels))
        return RunTimeline(timeline, samplers, launches_on="cores")

    def launch(self, index, trace, now_ps):
        cores = self.system.config.cores.count
        work = build_cpu_work(cpu_launch(trace, self.module, cores), self.module)
        state = cpu.build_cores(work, self.params, self.latencies)
        return self._launched(state, work, model.one_program(cores), trace.info.kernel, now_ps)

    def _launched(self, cores, work, mix, name: str, now_ps: int) -> skeleton.Launched:
        """The skeleton's launch of ``work`` on ``cores`` from ``now_ps``."""
        self.clocks[model.K_NEXT_TICK] = now_ps
        self.clocks[model.K_LAST_DONE] = now_ps
        s = model.State(cores, work, self.caches, self.pool, self.events,
                        self.page_table.compiled, self.amap, self.host, self.hops, self.links,
                        self.vaults, self.dram, mix, self.clocks)  # fmt: skip
        return skeleton.Launched(skeleton.AssembledLaunch(
            model.advance, s, 4096,
            progress=lambda st: (int(st.cores.stats[:, cpu.S_INSTRUCTIONS].sum()),
                                 int(rq.in_use(st.pool))),
            diagnose=lambda pool, now: f"{name!r} stuck at {now} ps with "
                                       f"{rq.in_use(pool)} requests in flight"))  # fmt: skip

    def launch_end(self, index, trace, launched, end_ps):
        s = launched.model.state
        self.events, self.pool = s.events, s.pool  # grown, if the launch needed more
        left = checks.memory_path_left(s.pool, s.dram, s.vaults)
        retired = int(s.cores.stats[:, cpu.S_INSTRUCTIONS].sum())
        left["instructions not retired"] = s.work.instruction_count - retired
        left["writes not taken"] = int(s.clocks[model.K_WRITES_PENDING])
        checks.check_drained(trace.info.kernel, left)
        link_checks, link_errors = self._link_checks() if self.system.config.links else ([], [])
        checks.check_conserved(
            trace.info.kernel,
            [("the cores", "instructions retired", retired, s.work.instruction_count),
             *checks.dram_checks(self.dram, self.system.channel_label), *link_checks],
            link_errors)  # fmt: skip
        if self.system.config.links:
            checks.check_busy(self.links, self.dram, self.system.dram.organization.ranks,
                              self.system.link_label, self.system.channel_label)  # fmt: skip
        self.stats += s.cores.stats
        self.instructions += retired

    def _link_checks(self):
        """Every read that went down the links came back with its data, every write was
        acknowledged, every DRAM access crossed its cube's TSVs, and no packet is smaller than
        its header."""
        system, links, host = self.system, self.links, self.host
        packets = links.traffic[:, :, 1]
        tx, rx = np.unique(host.to_cube), np.unique(host.from_cube)
        found = [
            ("CPU links", "reads answered", int(packets[rx, linkmod.READ_DATA].sum()),
             int(packets[tx, linkmod.READ_REQUEST].sum())),
            ("CPU links", "writes acknowledged", int(packets[rx, linkmod.WRITE_ACK].sum()),
             int(packets[tx, linkmod.WRITE_REQUEST].sum())),
            ("CPU links", "DRAM reads requested", int(packets[tx, linkmod.READ_REQUEST].sum()),
             int(self.dram.stats[:, controller.S_READS].sum())),
            *checks.tsv_checks(self.vaults, links, self.dram, system.channels_per_cube,
                               system.link_label),
        ]  # fmt: skip
        smallest = np.ones(len(links.busy_ps), dtype=np.int64)
        smallest[: len(system.network.links)] = system.config.links.header_bytes
        return found, checks.packet_errors(links, smallest, system.link_label)

    def result(self, time_ps, launches, wall_seconds):
        system, c = self.system, self.system.config
        registry = StatsRegistry()
        labels = system.group.instance_labels()
        registry.adopt(system.group.name, cpu.CORE_STAT_NAMES, self.stats, labels)
        registry.adopt("caches", cc.CACHE_STAT_NAMES, self.caches.stats, labels)
        results.adopt_dram(registry, self.dram)
        linked = c.links is not None
        if linked:
            results.adopt_links(
                registry, self.links, [system.link_label(i) for i in range(len(self.links.busy_ps))]
            )
        registry.check()
        cycles = max(1, system.clock.cycles(time_ps))
        dram = registry.totals("dram")
        core, caches = registry.totals(system.group.name), registry.totals("caches")
        per_core = [int(n) / cycles for n in self.stats[:, cpu.S_INSTRUCTIONS]]
        hit_rates = {level: _rate(caches[f"{level}_hits"], caches[f"{level}_misses"])
                     for level in ("l1", "l2", "llc")}  # fmt: skip
        coherence = {name: caches[name] for name in
                     ("upgrades", "invalidations", "downgrades", "back_invalidations")}  # fmt: skip
        mispredicts = _rate(core["mispredicts"], core["branches"] - core["mispredicts"])
        summary = {
            **results.headline(time_ps, cycles, self.instructions, self.instructions),
            "ipc_per_core": per_core,
            "hit_rates": hit_rates,
            "branch_mispredict_rate": mispredicts,
            "coherence": coherence,
            "prefetches": caches["prefetches"],
            "writebacks": caches["writebacks"],
            **results.dram_figures(dram),
        }
        if linked:
            kinds = system.network.kinds
            summary["links"] = {
                name: results.link_figures(self.links, [i for i, k in enumerate(kinds)
                                                        if k == kind], time_ps)
                for name, kind in (("cpu_to_memory", "host-to-cube"),
                                   ("memory_to_cpu", "cube-to-host"),
                                   ("memory_to_memory", "cube"))}  # fmt: skip
        energy = self._energy(core, caches, dram, cycles, time_ps)
        return CpuRunResult(c.name, int(time_ps), cycles, launches, summary, registry.as_dict(),
                            wall_seconds, self.instructions, self.instructions,
                            dram["reads"] + dram["writes"], energy)  # fmt: skip

    def _energy(self, core, caches, dram, cycles, time_ps) -> dict[str, float]:
        """Energy by component: the cores' instructions, each cache level's hits and misses
        (ALP Table 1), the DRAM, and with stacks the links and the cubes' TSVs."""
        system = self.system
        t, org, c = system.energy_table, system.dram.organization, system.config
        parts = {
            "cores": cpu_core_energy_pj(t, core["instructions"], cycles, len(self.stats)),
            "caches": sum(caches[f"{level}_hits"] * getattr(t.cache, f"{level}_hit_pj")
                          + caches[f"{level}_misses"] * getattr(t.cache, f"{level}_miss_pj")
                          for level in ("l1", "l2", "llc")),
            "dram": dram_energy_pj(t, dram, org.row_bytes, org.access_bytes),
        }  # fmt: skip
        if c.links:
            moved = self.links.traffic[:, :, 0].sum(axis=1)
            network = len(system.network.links)
            capacity = sum(c.links.gbps(k) for k in system.network.kinds)
            parts["links"] = link_energy_pj(t, capacity, int(time_ps), int(moved[:network].sum()))
            parts["tsv"] = int(moved[network:].sum()) * 8 * t.interconnect.tsv_pj_per_bit
        return by_component(parts)


class CpuMixRun(CpuRun):
    """The hardware of one run of several programs at once (:meth:`CpuSystem.run_programs`):
    one page table holding every program's address space, and one launch of the skeleton
    holding every launch of every program (:func:`~ndpsim.trace.cpu_work.merge_cpu_works`),
    whose cores are split among the programs and whose programs go from launch to launch on
    their own (the model's ``Mix``)."""

    def __init__(self, system: CpuSystem, mix: ProgramMix, seed: int):
        c = system.config
        self.mix = mix
        self.units = system.cores.programs(len(mix.programs))  # refuses too few cores
        table, self.line_offsets = memory.programs_pages(
            [p.memory for p in mix.programs], c.memory.page_bytes,
            system.program_capacity_bytes(), system.policy, seed)  # fmt: skip
        super().__init__(system, None, table)
        self.clocks[model.K_MIX] = 1
        self.progress: model.Mix | None = None

    def launch(self, index, trace: ProgramMix, now_ps):
        launches = []
        for p, program in enumerate(trace.programs):
            mine = np.flatnonzero(self.units == p)
            offset = self.line_offsets[p] * LINE_BYTES
            launches.append([
                build_cpu_work(cpu_launch(t, program.module, len(mine), offset, int(mine[0])),
                               program.module) for t in program.traces])  # fmt: skip
        work, launch_end = merge_cpu_works(launches, self.units)
        del launches
        cores = cpu.build_cores(work, self.params, self.latencies, last=launch_end[:, 0])
        self.progress = model.build_mix(self.units, launch_end,
                                        [len(p.traces) for p in trace.programs])  # fmt: skip
        return self._launched(cores, work, self.progress, trace.name, now_ps)

    def result(self, time_ps, launches, wall_seconds):
        result = super().result(time_ps, launches, wall_seconds)
        result.kernels = sum(len(p.traces) for p in self.mix.programs)
        clock = self.system.clock
        for p, program in enumerate(self.mix.programs):
            mine = self.units == p
            counters = self.stats[mine].sum(axis=0)
            ended = int(self.progress.ended_ps[p]) or time_ps
            cycles = max(1, clock.cycles(ended))
            instructions = int(counters[cpu.S_INSTRUCTIONS])
            result.summary.setdefault("programs", {})[program.name] = {
                "cores": int(mine.sum()),
                "launches": len(program.traces),
                "time_us": ended / 1e6,
                "core_cycles": cycles,
                "instructions": instructions,
                "ipc_per_core": instructions / cycles / int(mine.sum()),
            }
            result.stats.setdefault("programs", {})[program.name] = dict(
                zip(cpu.CORE_STAT_NAMES, map(int, counters), strict=True))  # fmt: skip
        return result


def _rate(hits: int, misses: int) -> float:
    return hits / (hits + misses) if hits + misses else 0.0


__all__ = ["CpuMixRun", "CpuRun", "CpuSystem"]
