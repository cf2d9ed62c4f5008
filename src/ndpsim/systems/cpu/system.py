"""A ``cpu`` system: a host of CPU cores built from the config, and one run of a program on it on
the skeleton (:mod:`ndpsim.systems.skeleton`).

Each kernel launch is a phase of the program: its CTAs are spread over the cores in contiguous
shares, one CPU thread per core (:mod:`ndpsim.trace.cpu_threads`), and the next launch starts
when every core has finished and every write has reached memory. The caches and the DRAM keep
their state from one launch to the next.
"""

from __future__ import annotations

import numpy as np

from ndpsim.energy import by_component, cpu_core_energy_pj, dram_energy_pj, load_energy_table
from ndpsim.engine import events as ev
from ndpsim.engine.stats import StatsRegistry
from ndpsim.engine.timeline import Timeline
from ndpsim.errors import ConfigError
from ndpsim.hw import requests as rq
from ndpsim.hw.core.contract import HOST, place_cores
from ndpsim.hw.core.cpu import CPU
from ndpsim.hw.cpu import caches as cc
from ndpsim.hw.cpu import core as cpu
from ndpsim.hw.dram import address_map, controller
from ndpsim.hw.dram import vaults as vaultmod
from ndpsim.policy.mapping import ADDRESS_MAPPINGS
from ndpsim.systems.cpu import model
from ndpsim.systems.cpu.config import CpuSystemConfig
from ndpsim.systems.cpu.results import CpuRunResult
from ndpsim.systems.cpu.timeline import CpuSampler
from ndpsim.systems.skeleton import checks, memory, results
from ndpsim.systems.skeleton import program as skeleton
from ndpsim.systems.skeleton.timeline import DramSampler, RunTimeline
from ndpsim.trace.cpu_threads import PRIVATE_STRIDE, cpu_launch
from ndpsim.trace.cpu_work import build_cpu_work
from ndpsim.trace.work import LINE_BYTES


class CpuSystem(skeleton.ProgramSystem):
    def __init__(self, config: CpuSystemConfig):
        c = self.config = config
        self.dram = c.dram_preset().in_accesses_of(LINE_BYTES)
        self.policy = ADDRESS_MAPPINGS.get(c.memory.mapping)()
        self.mapping = memory.dram_address_mapping(self.policy, self.dram, 1, c.memory.page_bytes,
                                                   xor_cube=False)  # fmt: skip
        self.clock = c.cores.clock()
        self.cores = place_cores([c.cores.kind], c, self.clock, models=(CPU,), sites=(HOST,))
        (self.group,) = self.cores.groups
        self.energy_table = load_energy_table(c.energy)

    def channel_label(self, ch: int) -> str:
        return f"channel{ch}"

    def machine(self, module, memory, seed: int) -> CpuRun:
        return CpuRun(self, module, memory, seed)


