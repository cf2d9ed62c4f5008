"""An ``mpu`` system: MPU's processors built from the config, and one run of a program on them
on the skeleton (:mod:`ndpsim.systems.skeleton`).

The cores of every processor form one 2D mesh with the other processors' (XY routing, MPU-Sim's
default network): processor ``(px, py)`` of a ``columns x rows`` grid holds the routers of
cores ``(cx, cy)`` at ``(px * core_columns + cx, py * core_rows + cy)``, and a link between two
processors' routers is an off-chip link. Each core reaches its NBUs' banks over its own TSV bus.
"""

from __future__ import annotations

import numpy as np

from ndpsim.energy import by_component, core_energy_pj, dram_energy_pj, load_energy_table
from ndpsim.engine import events as ev
from ndpsim.engine.clock import ClockDomain
from ndpsim.engine.reference import reference
from ndpsim.engine.stats import StatsRegistry
from ndpsim.engine.timeline import Timeline
from ndpsim.hw import cache, link
from ndpsim.hw import requests as rq
from ndpsim.hw.core import sm as smmod
from ndpsim.hw.core.contract import BANKS, LOGIC_LAYER, SIMT, Cores, place_cores
from ndpsim.hw.core.mpu import NEAR_BANK
from ndpsim.hw.dram import address_map, controller
from ndpsim.hw.dram import vaults as vaultmod
from ndpsim.hw.hops import build_hops
from ndpsim.hw.mpu import hybrid
from ndpsim.hw.mpu.tables import HybridTables, hybrid_tables
from ndpsim.hw.network import build_network
from ndpsim.policy.location import LOCATION_POLICIES
from ndpsim.policy.mapping import ADDRESS_MAPPINGS
from ndpsim.systems.mpu.config import MpuSystemConfig
from ndpsim.systems.mpu.model import State, advance
from ndpsim.systems.mpu.results import MpuRunResult
from ndpsim.systems.skeleton import checks, memory, results
from ndpsim.systems.skeleton import program as skeleton
from ndpsim.systems.skeleton.timeline import DramSampler, LinkSampler, RunTimeline, SimtSampler
from ndpsim.trace.work import LINE_BYTES, W_NUM_CTAS, W_NUM_REGISTERS, build_kernel_work


