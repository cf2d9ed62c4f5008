"""A GPU attached to memory cubes, assembled from a validated config and run on traces.

:class:`GpuSystem` is the one place where the hardware of a GPU system is wired: it builds the
links and the memory network, the L2 slices, the DRAM of every cube and the address mapping,
and connects them. :meth:`GpuSystem.run` replays a workload's kernel launches one after the
other (caches and DRAM state carry over; L1s are flushed between kernels, as GPUs do) on the
skeleton's launch loop (:mod:`ndpsim.systems.skeleton.program`), whose machine is a
:class:`GpuRun`: the hardware of one run, launch by launch. A watchdog stops a run that stops
making progress, naming where its requests are stuck.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import numpy as np

from ndpsim.analysis.passes import OFFLOAD_PASSES
from ndpsim.engine import events as ev
from ndpsim.engine import loop
from ndpsim.engine.clock import PS_PER_NS, ClockDomain
from ndpsim.engine.reference import reference
from ndpsim.engine.timeline import Timeline
from ndpsim.errors import ConfigError, SimulationError
from ndpsim.frontend.ir import Module
from ndpsim.hw import cache as cachemod
from ndpsim.hw import link as linkmod
from ndpsim.hw import requests as rq
from ndpsim.hw.core import sm as smmod
from ndpsim.hw.dram import controller as ctl
from ndpsim.hw.dram.address_map import AddressMap, build_address_map
from ndpsim.hw.dram.mapping import AddressMapping
from ndpsim.hw.dram.vaults import build_vaults
from ndpsim.hw.gpu import offload as ofl
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
from ndpsim.seeding import state63
from ndpsim.simt.memory import DeviceMemory
from ndpsim.systems.gpu import model
from ndpsim.systems.gpu.checks import check_busy, check_conserved, check_drained, diagnose
from ndpsim.systems.gpu.config import GpuSystemConfig
from ndpsim.systems.gpu.footprint import check_gpu_fits
from ndpsim.systems.gpu.layout import GpuLayout, gpu_cores
from ndpsim.systems.gpu.results import (
    LATENCY_BIN_CYCLES,
    LATENCY_BINS,
    GpuRunResult,
    gpu_result,
)
from ndpsim.systems.gpu.timeline import gpu_timeline
from ndpsim.systems.gpu.view import GpuRunView
from ndpsim.systems.offload import build_offload_state
from ndpsim.systems.skeleton.links import add_tsv_links
from ndpsim.systems.skeleton.memory import (
    all_cubes,
    dram_address_mapping,
    physical_lines,
    program_pages,
    programs_pages,
)
from ndpsim.systems.skeleton.program import Launched, Machine, Program, ProgramMix, start_program
from ndpsim.systems.stepping import SteppedRun
from ndpsim.trace.instances import find_instances, first_access, instance_lines
from ndpsim.trace.trace import Trace
from ndpsim.trace.work import (
    L_CTAS,
    L_FIRST_CTA,
    L_REGISTERS,
    L_SHARED_BYTES,
    L_WARPS_PER_CTA,
    LINE_BYTES,
    LINE_SHIFT,
    W_NUM_CTAS,
    W_NUM_REGISTERS,
    build_kernel_work,
    merge_works,
    register_numbering,
)


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
        # an L2 line is one request to the DRAM: back-to-back accesses of a shorter-access DRAM
        # (two 64-byte bursts of an HBM2 pseudo-channel)
        try:
            dram = c.memory.dram_preset().in_accesses_of(c.l2.line_bytes)
        except ConfigError as error:
            raise ConfigError(
                f"memory.dram: the GPU's {c.l2.line_bytes} B lines: {error}"
            ) from None
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
        self.system_dram = all_cubes(dram, cubes)
        self.capacity_bytes = cubes * dram.organization.capacity_bytes
        self.network = build_network(cubes, host=True, topology=c.links.cube_topology,
                                     mesh_columns=c.links.mesh_columns,
                                     host_cubes=c.links.host_cubes)  # fmt: skip
        self.address_mapping = ADDRESS_MAPPINGS.get(c.memory.mapping)()
        self.scheme = OFFLOAD_SCHEMES.get(c.ndp.offload)() if c.ndp else None
        self.mapping = dram_address_mapping(self.address_mapping, dram, cubes,
                                            c.memory.page_bytes, c.memory.xor_cube)  # fmt: skip
        self.cores = gpu_cores(c)
        if c.ndp and not self.network.links_cubes:
            raise ConfigError("ndp: stack SMs reach other stacks' data over the cube network; "
                              "set links.cube_topology")  # fmt: skip
        check_gpu_fits(c)  # its arrays fit in memory, before any work starts
        self.layout = GpuLayout(c, self.network, self.core, dram, self.channels_per_cube,
                                self.cores, self.scheme)  # fmt: skip

    # ----------------------------------------------------------------------- wiring
    def _links(self):
        c = self.config
        net = self.network
        bandwidth, latency = [], []
        link_ps = round(c.links.latency_ns * PS_PER_NS)
        for kind in net.kinds:
            bandwidth.append(c.links.built_gbps(kind))
            latency.append(link_ps)
        port_gbps = c.crossbar.bytes_per_cycle * c.crossbar.clock_ghz
        xbar_ps = self.xbar.time(c.crossbar.latency)
        first_sm_port = len(bandwidth)
        bandwidth += [port_gbps] * c.sm.count
        latency += [xbar_ps] * c.sm.count
        first_slice_port = len(bandwidth)
        bandwidth += [port_gbps] * c.l2.slices
        latency += [0] * c.l2.slices
        tsv = add_tsv_links(bandwidth, latency, c.memory.cubes, c.memory.internal_gbps)
        links = linkmod.build_links(bandwidth, latency)
        # stack SMs have no crossbar port: their requests start in the logic layer
        sm_ports = np.full(self.cores.count, -1, dtype=np.int64)
        sm_ports[: c.sm.count] = np.arange(first_sm_port, first_sm_port + c.sm.count)
        slice_ports = np.arange(first_slice_port, first_slice_port + c.l2.slices, dtype=np.int64)
        return links, sm_ports, slice_ports, tsv

    def _sm_params(self) -> np.ndarray:
        c = self.config
        return smmod.simt_params(c.sm, self.cores.count, c.l1.hit_latency, c.l1.enabled)

    def _address_map(self, plan: OffloadPlan | None) -> AddressMap:
        bits, xor = self.mapping.arrays()
        if plan is None or plan.remap_mapping is None:
            return build_address_map(LINE_BYTES, self.channels_per_cube, bits, xor)
        remap_bits, remap_xor = plan.remap_mapping.arrays()
        return build_address_map(LINE_BYTES, self.channels_per_cube, bits, xor, plan.remap,
                                 remap_bits, remap_xor)  # fmt: skip

    def _memory_side(self, slice_ports) -> model.MemorySide:
        c = self.config
        p = np.zeros(model.MEM_PARAMS, dtype=np.int64)
        p[model.M_SLICES] = c.l2.slices
        p[model.M_L2_LATENCY] = self.l2_clock.time(c.l2.hit_latency)
        p[model.M_L2_PERIOD] = self.l2_clock.period_ps
        p[model.M_XBAR_LATENCY] = self.xbar.time(c.crossbar.latency)
        p[model.M_HEADER] = c.links.header_bytes
        p[model.M_LINE] = LINE_BYTES
        p[model.M_L2_ENABLED] = int(c.l2.enabled)
        p[model.M_HEADROOM] = model.headroom(c.sm.count, c.sm.schedulers)
        p[model.M_HIST_BIN_PS] = self.core.time(LATENCY_BIN_CYCLES)
        p[model.M_IDEAL] = int(bool(c.ndp and c.ndp.ideal))
        p[model.M_WRITE_INVALIDATIONS] = int(
            bool(self.scheme and self.scheme.stack_writes_invalidate)
        )
        return model.MemorySide(
            params=p,
            slice_port=slice_ports,
            latency_hist=np.zeros(LATENCY_BINS, dtype=np.int64),
            mshr_wait_head=np.full(c.l2.slices, -1, dtype=np.int64),
            mshr_wait_tail=np.full(c.l2.slices, -1, dtype=np.int64),
            stats=np.zeros((c.l2.slices, len(model.L2_STAT_NAMES)), dtype=np.int64),
            progress=np.zeros(2, dtype=np.int64),
        )

    # --------------------------------------------------------------------------- run
    def run(self, traces: list[Trace], module: Module, memory: DeviceMemory,
            seed: int | None = None, on_epoch: Callable[[Epoch], None] | None = None,
            timeline: Timeline | None = None) -> GpuRunResult:  # fmt: skip
        """Simulate the launches of one workload run, in order, on fresh hardware.

        ``on_epoch`` is called every ``loop.EPOCH_PS`` of simulated time with an :class:`Epoch`,
        the place for run-time policies (offload controllers, migration agents) to look and act.
        It, SNDP's offload ratio and TOM's learned mapping are the engine loop's controllers.
        A ``timeline`` is filled with the run's counters window by window (:mod:`.timeline`)."""
        return self.start(traces, module, memory, seed, on_epoch, timeline).finish()

    def start(self, traces: list[Trace], module: Module, memory: DeviceMemory,
              seed: int | None = None, on_epoch: Callable[[Epoch], None] | None = None,
              timeline: Timeline | None = None) -> SteppedRun:  # fmt: skip
        """The run of :meth:`run`, for its caller to advance step by step, look at and change
        between steps (:class:`~ndpsim.systems.gpu.view.GpuRunView`), then finish. Nothing is
        simulated until the first step."""
        seed = self.config.seed if seed is None else seed
        build = partial(GpuRun, self, traces, module, memory, seed)
        return start_program(build, traces, on_epoch, timeline)

    def run_programs(self, programs: Sequence[Program], seed: int | None = None,
                     on_epoch: Callable[[Epoch], None] | None = None,
                     timeline: Timeline | None = None) -> GpuRunResult:  # fmt: skip
        """Simulate several programs at once, each on its own SMs (the GPU's split evenly among
        them, :meth:`~ndpsim.hw.core.contract.Cores.programs`) and in its own address space,
        sharing the L2, the links and the memory; each program's launches run in order, the
        next as soon as the one before has ended. The result's summary and statistics report
        each program apart (``programs``) beside the shared components'."""
        return self.start_programs(programs, seed, on_epoch, timeline).finish()

    def start_programs(self, programs: Sequence[Program], seed: int | None = None,
                       on_epoch: Callable[[Epoch], None] | None = None,
                       timeline: Timeline | None = None) -> SteppedRun:  # fmt: skip
        """:meth:`run_programs`, for its caller to advance step by step."""
        seed = self.config.seed if seed is None else seed
        mix = ProgramMix(tuple(programs))
        return start_program(partial(GpuMixRun, self, mix, seed), [mix], on_epoch, timeline)

    # -------------------------------------------------------------------------- offloading
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
        plines = physical_lines(page_table, vlines)
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

    def _learning_latency(self, links, learning: bool) -> None:
        """During TOM's learning phase the data sits in CPU memory (sec. 4.3), and every access
        of the phase is modelled with PCIe's latency (sec. 5.1): the GPU-stack links keep their
        bandwidth and each direction adds half of ``ndp.pcie_latency_ns``. Afterwards they are
        the stack links again."""
        c = self.config
        latency_ps = round(c.links.latency_ns * PS_PER_NS)
        if learning:
            latency_ps += round(c.ndp.pcie_latency_ns * PS_PER_NS / 2)
        links.latency_ps[self.layout.host.to_cube] = latency_ps
        links.latency_ps[self.layout.host.from_cube] = latency_ps

    def _learned(self, plan, index, off, amap, links, memory, page_table, now) -> None:
        """The learning phase has observed all it wanted during launch ``index``: the mapping
        is chosen and applied to the rest of the run, the data is now in GPU memory."""
        _record_seen(plan.learning, index, off)
        self._end_learning(plan, memory, page_table, now)
        amap.remap_bits[:], amap.remap_xor[:] = plan.remap_mapping.arrays()
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
        p[ofl.O_EXECUTION] = self.scheme.execution
        p[ofl.O_POLICY] = self.scheme.decision
        p[ofl.O_CONTROL] = int(ndp.control and not ndp.ideal)
        p[ofl.O_WARP_LIMIT] = int(ndp.warp_limit)
        self.scheme.configure(p, ndp)
        p[ofl.O_LATENCY_PS] = 0 if ndp.ideal else self.core.time(ndp.offload_latency_cycles)
        p[ofl.O_CAPACITY] = self.layout.stack_slots  # the stack processor's kind says
        p[ofl.O_HEADER] = c.links.header_bytes
        p[ofl.O_WINDOW_PS] = self.core.time(ndp.busy_window_cycles)
        p[ofl.O_THRESHOLD_PERMILLE] = round(ndp.busy_threshold * 1000)
        p[ofl.O_CUBES] = c.memory.cubes
        p[ofl.O_REGISTER_BYTES] = 4  # per lane
        p[ofl.O_DECISION] = ofl.DECIDE_ALWAYS if ndp.decision == "always" else ofl.DECIDE_RATIO
        p[ofl.O_CACHE_AWARE] = int(ndp.cache_aware)
        p[ofl.O_READY_PACKETS] = ndp.ready_packets
        tx, rx = self.layout.host.to_cube, self.layout.host.from_cube
        credits = (ndp.command_entries, ndp.read_data_entries, ndp.write_address_entries)
        self.scheme.check_blocks(candidates, ndp)
        observe = plan.learning.left if plan.learning else 0
        probe = first_access(plan.accesses[index].tx_owner, plan.positions[index], len(instances))
        off = build_offload_state(work, candidates, instances, dest, registers, p, tx, rx,
                                  self.cores.count, credits,
                                  state63(seed, f"offload/launch-{index}"), observe,
                                  probe, self.cores.logic_layer_units(c.memory.cubes),
                                  int(self.cores.slots().max()))  # fmt: skip
        self._start_busy_window(off, links, now)
        return off

    @staticmethod
    def _start_busy_window(off, links, now) -> None:
        """The Channel Busy Monitor's window starts at ``now``."""
        cubes = len(off.tx_link)
        off.monitor[0] = now
        off.monitor[2 : 2 + cubes] = links.busy_ps[off.tx_link]
        off.monitor[2 + cubes :] = links.busy_ps[off.rx_link]

    def _does_not_fit(self, trace, work, launch: int = 0) -> str:
        """Why the CTAs of ``launch`` (a row of ``work.launches``; ``trace``'s) fit on no SM."""
        c = self.config.sm
        row = work.launches[launch]
        wpc = int(row[L_WARPS_PER_CTA])
        regs = ((int(row[L_REGISTERS]) * 32 + 255) // 256) * 256 * wpc
        return (
            f"kernel {trace.info.kernel!r} does not fit on an SM: a CTA needs {wpc} warps, "
            f"{regs} registers and {int(row[L_SHARED_BYTES])} B of shared memory; an "
            f"SM has {c.warps} warps, {c.registers} registers and {c.shared_bytes} B"
        )


class GpuRun(Machine):
    """The hardware of one run of a :class:`GpuSystem` (fresh caches, DRAM, links and page
    table), driven launch by launch by the skeleton (:mod:`ndpsim.systems.skeleton.program`):
    each launch gets its SMs' state and its offload state, the offload scheme's controllers,
    and is checked and added up when it ends."""

    def __init__(self, system: GpuSystem, traces, module, memory, seed,
                 page_table: PageTable | None = None):  # fmt: skip
        self.system = system
        c = system.config
        self.traces, self.module, self.memory, self.seed = traces, module, memory, seed
        self.layout = system.layout
        if page_table is None:
            page_table = program_pages(memory, c.memory.page_bytes, system.capacity_bytes,
                                       system.address_mapping, seed)  # fmt: skip
        self.page_table = page_table
        self.works: list[Any] = [None] * len(traces)
        self.plan = None
        if c.ndp and c.ndp.mapping == "learned":  # the learning phase sees every launch
            self.works = [build_kernel_work(trace, module) for trace in traces]
            self.plan = system._plan_offloads(self.works, traces, module, memory,
                                              self.page_table)  # fmt: skip
        elif c.ndp:
            self.plan = system._new_plan()
        self.links, self.sm_ports, slice_ports, tsv = system._links()
        self.mem = system._memory_side(slice_ports)
        self.amap = system._address_map(self.plan)
        self.vaults = build_vaults(system.dram_preset.timing.tCK_ps,
                                   system.system_dram.organization.channels, tsv)  # fmt: skip
        self.l2 = cachemod.build_caches(c.l2.slices, c.l2.size_bytes // c.l2.slices, c.l2.ways,
                                        LINE_BYTES, c.l2.mshrs, interleave=c.l2.slices)  # fmt: skip
        self.l1 = cachemod.build_caches(system.cores.count, c.l1.size_bytes, c.l1.ways,
                                        LINE_BYTES, c.l1.mshrs)  # fmt: skip
        self.dram = ctl.build_dram_state(system.system_dram)
        room = model.headroom(c.sm.count, c.sm.schedulers)
        self.pool = rq.request_pool(4 * room)  # both grow when a run needs more
        self.events = ev.event_queue(4 * room)
        self.labels = [self.layout.link_label(i) for i in range(len(self.links.busy_ps))]
        self.sm_params = system._sm_params()
        self.ratio = system.scheme.controller(c.ndp, system.core) if system.scheme else None
        self.sm_stats = np.zeros((system.cores.count, len(smmod.SM_STAT_NAMES)), dtype=np.int64)
        self.offload_stats = np.zeros((c.memory.cubes, len(ofl.OFFLOAD_STAT_NAMES)),
                                      dtype=np.int64)  # fmt: skip
        self.fewest_credits = credit_capacity(c.ndp) if c.ndp else np.zeros(3, dtype=np.int64)
        self.learning = self.plan.learning if self.plan else None
        if self.learning is not None and self.learning.left:
            system._learning_latency(self.links, True)
        self.timeline: Timeline | None = None
        self.view = GpuRunView(self.page_table, self.links, self.mem, self.dram, self.sm_stats,
                               self.offload_stats)  # fmt: skip
        self.instructions = self.threads = 0
        self.sm: smmod.SmState | None = None  # the launch in flight's

    def sampler(self, timeline: Timeline):
        self.timeline = timeline
        return gpu_timeline(timeline, self.layout, self.labels, self.ratio)

    def epoch(self, index: int, now_ps: int) -> Epoch:
        return Epoch(time_ps=now_ps, kernel=index, links=self.links, link_labels=self.labels,
                     page_table=self.page_table, sm_stats=self.sm.stats,
                     l2_stats=self.mem.stats, dram_stats=self.dram.stats)  # fmt: skip

    def launch(self, index: int, trace: Trace, now_ps: int) -> Launched:
        system, plan = self.system, self.plan
        work = self.works[index]
        if work is None:
            work = build_kernel_work(trace, self.module)
        self.works[index] = None  # a launch's work is dropped once simulated
        if plan is not None and plan.learning is None:  # a fixed mapping: plan as we go
            system._plan_launch(plan, work, trace, self.module, self.page_table)
            system._place_blocks(plan, [index])
        off = system._offload_state(plan, index, work, self.links, now_ps, self.seed)
        controllers: list[loop.Controller] = []
        if self.ratio is not None:
            self.ratio.attach(off)
            controllers.append(self.ratio)
        if off.control[ofl.C_LEARNING]:
            controllers.append(_LearnedMapping(off, partial(
                system._learned, plan, index, off, self.amap, self.links, self.memory,
                self.page_table)))  # fmt: skip
        sm = smmod.build_sm_state(self.sm_params.copy(), system.cores,
                                  int(work.params[W_NUM_REGISTERS]),
                                  int(work.params[W_NUM_CTAS]), now_ps)  # fmt: skip
        self.l1.tags[:] = cachemod.INVALID  # L1s are not coherent: flushed at kernel boundaries
        smmod.dispatch_initial(reference(sm), reference(work), reference(off), now_ps)
        if sm.counters[0] == 0 and work.params[W_NUM_CTAS] > 0:
            raise ConfigError(system._does_not_fit(trace, work))
        return self._launched(sm, work, off, trace, controllers)

    def _launched(self, sm, work, off, trace, controllers) -> Launched:
        """A launch of ``work`` on the SMs ``sm`` (their CTAs dispatched) and the run's memory
        side, ready for the loop with its ``controllers``."""
        self.sm = sm
        state = model.GpuState(sm, work, self.l1, self.pool, self.links, self.events,
                               self.sm_ports, self.page_table.compiled, self.mem, self.l2,
                               self.amap, self.layout.host, self.layout.hops, self.vaults,
                               self.dram, off)  # fmt: skip
        stuck = partial(diagnose, sm, self.vaults, self.dram, trace=trace)
        return Launched(model.Launch(state, lambda pool, now: stuck(pool=pool, now=now)),
                        controllers)  # fmt: skip

    def launch_end(self, index: int, trace: Trace, launched: Launched, end_ps: int) -> None:
        s = launched.model.state
        check_drained(self.layout, s.sm, s.l1, s.l2, s.mem, s.vaults, s.dram, s.pool, s.off,
                      trace)  # fmt: skip
        self.events, self.pool = s.events, s.pool  # grown, if the launch needed more
        learning, off = self.learning, s.off
        if learning is not None and learning.left:  # the phase goes on in the next launch
            _record_seen(learning, index, off)
        if self.plan is not None:
            self.plan.drop_accesses(index)
        self.sm_stats += s.sm.stats
        if off.stats.shape[0]:
            self.offload_stats += off.stats
        if off.credits_low.shape[0]:
            self.fewest_credits = np.minimum(self.fewest_credits, off.credits_low.min(axis=0))
        self.instructions += trace.num_warp_instructions
        self.threads += trace.num_thread_instructions
        check_conserved(self.layout, trace, self.sm_stats, self.offload_stats, self.mem,
                        self.vaults, self.dram, self.links,
                        int(self.sm_params[smmod.S_HEADER_BYTES]))  # fmt: skip

    def result(self, time_ps: int, launches: int, wall_seconds: float) -> GpuRunResult:
        learning = self.learning
        if learning is not None and learning.left:
            raise SimulationError(
                f"TOM's learning phase never ended: it observed {len(learning.observed)} of "
                f"the {learning.wanted} offload-candidate instances it wanted"
            )
        check_busy(self.layout, self.links, self.dram)
        timeline = self.timeline
        if timeline is not None and learning is not None and learning.choice is not None:
            timeline.mark(learning.end_ps, "offloading", "TOM's learned mapping chosen",
                          {"stack_bit": learning.choice.bit,
                           "instances_observed": learning.choice.learning_instances})  # fmt: skip
        return gpu_result(self.layout, time_ps, launches, self.sm_stats, self.mem, self.links,
                          self.dram, self.instructions, self.threads, wall_seconds, self.plan,
                          self.offload_stats, self.ratio, self.fewest_credits)  # fmt: skip


class _NextLaunches(loop.Controller):
    """Starts a program's next launch when its launch has ended (the loop stops for it):
    its SMs' L1s flushed, as at any kernel boundary, and its CTAs dispatched at once. Keeps
    when each program's last launch ended."""

    def __init__(self, sm, work, off, l1, launches: list[list[int]],
                 check: Callable[[int, int], None]):  # fmt: skip
        self.sm, self.work, self.off, self.l1 = sm, work, off, l1
        self.launches = launches  # per program, its launches (rows of work.launches) in order
        self.check = check  # check(program, launch): its launch's CTAs were dispatched
        self.running = [0] * len(launches)  # per program, which of them runs
        self.ended_ps = [0] * len(launches)  # per program, when its last launch ended

    def stop_requested(self) -> bool:
        return bool(self.sm.launch_over.any())

    def epoch_end(self, now_ps: int) -> None:
        sm = self.sm
        for p in map(int, np.flatnonzero(sm.launch_over)):
            end = smmod.launch_end_ps(sm, p, now_ps)
            self.l1.tags[sm.program == p] = cachemod.INVALID
            self.running[p] += 1
            if self.running[p] < len(self.launches[p]):
                smmod.start_launch(
                    sm, self.work, p, self.launches[p][self.running[p]], end, more=True
                )  # its last launch's end is recorded too
                smmod.dispatch_initial(reference(sm), reference(self.work), reference(self.off),
                                       end)  # fmt: skip
                self.check(p, self.launches[p][self.running[p]])
            else:
                sm.launch_over[p] = sm.more[p] = 0
                self.ended_ps[p] = end


class GpuMixRun(GpuRun):
    """The hardware of one run of several programs at once (:meth:`GpuSystem.run_programs`):
    one page table holding every program's address space, and one launch of the skeleton
    holding every launch of every program (``merge_works``), whose SMs are split among the
    programs and whose programs go from launch to launch on their own (:class:`_NextLaunches`).
    Offloading plans launch by launch and is refused."""

    def __init__(self, system: GpuSystem, mix: ProgramMix, seed: int):
        c = system.config
        if c.ndp:
            raise ConfigError(f"system {c.name!r} offloads to its memory stacks; several "
                              "programs at once run on a system without near-data processing "
                              "(its offload schemes plan each launch of one program)")  # fmt: skip
        self.mix = mix
        self.units = system.cores.programs(len(mix.programs))  # refuses too few SMs
        table, self.line_offsets = programs_pages(
            [p.memory for p in mix.programs], c.memory.page_bytes, system.capacity_bytes,
            system.address_mapping, seed)  # fmt: skip
        super().__init__(system, [mix], None, None, seed, page_table=table)
        self.next_launches: _NextLaunches | None = None

    def launch(self, index: int, trace: ProgramMix, now_ps: int) -> Launched:
        system = self.system
        works, owners, launches = [], [], []
        for p, program in enumerate(trace.programs):
            launches.append(list(range(len(works), len(works) + len(program.traces))))
            for t in program.traces:
                works.append(build_kernel_work(t, program.module))
                owners.append(p)
        work = merge_works(works, owners, [self.line_offsets[p] for p in owners])
        del works
        sm = smmod.build_sm_state(self.sm_params.copy(), system.cores,
                                  int(work.params[W_NUM_REGISTERS]),
                                  int(work.params[W_NUM_CTAS]), now_ps, self.units)  # fmt: skip
        for p, rows in enumerate(launches):
            smmod.start_launch(sm, work, p, rows[0], now_ps, more=True)
        off = ofl.no_offload()
        self.l1.tags[:] = cachemod.INVALID
        smmod.dispatch_initial(reference(sm), reference(work), reference(off), now_ps)
        traces = [t for program in trace.programs for t in program.traces]

        def check(p: int, row: int) -> None:
            """A launch none of whose CTAs fits on its program's SMs would never run."""
            if sm.next_cta[p] == work.launches[row, L_FIRST_CTA] and work.launches[row, L_CTAS]:
                raise ConfigError(system._does_not_fit(traces[row], work, row))

        for p, rows in enumerate(launches):
            check(p, rows[0])
        self.next_launches = _NextLaunches(sm, work, off, self.l1, launches, check)
        return self._launched(sm, work, off, trace, [self.next_launches])

    def result(self, time_ps: int, launches: int, wall_seconds: float) -> GpuRunResult:
        result = super().result(time_ps, launches, wall_seconds)
        result.kernels = sum(len(p.traces) for p in self.mix.programs)
        core = self.system.core
        per_program, names = [], []
        for p, program in enumerate(self.mix.programs):
            units = self.units == p
            counters = self.sm_stats[units].sum(axis=0)
            per_program.append(counters)
            names.append(program.name)
            ended = self.next_launches.ended_ps[p] or time_ps
            cycles = max(1, core.cycles(ended))
            threads = sum(t.num_thread_instructions for t in program.traces)
            result.summary.setdefault("programs", {})[program.name] = {
                "sms": int(units.sum()),
                "launches": len(program.traces),
                "time_us": ended / 1e6,
                "core_cycles": cycles,
                "warp_instructions": sum(t.num_warp_instructions for t in program.traces),
                "thread_instructions": threads,
                "ipc": threads / cycles,
            }
        result.stats["programs"] = {
            name: dict(zip(smmod.SM_STAT_NAMES, map(int, counters), strict=True))
            for name, counters in zip(names, per_program, strict=True)
        }
        return result


__all__ = ["GpuRunResult", "GpuSystem"]
