"""A GPU attached to memory cubes, assembled from a validated config and run on traces.

:class:`GpuSystem` is the one place where the hardware of a GPU system is wired: it builds the
links and the memory network, the L2 slices, the DRAM of every cube and the address mapping,
and connects them. :meth:`GpuSystem.run` replays a workload's kernel launches one after the
other (caches and DRAM state carry over; L1s are flushed between kernels, as GPUs do) and runs
the compiled model epoch by epoch. A watchdog stops a run that stops making progress, naming
where its requests are stuck.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import numpy as np

from ndpsim.analysis.passes import OFFLOAD_PASSES
from ndpsim.energy import gpu_energy, load_energy_table
from ndpsim.engine import events as ev
from ndpsim.engine import loop
from ndpsim.engine.clock import PS_PER_NS, ClockDomain
from ndpsim.engine.stats import StatsRegistry
from ndpsim.errors import ConfigError, SimulationError
from ndpsim.frontend.ir import Module
from ndpsim.hw import cache as cachemod
from ndpsim.hw import link as linkmod
from ndpsim.hw.dram import controller as ctl
from ndpsim.hw.dram.mapping import AddressMapping
from ndpsim.hw.gpu import offload as ofl
from ndpsim.hw.gpu import requests as rq
from ndpsim.hw.gpu import sm as smmod
from ndpsim.hw.gpu.instances import find_instances, first_access, instance_lines
from ndpsim.hw.gpu.work import (
    LINE_BYTES,
    LINE_SHIFT,
    W_NUM_CTAS,
    W_NUM_REGISTERS,
    W_REGISTERS,
    W_SHARED_BYTES,
    W_WARPS_PER_CTA,
    build_kernel_work,
    register_numbering,
)
from ndpsim.hw.network import build_network
from ndpsim.hw.pagetable import PageTable
from ndpsim.policy.learned_mapping import (
    LaunchAccesses,
    LearningPhase,
    learn_mapping,
    single_stack_counts,
    stacks_of,
)
from ndpsim.policy.mapping import ADDRESS_MAPPINGS
from ndpsim.policy.offload import OFFLOAD_SCHEMES, credit_capacity
from ndpsim.simt.memory import BASE_ADDRESS, DeviceMemory
from ndpsim.systems.gpu import model
from ndpsim.systems.gpu.config import GpuSystemConfig
from ndpsim.systems.gpu.footprint import check_gpu_fits
from ndpsim.systems.gpu.summary import summary_rows
from ndpsim.systems.offload import build_offload_state
from ndpsim.trace.trace import Trace

#: The load-latency histogram: bins of this many core cycles, and how many.
LATENCY_BIN_CYCLES, LATENCY_BINS = 50, 64


@dataclass
class Epoch:
    """What a policy sees when a run hands control back between epochs. The arrays are the
    live state: a policy reads them, and may move pages (``page_table.migrate``) for the rest
    of the run to see; modelling the traffic of such a move is the policy's business."""

    time_ps: int
    kernel: int  # index of the launch running
    links: linkmod.Links  # busy time, traffic and utilization windows of every link
    link_labels: list[str]
    page_table: PageTable
    sm_stats: np.ndarray  # this launch's per-SM counters (SM_STAT_NAMES), so far
    l2_stats: np.ndarray  # per-slice counters (L2_STAT_NAMES), whole run so far
    dram_stats: np.ndarray  # per-channel counters (controller STAT_NAMES), whole run so far


@dataclass
class OffloadPlan:
    """What a near-data-processing run offloads: per launch the candidates, their instances and
    each instance's destination stack; and the data mapping (with TOM's learned mapping, the
    line ranges it applies to).

    With a fixed mapping each launch is planned just before it runs, and its line accesses are
    dropped once it has: a paper-size run keeps one launch's plan, not all of them. TOM's
    learned mapping needs every launch's accesses up front (the learning phase may span
    launches, and the chosen mapping places them all)."""

    launches: list[tuple[Any, Any, np.ndarray, dict[str, int]]] = field(default_factory=list)
    # per launch: candidates, instances, destinations, register numbering
    accesses: list[LaunchAccesses | None] = field(default_factory=list)  # per launch, the line
    # transactions of the instances (None once the launch ran, with a fixed mapping)
    positions: list[np.ndarray | None] = field(default_factory=list)  # per launch, the stream
    # position of each transaction
    remap: np.ndarray = field(default_factory=lambda: np.zeros((0, 2), dtype=np.int64))
    # int64[ranges, 2] physical lines using the learned mapping
    remap_mapping: AddressMapping | None = None
    single_stack: list[tuple[int, int]] = field(default_factory=list)  # per launch: instances
    # whose lines all sit in one stack (under the mapping used), instances touching memory
    learning: LearningPhase | None = None  # TOM's learned mapping: the phase that chooses it
    kernels: dict[str, tuple[Any, int]] = field(default_factory=dict)  # TOM: each launched
    # kernel's candidates, and the most registers its threads hold live at once

    @property
    def colocation(self) -> float:
        """The fraction of instances touching memory whose lines all sit in one stack."""
        touching = sum(t for _, t in self.single_stack)
        return sum(n for n, _ in self.single_stack) / touching if touching else 0.0

    def drop_accesses(self, index: int) -> None:
        """Launch ``index`` ran and no placement will revisit it: free its line accesses."""
        if self.learning is None:
            self.accesses[index] = None
            self.positions[index] = None


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


def _log2(value: int, what: str) -> int:
    bits = int(value).bit_length() - 1
    if value < 1 or 1 << bits != value:
        raise ConfigError(f"{what} must be a power of two, got {value}")
    return bits


class _EpochHook(loop.Controller):
    """Hands ``on_epoch`` an :class:`Epoch` every ``loop.EPOCH_PS`` of a launch."""

    def __init__(self, on_epoch, start_ps, kernel, links, labels, page_table, sm, mem, dram):
        self.on_epoch = on_epoch
        self.next_ps = start_ps + loop.EPOCH_PS
        self.epoch = partial(Epoch, kernel=kernel, links=links, link_labels=labels,
                             page_table=page_table, sm_stats=sm.stats, l2_stats=mem.stats,
                             dram_stats=dram.stats)  # fmt: skip

    def epoch_end(self, now_ps: int) -> None:
        self.on_epoch(self.epoch(time_ps=now_ps))
        self.next_ps = now_ps + loop.EPOCH_PS