class MpuSystem(skeleton.ProgramSystem):
    def __init__(self, config: MpuSystemConfig):
        c = self.config = config
        p = c.processors
        banks = c.dram_preset()
        self.one_cube = banks.in_accesses_of(LINE_BYTES)
        self.channels = self.one_cube.organization.channels  # per processor: one per NBU
        self.policy = ADDRESS_MAPPINGS.get(c.memory.mapping)()
        self.mapping = memory.dram_address_mapping(self.policy, self.one_cube, p.count,
                                                   c.memory.page_bytes, xor_cube=False)  # fmt: skip
        self.locations = LOCATION_POLICIES.get(c.pipeline.locations)()
        self.clock = ClockDomain.from_ghz("core", c.core.clock_ghz)
        self.cores = place_cores(["mpu_core", "mpu_nbu"], c, self.clock,
                                 models=(SIMT, NEAR_BANK), sites=(LOGIC_LAYER, BANKS))  # fmt: skip
        self.core_group, self.nbu_group = self.cores.groups
        self.simt = Cores((self.core_group,))  # the SIMT units: the cores on the base die
        self.node = np.array([self._node(u) for u in range(self.simt.count)], dtype=np.int64)
        self.network = build_network(self.simt.count, host=False, topology="mesh",
                                     mesh_columns=p.columns * p.core_columns)  # fmt: skip
        self.hops = build_hops(self.network)  # read-only: every run shares it
        core_at = {int(n): u for u, n in enumerate(self.node)}
        self.mesh_links = [(core_at[a], core_at[b]) for a, b in self.network.links]
        per = p.cores_per_processor
        self.offchip = np.array([a // per != b // per for a, b in self.mesh_links], dtype=bool)
        self.hybrid_params = _hybrid_params(c, banks.organization.access_bytes)
        self.energy_table = load_energy_table(c.energy)

    def _node(self, core: int) -> int:
        """The router of ``core`` in the mesh of every processor's cores."""
        p = self.config.processors
        processor, inside = divmod(core, p.cores_per_processor)
        py, px = divmod(processor, p.columns)
        cy, cx = divmod(inside, p.core_columns)
        return (py * p.core_rows + cy) * (p.columns * p.core_columns) + px * p.core_columns + cx

    def link_label(self, i: int) -> str:
        if i < len(self.mesh_links):
            a, b = self.mesh_links[i]
            return f"core{a}->core{b}" + (" (off-chip)" if self.offchip[i] else "")
        return f"core{i - len(self.mesh_links)}-tsv"

    def channel_label(self, ch: int) -> str:
        return f"processor{ch // self.channels}-nbu{ch % self.channels}"

    def machine(self, module, memory, seed: int) -> MpuRun:
        return MpuRun(self, module, memory, seed)


class MpuRun(skeleton.Machine):
    """The hardware of one run, launch by launch."""

    def __init__(self, system: MpuSystem, module, device_memory, seed: int):
        c, self.system, self.module = system.config, system, module
        i = c.interconnect
        processors, units = c.processors.count, system.simt.count
        capacity = processors * system.one_cube.organization.capacity_bytes
        self.page_table = memory.program_pages(device_memory, c.memory.page_bytes, capacity,
                                               system.policy, seed)  # fmt: skip
        mesh = len(system.mesh_links)
        self.links = link.build_links(
            [i.offchip_gbps if off else i.onchip_gbps for off in system.offchip]
            + [i.tsv_gbps] * units,
            [i.offchip_latency_ps if off else i.hop_latency_ps for off in system.offchip]
            + [i.tsv_latency_ps] * units,
        )  # fmt: skip
        self.tsv = np.arange(mesh, mesh + units, dtype=np.int64)
        self.dram = controller.build_dram_state(memory.all_cubes(system.one_cube, processors))
        self.vaults = vaultmod.build_vaults(system.one_cube.timing.tCK_ps,
                                            processors * system.channels,
                                            np.full(processors, -1, dtype=np.int64))  # fmt: skip
        self.amap = address_map.build_address_map(LINE_BYTES, system.channels,
                                                  *system.mapping.arrays())  # fmt: skip
        room = units * c.core.schedulers * 32 + 1024  # one round of every core's schedulers
        self.pool, self.events = rq.request_pool(4 * room), ev.event_queue(4 * room)
        self.progress = np.array([0, 0, room], dtype=np.int64)
        self.l1 = cache.build_caches(units, LINE_BYTES, 1, LINE_BYTES, 1)  # none: disabled
        self.params = smmod.simt_params(c.core, units, 1, l1_enabled=False)
        self.nbu_free = np.zeros((units, c.processors.subcores), dtype=np.int64)
        self.stats = np.zeros((units, len(smmod.SM_STAT_NAMES)), dtype=np.int64)
        self.core_stats = np.zeros((units, len(hybrid.CORE_STAT_NAMES)), dtype=np.int64)
        self.nbu_stats = np.zeros((system.nbu_group.count, len(hybrid.NBU_STAT_NAMES)),
                                  dtype=np.int64)  # fmt: skip
        self.tables: dict[str, HybridTables] = {}
        self.instructions = self.threads = 0
        self.view = skeleton.LaunchView()

    def epoch(self, index, now_ps):
        return self.view

    def sampler(self, timeline: Timeline) -> RunTimeline:
        """The cores (and the near-bank instructions of each not yet committed), the mesh's
        links and TSV buses, and the NBUs' channels, window by window."""
        system = self.system
        cores = [system.cores.label(u) for u in range(system.simt.count)]
        links = [system.link_label(i) for i in range(len(self.links.busy_ps))]
        channels = [system.channel_label(ch) for ch in range(len(self.vaults.tick_at))]
        return RunTimeline(timeline, [
            SimtSampler(timeline, "cores", cores, system.config.core.schedulers,
                        {"uncommitted": lambda state: state.sm.slot_writes.sum(axis=1)}),
            LinkSampler(timeline, links), DramSampler(timeline, channels),
        ], launches_on="cores")  # fmt: skip

    def _tables(self, kernel: str, classes: np.ndarray):
        """The hybrid pipeline's tables of ``kernel``, built once per run."""
        if kernel not in self.tables:
            c, function = self.system.config, self.module.function(kernel)
            self.tables[kernel] = hybrid_tables(
                function, classes, self.system.locations.hints(function), c.pipeline.near_bank,
                c.pipeline.shared_memory == "near")  # fmt: skip
        return self.tables[kernel]

    def _remote_cache(self) -> cache.Caches:
        """Each core's remote cache, empty at every launch (assumption: like a GPU's L1, it keeps
        nothing across kernels); one line stands for none (``H_REMOTE_CACHE`` is 0 then)."""
        lines = max(1, self.system.config.pipeline.remote_cache_bytes // LINE_BYTES)
        return cache.build_caches(self.system.simt.count, lines * LINE_BYTES, lines, LINE_BYTES, 1)

    def launch(self, index, trace, now_ps):
        work = build_kernel_work(trace, self.module)
        sm = smmod.build_sm_state(self.params.copy(), self.system.simt,
                                  int(work.params[W_NUM_REGISTERS]),
                                  int(work.params[W_NUM_CTAS]), now_ps)  # fmt: skip
        units, slots, registers = sm.reg_ready.shape
        tables = self._tables(trace.info.kernel, work.pc_class)
        ext = hybrid.HybridState(
            params=self.system.hybrid_params, pc_place=tables.pc_place, pc_global=tables.pc_global,
            src_need=tables.src_need, dst_at=tables.dst_at, reg_bytes=tables.reg_bytes,
            reg_at=np.zeros((units, slots, registers), dtype=np.int64),
            move_done=np.zeros((units, slots), dtype=np.int64),
            lines_left=np.zeros(sm.load_left.shape, dtype=np.int64),
            tsv=self.tsv, node=self.system.node, nbu_free=self.nbu_free,
            hops=self.system.hops, amap=self.amap, remote_cache=self._remote_cache(),
            core_stats=np.zeros_like(self.core_stats), nbu_stats=np.zeros_like(self.nbu_stats),
        )  # fmt: skip
        smmod.dispatch_initial(reference(sm), reference(work), reference(ext), now_ps)
        ports = np.full(units, -1, dtype=np.int64)
        state = State(sm, work, self.l1, self.pool, self.links, self.events, ports,
                      self.page_table.compiled, self.vaults, self.dram, self.progress,
                      ext)  # fmt: skip
        return skeleton.Launched(skeleton.AssembledLaunch(
            advance, state, int(self.progress[2]),
            progress=lambda s: (int(s.sm.stats[:, smmod.T_ISSUED].sum()), int(s.progress[0])),
            diagnose=lambda pool, now: f"{trace.info.kernel!r} stuck at {now} ps with "
                                       f"{rq.in_use(pool)} requests in flight"))  # fmt: skip

    def launch_end(self, index, trace, launched, end_ps):
        s = launched.model.state
        self.events, self.pool = s.events, s.pool  # grown, if the launch needed more
        left = checks.memory_path_left(s.pool, s.dram, s.vaults)
        left["occupied warp slots"] = int((s.sm.slot_state != smmod.FREE).sum())
        left["uncommitted near-bank instructions"] = int(s.sm.slot_writes.sum())
        left["loads not gathered"] = int(s.ext.lines_left.sum())
        checks.check_drained(trace.info.kernel, left)
        self.stats += s.sm.stats
        self.core_stats += s.ext.core_stats
        self.nbu_stats += s.ext.nbu_stats
        self.instructions += trace.num_warp_instructions
        self.threads += trace.num_thread_instructions
        issued = int(s.sm.stats[:, smmod.T_ISSUED].sum())
        placed = int(s.ext.core_stats[:, hybrid.C_FAR_INSTRUCTIONS].sum()
                     + s.ext.nbu_stats[:, hybrid.N_INSTRUCTIONS].sum()
                     + s.sm.stats[:, smmod.T_BARRIERS].sum())  # fmt: skip
        taken = int(self.dram.stats[:, [controller.S_READS, controller.S_WRITES]].sum())
        sent = int(self.stats[:, [smmod.T_LOADS, smmod.T_STORES, smmod.T_ATOMICS]].sum()
                   - self.core_stats[:, hybrid.C_REMOTE_CACHE_HITS].sum())  # fmt: skip
        smallest = np.zeros(len(self.links.busy_ps), dtype=np.int64)
        checks.check_conserved(
            trace.info.kernel,
            [("DRAM", "requests taken", taken, sent),
             ("the offload engine", "instructions placed", placed, issued),
             ("the launch", "warp instructions issued", issued, trace.num_warp_instructions),
             *checks.dram_checks(self.dram, self.system.channel_label)],
            checks.packet_errors(self.links, smallest, self.system.link_label))  # fmt: skip

    def result(self, time_ps, launches, wall_seconds):
        system, c = self.system, self.system.config
        labels = [system.link_label(i) for i in range(len(self.links.busy_ps))]
        checks.check_busy(self.links, self.dram, system.one_cube.organization.ranks,
                          system.link_label, system.channel_label)  # fmt: skip
        registry = StatsRegistry()
        for group, stats in (
            (system.core_group, np.hstack([self.stats, self.core_stats])),
            (system.nbu_group, self.nbu_stats),
        ):
            registry.adopt(group.name, group.kind.stat_names, stats, group.instance_labels())
        results.adopt_dram(registry, self.dram)
        results.adopt_links(registry, self.links, labels)
        registry.check()
        cycles = max(1, system.clock.cycles(time_ps))
        dram = registry.totals("dram")
        core, nbu = registry.totals("mpu_core"), registry.totals("mpu_nbu")
        mesh = len(system.mesh_links)
        summary = {
            **results.headline(time_ps, cycles, self.instructions, self.threads),
            **results.dram_figures(dram),
            "near_bank_share": _share(nbu["near_instructions"], self.instructions),
            "accesses": {"whole": nbu["whole_accesses"], "split": core["split_accesses"],
                         "local_transactions": core["local_transactions"],
                         "remote_transactions": core["remote_transactions"],
                         "remote_cache_hits": core["remote_cache_hits"]},
            "register_moves": {"to_far": core["register_moves_to_far"],
                               "to_near": core["register_moves_to_near"],
                               "written_back": core["register_writebacks"]},
            "tsv": results.link_figures(self.links, list(range(mesh, len(labels))), time_ps),
            "mesh": results.link_figures(self.links, list(range(mesh)), time_ps),
        }  # fmt: skip
        energy = self._energy(registry, summary, cycles, dram)
        requests = int(self.stats[:, smmod.T_TRANSACTIONS].sum())
        return MpuRunResult(c.name, int(time_ps), cycles, launches, summary, registry.as_dict(),
                            wall_seconds, self.instructions, self.threads, requests,
                            energy)  # fmt: skip

    def _energy(self, registry, summary, cycles, dram) -> dict[str, float]:
        """Energy by component (MPU Table II's per-access and per-bit energies, in the
        ``energy`` table the config names)."""
        system = self.system
        table, org = system.energy_table, system.one_cube.organization
        i = table.interconnect
        mesh = self.links.traffic[: len(system.offchip), :, 0].sum(axis=1)
        onchip, offchip = int(mesh[~system.offchip].sum()), int(mesh[system.offchip].sum())
        return by_component({
            "cores": core_energy_pj(table, registry.totals("mpu_core"), cycles,
                                    system.simt.count),
            "tsv": summary["tsv"]["bytes"] * 8 * i.tsv_pj_per_bit,
            "on-chip network": onchip * 8 * i.crossbar_pj_per_bit,
            "off-chip links": offchip * 8 * i.link_pj_per_bit,
            "dram": dram_energy_pj(table, dram, org.row_bytes, org.access_bytes),
        })  # fmt: skip


def _hybrid_params(c: MpuSystemConfig, bank_io_bytes: int) -> np.ndarray:
    """The hybrid pipeline's parameters (``hybrid.H_*``) from the config; ``bank_io_bytes``:
    one access of the banks (Table II's 256-bit bank I/O)."""
    p = np.zeros(hybrid.HYBRID_PARAMS, dtype=np.int64)
    p[hybrid.H_INSTRUCTION_BYTES] = c.pipeline.instruction_bytes
    p[hybrid.H_COMMIT_BYTES] = c.pipeline.commit_bytes
    p[hybrid.H_MOVE_REQUEST_BYTES] = c.pipeline.move_request_bytes
    p[hybrid.H_TSV_HEADER_BYTES] = c.pipeline.tsv_header_bytes
    p[hybrid.H_NET_HEADER_BYTES] = c.interconnect.header_bytes
    p[hybrid.H_FLIT_BYTES] = c.interconnect.flit_bytes
    p[hybrid.H_BANK_IO_BYTES] = bank_io_bytes
    p[hybrid.H_NEAR_BANK] = int(c.pipeline.near_bank)
    p[hybrid.H_SUBCORES] = c.processors.subcores
    p[hybrid.H_REMOTE_CACHE] = c.pipeline.remote_cache_bytes // LINE_BYTES
    p[hybrid.H_REMOTE_CACHE_CYCLES] = c.pipeline.remote_cache_cycles
    return p


def _share(part: int, whole: int) -> float:
    return part / whole if whole else 0.0