class CpuRun(skeleton.Machine):
    """The hardware of one run, launch by launch."""

    def __init__(self, system: CpuSystem, module, device_memory, seed: int):
        c, self.system, self.module = system.config, system, module
        cores = c.cores.count
        org = system.dram.organization
        private = 2 * cores * PRIVATE_STRIDE  # every thread's shared and local buffers
        if private >= org.capacity_bytes:
            raise ConfigError(f"memory.dram {c.memory.dram!r} holds {org.capacity_bytes:,} bytes, "
                             f"less than the {cores} CPU threads' private buffers")  # fmt: skip
        self.page_table = memory.program_pages(device_memory, c.memory.page_bytes,
                                               org.capacity_bytes - private, system.policy,
                                               seed)  # fmt: skip
        self.clocks = model.clock_fields(
            system.clock.period_ps, round(c.memory.path_latency_ns * 1000), model.PRIVATE_LINE,
            (org.capacity_bytes - private) // LINE_BYTES, private // LINE_BYTES)  # fmt: skip
        k = c.caches
        self.caches = cc.build_caches(
            cores, system.clock.period_ps, 1 << model.CPU_LINE_SHIFT,
            (k.l1_bytes, k.l1_ways, k.l1_cycles), (k.l2_bytes, k.l2_ways, k.l2_cycles),
            (k.llc_bytes, k.llc_ways, k.llc_cycles), k.llc_mshrs, k.coherence_cycles,
            k.prefetch_streams, k.prefetch_degree, 1 << model.BLOCK_SHIFT)  # fmt: skip
        self.dram = controller.build_dram_state(system.dram)
        self.vaults = vaultmod.build_vaults(system.dram.timing.tCK_ps, org.channels,
                                            np.full(1, -1, dtype=np.int64))  # fmt: skip
        self.amap = address_map.build_address_map(LINE_BYTES, org.channels,
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
        return RunTimeline(timeline, [CpuSampler(timeline, cores),
                                      DramSampler(timeline, channels)],
                           launches_on="cores")  # fmt: skip

    def launch(self, index, trace, now_ps):
        cores = self.system.config.cores.count
        work = build_cpu_work(cpu_launch(trace, self.module, cores), self.module)
        state = cpu.build_cores(work, self.params, self.latencies)
        self.clocks[model.K_NEXT_TICK] = now_ps
        self.clocks[model.K_LAST_DONE] = now_ps
        s = model.State(state, work, self.caches, self.pool, self.events,
                        self.page_table.compiled, self.amap, self.vaults, self.dram,
                        self.clocks)  # fmt: skip
        return skeleton.Launched(skeleton.AssembledLaunch(
            model.advance, s, 4096,
            progress=lambda st: (int(st.cores.stats[:, cpu.S_INSTRUCTIONS].sum()),
                                 int(rq.in_use(st.pool))),
            diagnose=lambda pool, now: f"{trace.info.kernel!r} stuck at {now} ps with "
                                       f"{rq.in_use(pool)} requests in flight"))  # fmt: skip

    def launch_end(self, index, trace, launched, end_ps):
        s = launched.model.state
        self.events, self.pool = s.events, s.pool  # grown, if the launch needed more
        left = checks.memory_path_left(s.pool, s.dram, s.vaults)
        retired = int(s.cores.stats[:, cpu.S_INSTRUCTIONS].sum())
        left["instructions not retired"] = s.work.instruction_count - retired
        left["writes not taken"] = int(s.clocks[model.K_WRITES_PENDING])
        checks.check_drained(trace.info.kernel, left)
        checks.check_conserved(
            trace.info.kernel,
            [("the cores", "instructions retired", retired, s.work.instruction_count),
             *checks.dram_checks(self.dram, self.system.channel_label)], [])  # fmt: skip
        self.stats += s.cores.stats
        self.instructions += retired

    def result(self, time_ps, launches, wall_seconds):
        system, c = self.system, self.system.config
        registry = StatsRegistry()
        labels = system.group.instance_labels()
        registry.adopt(system.group.name, cpu.CORE_STAT_NAMES, self.stats, labels)
        registry.adopt("caches", cc.CACHE_STAT_NAMES, self.caches.stats, labels)
        results.adopt_dram(registry, self.dram)
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
        energy = self._energy(core, caches, dram, cycles)
        return CpuRunResult(c.name, int(time_ps), cycles, launches, summary, registry.as_dict(),
                            wall_seconds, self.instructions, self.instructions,
                            dram["reads"] + dram["writes"], energy)  # fmt: skip

    def _energy(self, core, caches, dram, cycles) -> dict[str, float]:
        """Energy by component: the cores' instructions, each cache level's hits and misses
        (ALP Table 1) and the DRAM."""
        t, org = self.system.energy_table, self.system.dram.organization
        return by_component({
            "cores": cpu_core_energy_pj(t, core["instructions"], cycles, len(self.stats)),
            "caches": sum(caches[f"{level}_hits"] * getattr(t.cache, f"{level}_hit_pj")
                          + caches[f"{level}_misses"] * getattr(t.cache, f"{level}_miss_pj")
                          for level in ("l1", "l2", "llc")),
            "dram": dram_energy_pj(t, dram, org.row_bytes, org.access_bytes),
        })  # fmt: skip


def _rate(hits: int, misses: int) -> float:
    return hits / (hits + misses) if hits + misses else 0.0


__all__ = ["CpuRun", "CpuSystem"]