class _LearnedMapping(loop.Controller):
    """TOM's learning phase: the compiled model stops once the analyzer has seen the instances
    the phase wanted, and ``choose(now_ps)`` chooses the mapping for the rest of the run."""

    def __init__(self, off: ofl.OffloadState, choose: Callable[[int], None]):
        self.off, self.choose = off, choose

    def stop_requested(self) -> bool:
        control = self.off.control
        return bool(control[ofl.C_LEARNING]) and control[ofl.C_LEARN_LEFT] == 0

    def epoch_end(self, now_ps: int) -> None:
        self.choose(now_ps)


def _record_seen(learning: LearningPhase, index: int, off: ofl.OffloadState) -> None:
    """Hand the instances of launch ``index`` that the analyzer saw whole to the phase."""
    learning.record(index, np.flatnonzero(off.inst_home == ofl.SEEN))


class GpuSystem:
    """The hardware of one GPU system; :meth:`run` simulates a workload on it."""

    def __init__(self, config: GpuSystemConfig):
        self.config = config
        c = config
        self.core = ClockDomain.from_ghz("sm", c.sm.clock_ghz)
        self.l2_clock = ClockDomain.from_ghz("l2", c.l2.clock_ghz)
        self.xbar = ClockDomain.from_ghz("crossbar", c.crossbar.clock_ghz)
        dram = c.memory.dram_preset()
        if dram.organization.access_bytes != c.l2.line_bytes:
            raise ConfigError(
                f"memory.dram {dram.name!r} moves {dram.organization.access_bytes} B per access; "
                f"the GPU's {c.l2.line_bytes} B lines need a preset with access_bytes = "
                f"{c.l2.line_bytes}"
            )
        if c.l1.line_bytes != LINE_BYTES or c.l2.line_bytes != LINE_BYTES:
            raise ConfigError(f"l1.line_bytes and l2.line_bytes must be {LINE_BYTES}")
        if c.l1.enabled and c.l1.mshrs < 32:
            raise ConfigError(
                f"l1.mshrs is {c.l1.mshrs}; it must be at least 32, the lines one warp "
                "instruction may touch (its transactions issue together)"
            )
        self.dram_preset = dram
        cubes = c.memory.cubes
        self.channels_per_cube = dram.organization.channels
        org = dram.organization.model_copy(update={"channels": cubes * dram.organization.channels})
        self.system_dram = dram.model_copy(update={"organization": org})
        self.capacity_bytes = cubes * dram.organization.capacity_bytes
        self.network = build_network(cubes, host=True, topology=c.links.cube_topology)
        self.address_mapping = ADDRESS_MAPPINGS.get(c.memory.mapping)()
        self.scheme = OFFLOAD_SCHEMES.get(c.ndp.offload)() if c.ndp else None
        self.mapping = self._mapping()
        # SMs 0 .. gpu_sms-1 are the GPU's; with near-data processing one SM per stack follows
        self.gpu_sms = c.sm.count
        self.sms = c.sm.count + (cubes if c.ndp else 0)
        if c.ndp and c.links.cube_topology == "none":
            raise ConfigError("ndp: stack SMs reach other stacks' data over the cube network; "
                              "set links.cube_topology")  # fmt: skip
        check_gpu_fits(c)  # its arrays fit in memory, before any work starts

    # ----------------------------------------------------------------------- wiring
    def _mapping(self) -> AddressMapping:
        c = self.config
        o = self.dram_preset.organization
        fields = [
            ("channel", _log2(o.channels, "DRAM channels")),
            ("column", _log2(o.columns, "DRAM columns")),
            ("rank", _log2(o.ranks, "DRAM ranks")),
            ("bankgroup", _log2(o.bankgroups, "DRAM bank groups")),
            ("bank", _log2(o.banks, "DRAM banks")),
            ("row", _log2(o.rows, "DRAM rows")),
        ]
        return self.address_mapping.mapping(
            fields, _log2(c.memory.cubes, "memory.cubes"), _log2(LINE_BYTES, "line size"),
            _log2(c.memory.page_bytes, "memory.page_bytes"), c.memory.xor_cube,
        )  # fmt: skip

    def _page_table(self, memory: DeviceMemory, seed: int) -> PageTable:
        c = self.config.memory
        return PageTable.build(BASE_ADDRESS, memory.size_bytes, c.page_bytes,
                               self.capacity_bytes // c.page_bytes,
                               self.address_mapping.placement, seed)  # fmt: skip

    def _links(self):
        c = self.config
        net = self.network
        bandwidth, latency = [], []
        link_ps = round(c.links.latency_ns * PS_PER_NS)
        for kind in net.kinds:
            bandwidth.append({"host-to-cube": c.links.host_to_cube_gbps,
                              "cube-to-host": c.links.cube_to_host_gbps,
                              "cube": c.links.cube_to_cube_gbps or 1.0}[kind])  # fmt: skip
            latency.append(link_ps)
        port_gbps = c.crossbar.bytes_per_cycle * c.crossbar.clock_ghz
        xbar_ps = self.xbar.time(c.crossbar.latency)
        first_sm_port = len(bandwidth)
        bandwidth += [port_gbps] * c.sm.count
        latency += [xbar_ps] * c.sm.count
        first_slice_port = len(bandwidth)
        bandwidth += [port_gbps] * c.l2.slices
        latency += [0] * c.l2.slices
        tsv = np.full(c.memory.cubes, -1, dtype=np.int64)
        if c.memory.internal_gbps > 0:
            tsv[:] = np.arange(len(bandwidth), len(bandwidth) + c.memory.cubes)
            bandwidth += [c.memory.internal_gbps] * c.memory.cubes
            latency += [0] * c.memory.cubes
        links = linkmod.build_links(bandwidth, latency)
        # stack SMs have no crossbar port: their requests start in the logic layer
        sm_ports = np.full(self.sms, -1, dtype=np.int64)
        sm_ports[: c.sm.count] = np.arange(first_sm_port, first_sm_port + c.sm.count)
        slice_ports = np.arange(first_slice_port, first_slice_port + c.l2.slices, dtype=np.int64)
        return links, sm_ports, slice_ports, tsv

    def _sm_params(self) -> np.ndarray:
        c = self.config.sm
        p = np.zeros(smmod.SM_PARAMS, dtype=np.int64)
        p[smmod.S_COUNT] = self.sms
        p[smmod.S_GPU_SMS] = self.gpu_sms
        p[smmod.S_SLOTS] = c.warps
        p[smmod.S_CTAS] = c.ctas
        p[smmod.S_REGISTERS] = c.registers
        p[smmod.S_SHARED] = c.shared_bytes
        p[smmod.S_SCHEDULERS] = c.schedulers
        p[smmod.S_POLICY] = smmod.GTO if c.scheduler == "gto" else smmod.LRR
        p[smmod.S_LAT_ALU] = c.latency_alu
        p[smmod.S_LAT_SFU] = c.latency_sfu
        p[smmod.S_LAT_SHARED] = c.latency_shared
        p[smmod.S_LAT_CONSTANT] = c.latency_constant
        p[smmod.S_LAT_BRANCH] = c.latency_branch
        p[smmod.S_LAT_L1] = self.config.l1.hit_latency
        p[smmod.S_SFU_INTERVAL] = c.sfu_interval
        p[smmod.S_LOAD_SLOTS] = c.load_slots
        p[smmod.S_HEADER_BYTES] = 8  # crossbar flit header
        p[smmod.S_L1_ENABLED] = int(self.config.l1.enabled)
        p[smmod.S_SKIP_IDLE] = int(c.skip_idle_clocks)
        return p

    def _sm_periods(self) -> np.ndarray:
        """Every SM's clock period: the GPU's, and the stack processors' own if configured."""
        period = np.full(self.sms, self.core.period_ps, dtype=np.int64)
        ndp = self.config.ndp
        if ndp and ndp.nsu_clock_ghz:
            period[self.gpu_sms :] = ClockDomain.from_ghz("nsu", ndp.nsu_clock_ghz).period_ps
        return period

    def _slots(self) -> int:
        """Warp slots per SM in the state arrays: the most any SM (GPU or stack) has."""
        ndp = self.config.ndp
        return max(self.config.sm.warps, ndp.stack_warps if ndp else 0)

    def _memory_side(self, slice_ports, tsv, plan: OffloadPlan | None) -> model.MemorySide:
        c = self.config
        p = np.zeros(model.MEM_PARAMS, dtype=np.int64)
        p[model.M_SLICES] = c.l2.slices
        p[model.M_L2_LATENCY] = self.l2_clock.time(c.l2.hit_latency)
        p[model.M_L2_PERIOD] = self.l2_clock.period_ps
        p[model.M_XBAR_LATENCY] = self.xbar.time(c.crossbar.latency)
        p[model.M_HEADER] = c.links.header_bytes
        p[model.M_LINE] = LINE_BYTES
        p[model.M_TCK] = self.dram_preset.timing.tCK_ps
        p[model.M_CUBES] = c.memory.cubes
        p[model.M_CHANNELS_PER_CUBE] = self.channels_per_cube
        p[model.M_L2_ENABLED] = int(c.l2.enabled)
        p[model.M_HEADROOM] = model.headroom(c.sm.count, c.sm.schedulers)
        p[model.M_HIST_BIN_PS] = self.core.time(LATENCY_BIN_CYCLES)
        p[model.M_GPU_SMS] = self.gpu_sms
        p[model.M_IDEAL] = int(bool(c.ndp and c.ndp.ideal))
        p[model.M_WRITE_INVALIDATIONS] = int(
            bool(self.scheme and self.scheme.stack_writes_invalidate)
        )
        bits, xor = self.mapping.arrays()
        remap_bits, remap_xor = bits, xor
        remap = np.zeros((0, 2), dtype=np.int64)
        if plan is not None and plan.remap_mapping is not None:
            remap_bits, remap_xor = plan.remap_mapping.arrays()
            remap = plan.remap
        net = self.network
        next_link, _ = net.route_table()
        channels = self.system_dram.organization.channels
        to_cube, from_cube = self._host_links()
        return model.MemorySide(
            params=p,
            slice_port=slice_ports,
            to_cube=to_cube,
            from_cube=from_cube,
            map_bits=bits,
            map_xor=xor,
            remap=remap,
            remap_bits=remap_bits,
            remap_xor=remap_xor,
            tsv=tsv,
            next_link=next_link,
            link_to=net.link_destination(),
            latency_hist=np.zeros(LATENCY_BINS, dtype=np.int64),
            backlog_head=np.full(channels, -1, dtype=np.int64),
            backlog_tail=np.full(channels, -1, dtype=np.int64),
            tick_at=np.full(channels, smmod.NEVER, dtype=np.int64),
            tick_min=np.full(1, smmod.NEVER, dtype=np.int64),
            mshr_wait_head=np.full(c.l2.slices, -1, dtype=np.int64),
            mshr_wait_tail=np.full(c.l2.slices, -1, dtype=np.int64),
            fields=np.zeros(7, dtype=np.int64),
            nodes=np.zeros(5, dtype=np.int64),
            stats=np.zeros((c.l2.slices, len(model.L2_STAT_NAMES)), dtype=np.int64),
            progress=np.zeros(2, dtype=np.int64),
        )

    # --------------------------------------------------------------------------- run
    def run(self, traces: list[Trace], module: Module, memory: DeviceMemory,
            seed: int | None = None, on_epoch: Callable[[Epoch], None] | None = None,
            ) -> GpuRunResult:  # fmt: skip
        """Simulate the launches of one workload run, in order, on fresh hardware.

        ``on_epoch`` is called every ``loop.EPOCH_PS`` of simulated time with an :class:`Epoch`,
        the place for run-time policies (offload controllers, migration agents) to look and act.
        It, SNDP's offload ratio and TOM's learned mapping are the engine loop's controllers."""
        c = self.config
        start_wall = time.perf_counter()
        seed = c.seed if seed is None else seed
        page_table = self._page_table(memory, seed)
        works: list[Any] = [None] * len(traces)
        plan = None
        if c.ndp and c.ndp.mapping == "learned":  # the learning phase sees every launch
            works = [build_kernel_work(trace, module) for trace in traces]
            plan = self._plan_offloads(works, traces, module, memory, page_table)
        elif c.ndp:
            plan = self._new_plan()
        links, sm_ports, slice_ports, tsv = self._links()
        mem = self._memory_side(slice_ports, tsv, plan)
        l2 = cachemod.build_caches(c.l2.slices, c.l2.size_bytes // c.l2.slices, c.l2.ways,
                                   LINE_BYTES, c.l2.mshrs, interleave=c.l2.slices)  # fmt: skip
        l1 = cachemod.build_caches(self.sms, c.l1.size_bytes, c.l1.ways, LINE_BYTES,
                                   c.l1.mshrs)  # fmt: skip
        dram = ctl.build_dram_state(self.system_dram)
        room = model.headroom(c.sm.count, c.sm.schedulers)
        pool = rq.request_pool(4 * room)  # both grow when a run needs more
        events = ev.event_queue(4 * room)
        page = page_table.compiled
        labels = [self._link_label(i) for i in range(len(links.busy_ps))]
        sm_params = self._sm_params()
        sm_periods = self._sm_periods()
        ratio = self.scheme.controller(c.ndp, self.core) if self.scheme else None
        sm_stats = np.zeros((self.sms, len(smmod.SM_STAT_NAMES)), dtype=np.int64)
        offload_stats = np.zeros((c.memory.cubes, len(ofl.OFFLOAD_STAT_NAMES)), dtype=np.int64)
        fewest_credits = credit_capacity(c.ndp) if c.ndp else np.zeros(3, dtype=np.int64)
        learning = plan.learning if plan else None
        if learning is not None and learning.left:
            self._learning_latency(links, True)
        now = 0
        instructions = threads = 0
        for index, trace in enumerate(traces):
            work = works[index] if works[index] is not None else build_kernel_work(trace, module)
            works[index] = None  # a launch's work is dropped once simulated
            if plan is not None and plan.learning is None:  # a fixed mapping: plan as we go
                self._plan_launch(plan, work, trace, module, page_table)
                self._place_blocks(plan, [index])
            off = self._offload_state(plan, index, work, links, now, seed)
            controllers: list[loop.Controller] = []
            if ratio is not None:
                ratio.attach(off)
                controllers.append(ratio)
            if off.control[ofl.C_LEARNING]:
                controllers.append(_LearnedMapping(off, partial(
                    self._learned, plan, index, off, mem, links, memory, page_table)))  # fmt: skip
            sm = smmod.build_sm_state(sm_params.copy(), sm_periods,
                                      int(work.params[W_NUM_REGISTERS]),
                                      int(work.params[W_NUM_CTAS]), self._slots(), now)  # fmt: skip
            l1.tags[:] = cachemod.INVALID  # L1s are not coherent: flushed at kernel boundaries
            smmod.dispatch_initial(sm, work, off, now)
            if sm.counters[0] == 0 and work.params[W_NUM_CTAS] > 0:
                raise ConfigError(self._does_not_fit(trace, work))
            if on_epoch is not None:
                controllers.append(_EpochHook(on_epoch, now, index, links, labels, page_table,
                                              sm, mem, dram))  # fmt: skip
            now, events, pool = self._run_kernel(sm, work, l1, pool, links, events, sm_ports,
                                                 page, mem, l2, dram, off, now, trace,
                                                 controllers)  # fmt: skip
            if learning is not None and learning.left:  # the phase goes on in the next launch
                _record_seen(learning, index, off)
            if plan is not None:
                plan.drop_accesses(index)
            sm_stats += sm.stats
            if off.stats.shape[0]:
                offload_stats += off.stats
            if off.credits_low.shape[0]:
                fewest_credits = np.minimum(fewest_credits, off.credits_low.min(axis=0))
            instructions += trace.num_warp_instructions
            threads += trace.num_thread_instructions
            self._check_conserved(trace, sm_stats, offload_stats, mem, dram, links,
                                  int(sm_params[smmod.S_HEADER_BYTES]))  # fmt: skip
        if learning is not None and learning.left:
            raise SimulationError(
                f"TOM's learning phase never ended: it observed {len(learning.observed)} of "
                f"the {learning.wanted} offload-candidate instances it wanted"
            )
        self._check_busy(links, dram)
        wall = time.perf_counter() - start_wall
        return self._result(now, len(traces), sm_stats, mem, links, dram, instructions, threads,
                            wall, plan, offload_stats, ratio, fewest_credits)  # fmt: skip

    # -------------------------------------------------------------------------- offloading
    def _physical_lines(self, page_table: PageTable, virtual_lines: np.ndarray) -> np.ndarray:
        table, base, shift = page_table.compiled
        inner = shift - LINE_SHIFT
        frames = table[(virtual_lines >> inner) - base]
        return (frames << inner) | (virtual_lines & ((1 << inner) - 1))

    def _new_plan(self) -> OffloadPlan:
        """An empty plan, once the NDP settings are known to fit together."""
        self.scheme.check(self.config)
        return OffloadPlan()

    def _plan_launch(self, plan, work, trace, module, page_table) -> None:
        """The offload pass on the next launch: its candidate blocks, their instances in the
        trace, and the lines each instance touches."""
        function = module.function(trace.info.kernel)
        candidates = OFFLOAD_PASSES.get(self.scheme.offload_pass(self.config.ndp))(function)
        self.scheme.note_kernel(plan.kernels, function, candidates)
        instances = find_instances(work, candidates)
        owner, vlines, positions = instance_lines(work, instances)
        plines = self._physical_lines(page_table, vlines)
        dest = np.full(len(instances), -1, dtype=np.int64)
        plan.launches.append((candidates, instances, dest, register_numbering(function)))
        plan.accesses.append(LaunchAccesses(len(instances), owner, vlines, plines))
        plan.positions.append(positions)
        plan.single_stack.append((0, 0))

    def _plan_offloads(self, works, traces, module, memory, page_table) -> OffloadPlan:
        """Every launch's plan up front, for TOM's learned mapping."""
        ndp = self.config.ndp
        plan = self._new_plan()
        for work, trace in zip(works, traces, strict=True):
            self._plan_launch(plan, work, trace, module, page_table)
        plan.learning = LearningPhase.of(plan.accesses, ndp.learning_fraction)
        # room for every allocation's line range, empty until the phase has chosen
        plan.remap = np.zeros((len(memory.allocations), 2), dtype=np.int64)
        plan.remap_mapping = self.mapping
        if not plan.learning.wanted:  # no instance touches memory: nothing to learn from
            self._end_learning(plan, memory, page_table, 0)
            return plan
        for acc, (_, instances, dest, _) in zip(plan.accesses, plan.launches, strict=True):
            # while learning, blocks run on the GPU; the analyzer watches those touching memory
            dest[first_access(acc.tx_owner, acc.physical_lines, len(instances)) >= 0] = 0
        return plan

    def _place_blocks(self, plan: OffloadPlan, indices) -> None:
        """Each instance's destination stack under the plan's data mapping (in place), and how
        many instances have all their data in one stack, for launches ``indices``."""
        c = self.config
        for index in indices:
            acc, positions = plan.accesses[index], plan.positions[index]
            _, instances, dest, _ = plan.launches[index]
            line_stacks = stacks_of(self.mapping, plan.remap, plan.remap_mapping,
                                    acc.physical_lines)  # fmt: skip
            dest[:] = self.scheme.destinations(
                acc.tx_owner, positions, acc.physical_lines, line_stacks,
                partial(stacks_of, self.mapping, plan.remap, plan.remap_mapping),
                len(instances), c,
            )  # fmt: skip
            plan.single_stack[index] = single_stack_counts(acc.tx_owner, line_stacks)

    def _end_learning(self, plan: OffloadPlan, memory, page_table, now: int) -> None:
        """TOM's learning phase is over: choose the mapping from the observed instances, map
        the allocations they touched with it (into the plan's remap rows, which the memory
        side reads), and place every block under it."""
        learning = plan.learning

        def line_of(address):
            return page_table.translate(address) >> LINE_SHIFT

        choice = learn_mapping(plan.accesses, learning.observed, self.mapping,
                               self.config.memory.cubes, memory, line_of)  # fmt: skip
        learning.choice, learning.end_ps = choice, now
        plan.remap[:] = 0
        plan.remap[: len(choice.remap_lines)] = choice.remap_lines
        plan.remap_mapping = self.mapping.with_field_at("cube", choice.bit)
        self._place_blocks(plan, range(len(plan.launches)))

    def _host_links(self) -> tuple[np.ndarray, np.ndarray]:
        """The GPU's link to each cube and each cube's link back (TX and RX channels)."""
        net = self.network
        to_cube = np.array([net.link_id(net.host, k) for k in range(net.cubes)], np.int64)
        from_cube = np.array([net.link_id(k, net.host) for k in range(net.cubes)], np.int64)
        return to_cube, from_cube

    def _learning_latency(self, links, learning: bool) -> None:
        """During TOM's learning phase the data sits in CPU memory (sec. 4.3), and every access
        of the phase is modelled with PCIe's latency (sec. 5.1): the GPU-stack links keep their
        bandwidth and each direction adds half of ``ndp.pcie_latency_ns``. Afterwards they are
        the stack links again."""
        c = self.config
        latency_ps = round(c.links.latency_ns * PS_PER_NS)
        if learning:
            latency_ps += round(c.ndp.pcie_latency_ns * PS_PER_NS / 2)
        to_cube, from_cube = self._host_links()
        links.latency_ps[to_cube] = latency_ps
        links.latency_ps[from_cube] = latency_ps

    def _learned(self, plan, index, off, mem, links, memory, page_table, now) -> None:
        """The learning phase has observed all it wanted during launch ``index``: the mapping
        is chosen and applied to the rest of the run, the data is now in GPU memory."""
        _record_seen(plan.learning, index, off)
        self._end_learning(plan, memory, page_table, now)
        mem.remap_bits[:], mem.remap_xor[:] = plan.remap_mapping.arrays()
        off.inst_dest[:] = plan.launches[index][2]
        self._learning_latency(links, False)
        self._start_busy_window(off, links, now)  # the phase's traffic does not count
        off.control[ofl.C_LEARNING] = 0

    def _offload_state(self, plan, index, work, links, now, seed) -> ofl.OffloadState:
        if plan is None or not len(plan.launches[index][1]):
            return ofl.no_offload()
        c = self.config
        ndp = c.ndp
        candidates, instances, dest, registers = plan.launches[index]
        p = np.zeros(ofl.OFFLOAD_PARAMS, dtype=np.int64)
        p[ofl.O_MODE] = self.scheme.mode
        p[ofl.O_CONTROL] = int(ndp.control and not ndp.ideal)
        p[ofl.O_WARP_LIMIT] = int(ndp.warp_limit)
        self.scheme.configure(p, ndp)
        p[ofl.O_LATENCY_PS] = 0 if ndp.ideal else self.core.time(ndp.offload_latency_cycles)
        p[ofl.O_CAPACITY] = ndp.stack_warps
        p[ofl.O_HEADER] = c.links.header_bytes
        p[ofl.O_WINDOW_PS] = self.core.time(ndp.busy_window_cycles)
        p[ofl.O_THRESHOLD_PERMILLE] = round(ndp.busy_threshold * 1000)
        p[ofl.O_CUBES] = c.memory.cubes
        p[ofl.O_REGISTER_BYTES] = 4  # per lane
        p[ofl.O_DECISION] = ofl.DECIDE_ALWAYS if ndp.decision == "always" else ofl.DECIDE_RATIO
        p[ofl.O_CACHE_AWARE] = int(ndp.cache_aware)
        p[ofl.O_READY_PACKETS] = ndp.ready_packets
        tx, rx = self._host_links()
        credits = (ndp.command_entries, ndp.read_data_entries, ndp.write_address_entries)
        self.scheme.check_blocks(candidates, ndp)
        observe = plan.learning.left if plan.learning else 0
        probe = first_access(plan.accesses[index].tx_owner, plan.positions[index], len(instances))
        off = build_offload_state(work, candidates, instances, dest, registers, p, tx, rx,
                                  self.sms, credits, seed * 1_000_003 + index,
                                  observe, probe)  # fmt: skip
        self._start_busy_window(off, links, now)
        return off

    @staticmethod
    def _start_busy_window(off, links, now) -> None:
        """The Channel Busy Monitor's window starts at ``now``."""
        cubes = len(off.tx_link)
        off.monitor[0] = now
        off.monitor[2 : 2 + cubes] = links.busy_ps[off.tx_link]
        off.monitor[2 + cubes :] = links.busy_ps[off.rx_link]

    def _does_not_fit(self, trace, work) -> str:
        c = self.config.sm
        wpc = int(work.params[W_WARPS_PER_CTA])
        regs = ((int(work.params[W_REGISTERS]) * 32 + 255) // 256) * 256 * wpc
        return (
            f"kernel {trace.info.kernel!r} does not fit on an SM: a CTA needs {wpc} warps, "
            f"{regs} registers and {int(work.params[W_SHARED_BYTES])} B of shared memory; an "
            f"SM has {c.warps} warps, {c.registers} registers and {c.shared_bytes} B"
        )

    def _run_kernel(self, sm, work, l1, pool, links, events, sm_ports, page, mem, l2, dram,
                    off, start, trace, controllers):  # fmt: skip
        """Run one launch to its end on the engine's loop, which hands control to
        ``controllers`` between epochs; returns its end and the event queue and request pool
        (grown if the launch needed more)."""
        launch = model.Launch(sm, work, l1, pool, links, events, sm_ports, page, mem, l2, dram,
                              off, lambda pool, now: self._diagnose(sm, mem, dram, pool, trace,
                                                                    now))  # fmt: skip
        end = loop.run(launch, start, controllers)
        self._check_drained(sm, l1, l2, mem, dram, launch.pool, off, trace)
        return end, launch.events, launch.pool

    def _check_drained(self, sm, l1, l2, mem, dram, pool, off, trace) -> None:
        """A finished kernel leaves nothing behind: every request completed and every queue,
        MSHR and warp slot is empty. Anything else is a bug in the model, not a result."""
        left = {
            "requests in flight": rq.in_use(pool),
            "L1 MSHRs in use": int(l1.mshr_used.sum()),
            "L2 MSHRs in use": int(l2.mshr_used.sum()),
            "requests waiting for an L2 MSHR": int((mem.mshr_wait_head >= 0).sum()),
            "requests in DRAM queues": int(dram.q_count.sum()),
            "channel backlogs": int((mem.backlog_head >= 0).sum()),
            "occupied warp slots": int((sm.slot_state != smmod.FREE).sum()),
            "offloads not acknowledged": int(off.pending.sum()),
            "offloads waiting for a stack-SM slot": int((off.queue_head >= 0).sum()),
            "observed learning-phase instances unfinished": int(off.control[ofl.C_LEARN_RUNNING]),
        }
        sent = int(off.stats[:, ofl.K_OFFLOADED].sum())  # no rows without near-data units
        # each counted clock, each scheduler issues, offloads a block or names one reason
        outcomes = int(sm.stats[:, [smmod.T_ISSUED, *smmod.STALL_REASONS]].sum()) + sent
        schedulers = int(sm.params[smmod.S_SCHEDULERS])
        left["scheduler clocks miscounted"] = abs(
            schedulers * int(sm.stats[:, smmod.T_CLOCKS].sum()) - outcomes
        )
        if off.stats.shape[0]:
            capacity = credit_capacity(self.config.ndp)
            acked = int(off.stats[:, ofl.K_ACKED].sum())
            left["offloads never acknowledged"] = sent - acked
            left["warps waiting for credits"] = int((off.credit_head >= 0).sum())
            left["packets in ready buffers"] = int(off.ready_packets.sum())
            left["overdrawn credits"] = int((off.credits_low < 0).sum())
            # every reserved buffer entry was given back (none is, without credits)
            left["stack buffer entries not returned"] = int((capacity - off.credits).sum())
            packets = int(off.stats[:, [ofl.K_RDF, ofl.K_WTA]].sum())
            left["RDF/WTA packets that never reached their NSU"] = packets - int(
                off.pos_arrived.sum()
            )
        broken = {name: n for name, n in left.items() if n}
        if broken:
            raise SimulationError(
                f"kernel {trace.info.kernel!r} finished but left "
                + ", ".join(f"{n} {name}" for name, n in broken.items())
            )

    def _check_conserved(self, trace, sm_stats, offload_stats, mem, dram, links,
                         sm_header_bytes) -> None:  # fmt: skip
        """Every request and packet of the run so far is accounted for, where it was sent and
        where it was answered; a counter that disagrees names the component that lost or
        invented one. The counters are the run's, so each launch checks the run up to its end."""
        c = self.config
        net = self.network
        l2, d = mem.stats.sum(axis=0), dram.stats
        off = offload_stats.sum(axis=0)
        packets = links.traffic[:, :, 1]
        sm_ports = np.arange(len(net.links), len(net.links) + c.sm.count)
        slice_ports = np.arange(sm_ports[-1] + 1, sm_ports[-1] + 1 + c.l2.slices)
        to_cube, from_cube = self._host_links()
        cube_links = [i for i, kind in enumerate(net.kinds) if kind == "cube"]
        requests = [smmod.T_LOADS, smmod.T_STORES, smmod.T_ATOMICS]  # those that left an SM
        gpu_sent = int(sm_stats[: self.gpu_sms, requests].sum())
        stack_sent = int(sm_stats[self.gpu_sms :, requests].sum())
        rdf, wta = int(off[ofl.K_RDF]), int(off[ofl.K_WTA])
        rdf_at_l2 = rdf - int(off[ofl.K_RDF_L1_HITS])  # those the L2 looked up
        rdf_missed = rdf - int(off[ofl.K_RDF_HITS])  # the owning vault forwards their data
        invalidating = mem.params[model.M_WRITE_INVALIDATIONS] != 0
        ideal = bool(c.ndp and c.ndp.ideal)
        served = d[:, ctl.S_READS_DONE] + d[:, ctl.S_WRITES_DONE]
        checks = [  # (component, what, found, expected)
            ("crossbar", "requests from the SMs", int(packets[sm_ports].sum()),
             gpu_sent + rdf + wta),
            ("L2", "accesses and packets passing by", int(l2[model.L_ACCESSES]) + wta
             + rdf - rdf_at_l2, int(packets[sm_ports].sum())),
            ("L2", "loads and atomics answered", int(packets[slice_ports].sum()),
             int(l2[model.L_ACCESSES] - l2[model.L_WRITES] + l2[model.L_ATOMICS]) - rdf_at_l2),
            ("L2", "fills", int(l2[model.L_FILLS]), int(l2[model.L_DRAM_READS]) - rdf_missed),
            ("DRAM", "requests taken", int(d[:, ctl.S_READS].sum() + d[:, ctl.S_WRITES].sum()),
             int(l2[model.L_DRAM_READS] + l2[model.L_DRAM_WRITES]) + stack_sent),
            ("GPU links", "reads answered", int(packets[from_cube, linkmod.READ_DATA].sum())
             + rdf_missed, int(packets[to_cube, linkmod.READ_REQUEST].sum())),
            ("GPU links", "invalidations of NSU writes",
             int(packets[from_cube, linkmod.OTHER].sum()),
             int(off[ofl.K_NSU_WRITES]) if invalidating else 0),
            ("cube network", "writes acknowledged",
             int(packets[cube_links, linkmod.WRITE_ACK].sum()),
             int(packets[cube_links, linkmod.WRITE_REQUEST].sum())),
        ]  # fmt: skip
        for s in range(self.sms):
            st = sm_stats[s]
            checks.append((self._processor_label(s), "L1 hits and misses",
                           int(st[smmod.T_L1_HITS] + st[smmod.T_L1_MISSES]),
                           int(st[smmod.T_L1_ACCESSES])))  # fmt: skip
        for i, st in enumerate(mem.stats):
            checks.append((f"L2 slice {i}", "hits and misses",
                           int(st[model.L_HITS] + st[model.L_MISSES]),
                           int(st[model.L_ACCESSES])))  # fmt: skip
        for ch, st in enumerate(d):
            where = f"DRAM channel {self._channel_label(ch)}"
            checks += [
                (where, "reads served", int(st[ctl.S_READS_DONE]), int(st[ctl.S_READS])),
                (where, "writes served", int(st[ctl.S_WRITES_DONE]), int(st[ctl.S_WRITES])),
                (where, "row hits, misses and conflicts",
                 int(st[[ctl.S_ROW_HITS, ctl.S_ROW_MISSES, ctl.S_ROW_CONFLICTS]].sum()),
                 int(served[ch])),
            ]  # fmt: skip
        per_cube = self.channels_per_cube
        for k in range(c.memory.cubes):
            tx, rx = int(to_cube[k]), int(from_cube[k])
            checks.append((f"{self._link_label(tx)} and back", "writes acknowledged",
                           int(packets[rx, linkmod.WRITE_ACK]),
                           int(packets[tx, linkmod.WRITE_REQUEST])))  # fmt: skip
            if c.ndp:  # the offload requests (and SNDP's WTA packets) out, acknowledgements back
                stack = offload_stats[k]
                checks += [
                    (self._link_label(tx), "offload packets", int(packets[tx, linkmod.OFFLOAD]),
                     (0 if ideal else int(stack[ofl.K_OFFLOADED])) + int(stack[ofl.K_WTA])),
                    (self._link_label(rx), "offload acknowledgements",
                     int(packets[rx, linkmod.OFFLOAD]), 0 if ideal else int(stack[ofl.K_ACKED])),
                ]  # fmt: skip
            if mem.tsv[k] >= 0:  # every access of the cube's vaults crosses its TSVs
                checks.append((self._link_label(int(mem.tsv[k])), "DRAM accesses",
                               int(packets[mem.tsv[k]].sum()),
                               int(served[k * per_cube : (k + 1) * per_cube].sum())))  # fmt: skip
        wrong = [f"{where}: {what} {found}, expected {expected}"
                 for where, what, found, expected in checks if found != expected]  # fmt: skip
        # every packet carries at least its header (a crossbar flit's, a memory packet's, or a
        # line and its header back from the L2); TSVs move bare data
        smallest = np.full(len(links.busy_ps), c.links.header_bytes, dtype=np.int64)
        smallest[sm_ports] = sm_header_bytes
        smallest[slice_ports] = c.links.header_bytes + LINE_BYTES
        smallest[mem.tsv[mem.tsv >= 0]] = 1
        short = links.traffic[:, :, 0] < packets * smallest[:, None]
        for i, k in zip(*np.nonzero(short), strict=True):
            wrong.append(f"{self._link_label(int(i))}: {int(packets[i, k])} "
                         f"{linkmod.CLASS_NAMES[k]} packets in {int(links.traffic[i, k, 0])} "
                         "bytes")  # fmt: skip
        for i in linkmod.misaccounted(links):
            wrong.append(f"{self._link_label(int(i))}: busy {int(links.busy_ps[i])} ps, not "
                         "the time its bytes take on the wire")  # fmt: skip
        if wrong:
            raise SimulationError(
                f"after kernel {trace.info.kernel!r} the counters disagree: " + "; ".join(wrong[:8])
            )

    def _check_busy(self, links, dram) -> None:
        """No link was busier than 100% over any utilization window, nor longer than it existed,
        and no DRAM data bus carried two bursts at once."""
        window = int(links.window_ps[0])
        busiest = linkmod.busiest_window_ps(links)
        wrong = [f"{self._link_label(int(i))} busy {int(busiest[i])} ps in a {window} ps window"
                 for i in np.flatnonzero(busiest > window)]  # fmt: skip
        wrong += [f"{self._link_label(int(i))} busy {int(links.busy_ps[i])} ps by "
                  f"{int(links.busy_until[i])} ps" for i in linkmod.overdrawn(links)]  # fmt: skip
        ranks = self.dram_preset.organization.ranks
        wrong += [f"DRAM channel {self._channel_label(int(b) // ranks)} rank {int(b) % ranks} "
                  f"data bus carrying two bursts at once for {int(dram.bus_overlap[b])} cycles"
                  for b in np.flatnonzero(dram.bus_overlap)]  # fmt: skip
        if wrong:
            raise SimulationError("busier than 100%: " + "; ".join(wrong[:8]))

    def _diagnose(self, sm, mem, dram, pool, trace, now) -> str:
        waiting = int((sm.slot_state == smmod.ACTIVE).sum())
        at_barrier = int((sm.slot_state == smmod.BARRIER).sum())
        queued = int(dram.q_count.sum())
        backlog = int((mem.backlog_head >= 0).sum())
        idle_channels = [
            int(ch) for ch in np.flatnonzero(dram.q_count.sum(axis=1) > 0)
            if mem.tick_at[ch] >= smmod.NEVER
        ]  # fmt: skip
        parts = [
            f"kernel {trace.info.kernel!r} stopped making progress at {now} ps",
            f"{int(sm.counters[3])} of {trace.info.num_ctas} CTAs finished",
            f"{waiting} warps waiting for operands, {at_barrier} at a barrier",
            f"{rq.in_use(pool)} memory requests in flight",
            f"{queued} in DRAM queues, {backlog} channels with a backlog",
        ]
        if idle_channels:
            parts.append(f"DRAM channels {idle_channels[:8]} hold requests but never tick")
        return "; ".join(parts)

    # ------------------------------------------------------------------------ results
    def _result(self, time_ps, kernels, sm_stats, mem, links, dram, instructions, threads, wall,
                plan, offload_stats, ratio, fewest_credits):  # fmt: skip
        c = self.config
        registry = StatsRegistry()
        registry.adopt("sm", smmod.SM_STAT_NAMES, sm_stats[: self.gpu_sms])
        if c.ndp:
            processors = self.scheme.processor
            registry.adopt(processors, smmod.SM_STAT_NAMES, sm_stats[self.gpu_sms :],
                           [f"stack{k}" for k in range(c.memory.cubes)])  # fmt: skip
            registry.adopt("offload", ofl.OFFLOAD_STAT_NAMES, offload_stats,
                           [f"stack{k}" for k in range(c.memory.cubes)])  # fmt: skip
        registry.adopt("l2", model.L2_STAT_NAMES, mem.stats)
        registry.adopt("dram", ctl.STAT_NAMES, dram.stats)
        link_names = [
            f"{cls}_{what}" for cls in linkmod.CLASS_NAMES for what in ("bytes", "packets")
        ]
        traffic = links.traffic.reshape(links.traffic.shape[0], -1)
        labels = [f"{self._link_label(i)}" for i in range(traffic.shape[0])]
        registry.adopt("links", link_names, traffic, labels)
        busy = links.busy_ps.reshape(-1, 1)
        registry.adopt("link_busy", ["busy_ps"], busy, labels)
        registry.adopt_histogram("load_latency_cycles", LATENCY_BIN_CYCLES, mem.latency_hist)
        cycles = max(1, self.core.cycles(time_ps))
        summary = self._summary(registry, time_ps, cycles, instructions, threads, links)
        if c.ndp:
            summary["offload"] = self._offload_summary(plan, offload_stats, sm_stats, threads,
                                                       ratio, fewest_credits, time_ps)  # fmt: skip
        memory_requests = int(sm_stats[:, smmod.T_TRANSACTIONS].sum())
        stats = registry.as_dict()
        # energy counts every SM, the stacks' included
        energy_stats = {**stats, "sm": {"total": dict(zip(smmod.SM_STAT_NAMES,
                                                          map(int, sm_stats.sum(axis=0)),
                                                          strict=True))}}  # fmt: skip
        net = self.network
        # the memory network's links (GPU <-> cubes, cube <-> cube) come first; all of them
        # move data and idle
        capacity = sum(
            {"host-to-cube": c.links.host_to_cube_gbps, "cube-to-host": c.links.cube_to_host_gbps,
             "cube": c.links.cube_to_cube_gbps}[kind] for kind in net.kinds
        )  # fmt: skip
        per_link = links.traffic[:, :, 0].sum(axis=1)
        crossbar_end = len(net.links) + c.sm.count + c.l2.slices  # TSV links follow
        org = self.dram_preset.organization
        energy = gpu_energy(
            load_energy_table(c.energy),
            energy_stats,
            core_cycles=cycles,
            sm_count=self.sms,
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

    def _offload_summary(self, plan, offload_stats, sm_stats, threads, ratio,
                         fewest_credits, time_ps) -> dict[str, Any]:  # fmt: skip
        totals = dict(zip(ofl.OFFLOAD_STAT_NAMES, map(int, offload_stats.sum(axis=0)),
                          strict=True))  # fmt: skip
        instances = sum(len(launch[1]) for launch in plan.launches)
        candidates = sum(len(launch[0]) for launch in plan.launches)
        stack_threads = int(sm_stats[self.gpu_sms :, smmod.T_THREAD_INSTRUCTIONS].sum())
        out = {
            "candidate_blocks": candidates,  # summed over launches
            "instances": instances,
            **totals,
            "offloaded_fraction": totals["offloaded"] / instances if instances else 0.0,
            "offloaded_instruction_fraction": stack_threads / threads if threads else 0.0,
            "colocation": plan.colocation,
        }
        out.update(self.scheme.summary(plan, totals, ratio, fewest_credits, time_ps,
                                       self.config.ndp))  # fmt: skip
        return out

    def _link_label(self, i: int) -> str:
        net = self.network
        if i < len(net.links):
            a, b = net.links[i]
            name = lambda n: "gpu" if n == net.host else f"cube{n}"  # noqa: E731
            return f"{name(a)}->{name(b)}"
        i -= len(net.links)
        if i < self.config.sm.count:
            return f"sm{i}->xbar"
        i -= self.config.sm.count
        if i < self.config.l2.slices:
            return f"l2slice{i}->xbar"
        return f"cube{i - self.config.l2.slices}-tsv"

    def _channel_label(self, ch: int) -> str:
        return f"cube{ch // self.channels_per_cube}-vault{ch % self.channels_per_cube}"

    def _processor_label(self, s: int) -> str:
        if s < self.gpu_sms:
            return f"sm{s}"
        return f"{self.scheme.processor.replace('_', '-')}{s - self.gpu_sms}"

    def _summary(self, registry, time_ps, cycles, instructions, threads, links):
        net = self.network
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


__all__ = ["GpuRunResult", "GpuSystem"]
