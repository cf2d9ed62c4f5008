"""Streaming multiprocessors driven by warp instruction streams, compiled: the SIMT model every
shipped core kind runs on (:mod:`ndpsim.hw.core.contract`; the GPU's SMs, TOM's stack SMs,
SNDP's NSUs), each unit with its own clock, warp slots and place (the host or a stack).

Each SM holds warp slots. A slot runs one warp's instruction stream (from the trace, see
:mod:`ndpsim.trace.work`) in order: an instruction issues once every register it reads or
writes is ready and its unit is free. Every cycle each of the SM's schedulers issues at most one
instruction from the slots it owns, greedy-then-oldest (GTO: keep issuing from the last warp
while it can, else the oldest ready one) or loose round robin. ALU and SFU results are ready a
fixed latency later; a load's registers wait for every line it touches. The LSU handles one
line transaction per cycle: L1 hits complete after the hit latency, misses merge into an MSHR
or allocate one and leave the SM as requests (events for the memory system). Stores are
written through. ``bar.sync`` parks a warp until every unfinished warp of its CTA arrives.

CTAs are dispatched as resources allow: CTA slots, warp slots, registers and shared memory.
When no warp can issue, the SM sleeps until the earliest time one might.

The core knows nothing of offloading. Its functions take an ``ext`` argument they never read
and call the extension points below (:class:`ndpsim.engine.hooks.Hook`), which run the
extension's code chosen by its state's type when numba compiles the core: TOM's and SNDP's
offload execution (:mod:`ndpsim.hw.gpu.offload_execution`) in the GPU systems, MPU's hybrid
pipeline (:mod:`ndpsim.hw.mpu.hybrid`), nothing for None.

The SM also counts why a scheduler did not issue (SNDP's Figure 8 breakdown): a unit was busy,
operands were not ready (a dependency, including waiting for memory), or no warp had an
instruction to issue (idle: no warp, or all at a barrier, finishing, or waiting for the
acknowledgement of an offloaded block, as SNDP counts them).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from ndpsim.engine import events as ev
from ndpsim.engine import kinds
from ndpsim.engine.assemble import Clock
from ndpsim.engine.clock import NEVER
from ndpsim.engine.hooks import Hook
from ndpsim.hw import cache as cachemod
from ndpsim.hw import link as linkmod
from ndpsim.hw import requests as rq
from ndpsim.numba_cache import compiled
from ndpsim.trace.trace import MemoryKind, MemorySpace
from ndpsim.trace.work import (
    C_ALU,
    C_BARRIER,
    C_BRANCH,
    C_CONSTANT,
    C_MEMORY,
    C_SFU,
    L_CTAS,
    L_FIRST_CTA,
    L_FIRST_WARP,
    L_PROGRAM,
    L_REGISTERS,
    L_SHARED_BYTES,
    L_WARPS_PER_CTA,
    LINE_SHIFT,
    W_NUM_CTAS,
    W_NUM_REGISTERS,
    inst_lanes,
    inst_mem,
    inst_pc,
    mem_conflict,
    mem_kind,
    mem_space,
    mem_tx_count,
    mem_tx_first,
    tx_bytes,
    tx_line,
)

if TYPE_CHECKING:
    from ndpsim.hw.core.contract import Cores

# slot states; an extension's own states (a warp waiting for its offloaded block) come after
# EXTENSION_STATES, and a slot in one of them never issues (its slot_ready is NEVER)
FREE, ACTIVE, BARRIER, DRAIN = 0, 1, 2, 3
EXTENSION_STATES = 4
# the unit a slot's next instruction needs: none (ALU, branch, ...), the SFU, the LSU, or the
# LSU and L1 MSHRs (global and local memory)
U_NONE, U_SFU, U_LSU, U_LSU_MSHR = 0, 1, 2, 3

# SM parameters, shared by every unit (what differs between units, their clock, warp slots and
# place, the core kinds give per unit: SmState.period, unit_slots, stack; latencies are in
# cycles of the unit's own clock)
(S_COUNT, S_CTAS, S_REGISTERS, S_SHARED, S_SCHEDULERS, S_POLICY, S_LAT_ALU, S_LAT_SFU,
 S_LAT_SHARED, S_LAT_CONSTANT, S_LAT_BRANCH, S_LAT_L1, S_SFU_INTERVAL, S_LOAD_SLOTS,
 S_HEADER_BYTES, S_L1_ENABLED, S_SKIP_IDLE) = range(17)  # fmt: skip
SM_PARAMS = 17
# S_SKIP_IDLE: 0 evaluates every SM and scheduler on every clock, to check that sleeping
# through clocks in which nothing can issue changes no timing
GTO, LRR = 0, 1

# per-SM statistics
# line_transactions: what the coalescers produced (global and local memory, hits included);
# load/store/atomic_transactions: the requests that left the SM for the L2;
# clocks: those counted (see ``counting``), on each of which every scheduler issues, offloads
# a block or counts one no_issue_* reason; cycles_evaluated: those the loop looked at
(T_ISSUED, T_THREAD_INSTRUCTIONS, T_ACTIVE_CYCLES, T_STALL_UNIT, T_STALL_DEPENDENCY,
 T_STALL_IDLE, T_L1_ACCESSES, T_L1_HITS, T_L1_MISSES, T_L1_MERGES, T_TRANSACTIONS, T_LOADS,
 T_STORES, T_ATOMICS, T_SHARED_ACCESSES, T_CTAS, T_ALU, T_SFU, T_MEMORY, T_BRANCH,
 T_BARRIERS, T_EVALUATED, T_CLOCKS) = range(23)  # fmt: skip
STALL_REASONS = (T_STALL_UNIT, T_STALL_DEPENDENCY, T_STALL_IDLE)
SM_STAT_NAMES = (
    "warp_instructions", "thread_instructions", "active_cycles", "no_issue_unit_busy",
    "no_issue_dependency", "no_issue_idle", "l1_accesses", "l1_hits", "l1_misses",
    "l1_mshr_merges", "line_transactions", "load_transactions", "store_transactions",
    "atomic_transactions", "shared_accesses", "ctas", "alu_instructions", "sfu_instructions",
    "memory_instructions", "branch_instructions", "barriers", "cycles_evaluated", "clocks",
)  # fmt: skip

# events the SM emits: a request for the L2 (host units) or for the stack's vaults (units in a
# stack)
EV_L2_REQUEST, EV_NDP_REQUEST = kinds.declare(__name__, "L2_REQUEST", "NDP_REQUEST")


class SmState(NamedTuple):
    params: np.ndarray  # int64[SM_PARAMS]
    period: np.ndarray  # int64[sms]: clock period (ps); SNDP's NSUs run at half the GPU's
    unit_slots: np.ndarray  # int64[sms]: warp slots of each unit (the arrays hold the most)
    stack: np.ndarray  # int64[sms]: the memory stack a unit sits in; -1 for a host core
    program: np.ndarray  # int64[sms]: the program whose CTAs a unit takes; -1 for a unit that
    # takes none (a logic-layer unit runs the blocks offloaded to its stack instead)
    slot_warp: np.ndarray  # int64[sms, slots]: warp index in the launch, -1 when free
    slot_cta: np.ndarray  # int64[sms, slots]
    slot_pos: np.ndarray  # int64[sms, slots]: next instruction
    slot_end: np.ndarray
    slot_ready: np.ndarray  # ps: earliest issue time of the next instruction; NEVER for a slot
    # that cannot issue (free, at a barrier, draining), so one comparison filters a slot
    slot_state: np.ndarray
    slot_unit: np.ndarray  # U_*: the unit the next instruction needs (kept with slot_ready, so
    # the scheduler decides from the SM's own arrays without reading the instruction stream)
    slot_age: np.ndarray  # dispatch order, for "oldest first"
    reg_ready: np.ndarray  # int64[sms, slots, registers]: ps the value is available
    load_left: np.ndarray  # int64[sms, slots, load slots]: transactions still in flight
    load_pc: np.ndarray
    load_done: np.ndarray  # latest L1-hit completion among the load's transactions
    slot_writes: np.ndarray  # int64[sms, slots]: a stack slot's writes not yet acknowledged
    sched_last: np.ndarray  # int64[sms, schedulers]: last slot issued (GTO), last scanned (LRR)
    sched_next: np.ndarray  # int64[sms, schedulers]: no slot of the scheduler can issue earlier
    # (a lower bound; a scheduler whose bound is in the future is not scanned)
    sched_stall: np.ndarray  # int64[sms, schedulers]: why it last failed to issue (T_STALL_*),
    # charged for every cycle until it is scanned again
    clock_last: np.ndarray  # int64[sms]: the last clock edge whose outcome is counted (ps);
    # only the clocks of an SM that has a warp or the launch a CTA left are (see ``counting``)
    sm_ctas: np.ndarray  # int64[sms]
    sm_warps: np.ndarray
    sm_registers: np.ndarray
    sm_shared: np.ndarray
    sm_next: np.ndarray  # int64[sms]: next time the SM has something to try (ps)
    sm_min: np.ndarray  # int64[1]: a lower bound of sm_next over all SMs
    mem_blocked: np.ndarray  # bool[sms]: a line transaction found no MSHR or load slot; memory
    # instructions wait for fills to free enough, other instructions still issue
    mem_need: np.ndarray  # int64[sms]: free L1 MSHRs the blocked memory instructions wait for
    # (the fewest any of them needs; 0 when one waits for a load slot or a request buffer)
    sfu_free: np.ndarray  # int64[sms]
    ldst_free: np.ndarray  # int64[sms]
    cta_sm: np.ndarray  # int64[ctas]
    cta_left: np.ndarray  # warps of the CTA not finished
    cta_arrived: np.ndarray  # warps of the CTA waiting at a barrier
    counters: np.ndarray  # int64[4]: CTAs dispatched, dispatch age, warps finished, CTAs
    # finished
    next_cta: np.ndarray  # int64[programs]: each program's next CTA to dispatch, and one past
    end_cta: np.ndarray  # the last of its launch running (CTAs of the work, in order)
    unfinished: np.ndarray  # int64[programs]: CTAs of its launch running not finished yet
    more: np.ndarray  # int64[programs]: 1 while the program has launches after this one
    launch_over: np.ndarray  # int64[programs]: 1 when its launch ended and another waits (the
    # loop stops for the system to start it: launch_ended)
    owed: np.ndarray  # int64[programs]: its requests in flight (a launch ends when its CTAs
    # have finished and its requests completed, as a lone program's does)
    done_at: np.ndarray  # int64[programs]: when its request last completed (ps)
    stats: np.ndarray  # int64[sms, len(SM_STAT_NAMES)]


#: Bytes of a request's header on an SM's port (a crossbar flit's; assumption).
PORT_HEADER_BYTES = 8


def simt_params(core, units: int, l1_hit_latency: int, l1_enabled: bool) -> np.ndarray:
    """The parameters the compiled SIMT core reads (``S_*``) for ``units`` units with the
    settings ``core`` (a :class:`~ndpsim.hw.core.simt_config.SimtConfig`), and an L1 of
    ``l1_hit_latency`` cycles (if ``l1_enabled``)."""
    p = np.zeros(SM_PARAMS, dtype=np.int64)
    p[S_COUNT] = units
    p[S_CTAS] = core.ctas
    p[S_REGISTERS] = core.registers
    p[S_SHARED] = core.shared_bytes
    p[S_SCHEDULERS] = core.schedulers
    p[S_POLICY] = GTO if core.scheduler == "gto" else LRR
    p[S_LAT_ALU] = core.latency_alu
    p[S_LAT_SFU] = core.latency_sfu
    p[S_LAT_SHARED] = core.latency_shared
    p[S_LAT_CONSTANT] = core.latency_constant
    p[S_LAT_BRANCH] = core.latency_branch
    p[S_LAT_L1] = l1_hit_latency
    p[S_SFU_INTERVAL] = core.sfu_interval
    p[S_LOAD_SLOTS] = core.load_slots
    p[S_HEADER_BYTES] = PORT_HEADER_BYTES
    p[S_L1_ENABLED] = int(l1_enabled)
    p[S_SKIP_IDLE] = int(core.skip_idle_clocks)
    return p


def build_sm_state(params: np.ndarray, cores: Cores, registers: int, num_ctas: int,
                   start: int = 0, programs: np.ndarray | None = None) -> SmState:  # fmt: skip
    """The units of ``cores`` (:func:`ndpsim.hw.core.contract.place_cores`), with every slot
    free, sized for ``registers`` registers per warp slot and a launch of ``num_ctas`` CTAs
    starting at ``start`` ps. ``programs`` (several programs at once) gives each unit the
    program whose CTAs it takes (-1: none); by default every unit that takes CTAs takes the one
    program's, all ``num_ctas`` of them (:func:`start_launch` says otherwise)."""
    sms = int(params[S_COUNT])
    if programs is None:
        programs = np.where(cores.take_ctas() != 0, 0, -1).astype(np.int64)
    count = max(1, int(programs.max(initial=0)) + 1)
    period = cores.period_ps()
    unit_slots = cores.slots()
    slots = int(unit_slots.max())
    loads = int(params[S_LOAD_SLOTS])
    shape = (sms, slots)
    return SmState(
        params=params,
        period=period,
        unit_slots=unit_slots,
        stack=cores.stack(),
        program=programs,
        slot_warp=np.full(shape, -1, dtype=np.int64),
        slot_cta=np.full(shape, -1, dtype=np.int64),
        slot_pos=np.zeros(shape, dtype=np.int64),
        slot_end=np.zeros(shape, dtype=np.int64),
        slot_ready=np.full(shape, NEVER, dtype=np.int64),
        slot_state=np.zeros(shape, dtype=np.int64),
        slot_unit=np.zeros(shape, dtype=np.int64),
        slot_age=np.zeros(shape, dtype=np.int64),
        reg_ready=np.zeros((sms, slots, max(registers, 1)), dtype=np.int64),
        load_left=np.zeros((sms, slots, loads), dtype=np.int64),
        load_pc=np.zeros((sms, slots, loads), dtype=np.int64),
        load_done=np.zeros((sms, slots, loads), dtype=np.int64),
        slot_writes=np.zeros(shape, dtype=np.int64),
        sched_last=np.zeros((sms, int(params[S_SCHEDULERS])), dtype=np.int64),
        sched_next=np.full((sms, int(params[S_SCHEDULERS])), NEVER, dtype=np.int64),
        sched_stall=np.full((sms, int(params[S_SCHEDULERS])), T_STALL_IDLE, dtype=np.int64),
        clock_last=start - period.astype(np.int64),
        sm_ctas=np.zeros(sms, dtype=np.int64),
        sm_warps=np.zeros(sms, dtype=np.int64),
        sm_registers=np.zeros(sms, dtype=np.int64),
        sm_shared=np.zeros(sms, dtype=np.int64),
        sm_next=np.full(sms, NEVER, dtype=np.int64),
        sm_min=np.full(1, NEVER, dtype=np.int64),
        mem_blocked=np.zeros(sms, dtype=np.bool_),
        mem_need=np.full(sms, NEVER, dtype=np.int64),
        sfu_free=np.zeros(sms, dtype=np.int64),
        ldst_free=np.zeros(sms, dtype=np.int64),
        cta_sm=np.full(max(num_ctas, 1), -1, dtype=np.int64),
        cta_left=np.zeros(max(num_ctas, 1), dtype=np.int64),
        cta_arrived=np.zeros(max(num_ctas, 1), dtype=np.int64),
        counters=np.zeros(4, dtype=np.int64),
        stats=np.zeros((sms, len(SM_STAT_NAMES)), dtype=np.int64),
        next_cta=np.zeros(count, dtype=np.int64),
        end_cta=np.full(count, num_ctas, dtype=np.int64),
        unfinished=np.full(count, num_ctas, dtype=np.int64),
        more=np.zeros(count, dtype=np.int64),
        launch_over=np.zeros(count, dtype=np.int64),
        owed=np.zeros(count, dtype=np.int64),
        done_at=np.zeros(count, dtype=np.int64),
    )


def start_launch(sm: SmState, work, program: int, launch: int, now: int, more: bool) -> None:
    """Program ``program``'s CTAs are launch ``launch`` of ``work`` (a row of its ``launches``)
    from ``now`` ps, after its previous launch ended (several programs at once; see
    :func:`launch_end_ps`); ``more``: it has launches after this one. Its units, idle since,
    count clocks again from ``now``, as a new launch's do; the next dispatch
    (:func:`dispatch_initial`) gives them its CTAs."""
    first, ctas = work.launches[launch, L_FIRST_CTA], work.launches[launch, L_CTAS]
    sm.next_cta[program], sm.end_cta[program] = first, first + ctas
    sm.unfinished[program] = ctas
    sm.more[program] = int(more)
    sm.launch_over[program] = 0
    units = sm.program == program  # as build_sm_state leaves a unit for a new launch
    sm.clock_last[units] = now - sm.period[units]
    sm.sched_last[units], sm.sched_next[units], sm.sched_stall[units] = 0, NEVER, T_STALL_IDLE


# --------------------------------------------------------------------- extension points
# The core takes an ``ext`` argument it never reads: None, or the state of an extension (TOM's
# and SNDP's offload execution, :mod:`ndpsim.hw.gpu.offload_execution`) that acts at these
# points. Each default is what the core does on its own.

#: What a hook that may take an instruction's issue answers.
NOT_TAKEN, HAZARD, ISSUED = -1, 0, 1
#: The packages whose modules implement the hooks.
_EXTENSIONS = ("ndpsim.hw.gpu", "ndpsim.hw.mpu")


def _ready_at_now(ext, sm, work, s, w, pos, now):
    """The earliest the instruction at ``pos`` may issue besides its operands (and the unit it
    needs, in ``sm.slot_unit``, which an extension may change)."""
    return now


def _nothing_to_reset(ext, s, w):
    """A warp starts in slot ``w``: what the extension keeps per slot starts afresh."""
    return


def _not_taken_over(ext, sm, events, s, w, now):
    """Slot ``w`` ran its stream to the end: True if the extension takes the slot over (it ran
    something else than a warp of the launch), else the warp finishes."""
    return False


def _not_parked(ext, sm, work, s, w, now):
    """Slot ``w`` moved past an instruction: the extension may move it further, or park it
    (True) in one of its own states."""
    return False


def _no_waiting_state(ext, sm, work, events, s, w, when):
    """A load of slot ``w`` completed while the slot was in a state of the extension's."""
    return


def _core_issues(ext, sm, work, l1, pool, links, events, port, page, s, w, pos, now):
    """Slot ``w`` is about to issue the instruction at ``pos``: the extension may take it
    (ISSUED, or HAZARD if it could not), else the core issues it (NOT_TAKEN)."""
    return NOT_TAKEN


READY_FROM = Hook("the SIMT core's issue time", _ready_at_now, _EXTENSIONS)
WARP_STARTED = Hook("the SIMT core's warp start", _nothing_to_reset, _EXTENSIONS)
STREAM_TAKEN = Hook("the SIMT core's stream end", _not_taken_over, _EXTENSIONS)
PARKED_AFTER = Hook("the SIMT core's next instruction", _not_parked, _EXTENSIONS)
LOADED_WHILE_WAITING = Hook("the SIMT core's load completion", _no_waiting_state, _EXTENSIONS)
ISSUE_TAKEN = Hook("the SIMT core's issue", _core_issues, _EXTENSIONS)
_ready_from = READY_FROM.call
_warp_started = WARP_STARTED.call
_stream_taken = STREAM_TAKEN.call
_parked_after = PARKED_AFTER.call
_loaded_while_waiting = LOADED_WHILE_WAITING.call
_issue_taken = ISSUE_TAKEN.call


# ------------------------------------------------------------------------------ helpers
@compiled(inline=True)
def align(t, period):
    """The first SM clock edge at or after ``t``."""
    return ((t + period - 1) // period) * period


@compiled(inline=True)
def _registers_per_cta(work, launch):
    """Registers a CTA of ``launch`` takes: per warp, the per-thread count rounded to 256 per
    warp."""
    per_warp = ((work.launches[launch, L_REGISTERS] * 32 + 255) // 256) * 256
    return per_warp * work.launches[launch, L_WARPS_PER_CTA]


@compiled(inline=True)
def _unit_of(work, pos, pc):
    """The unit instruction ``pos`` (static instruction ``pc``) needs."""
    cls = work.pc_class[pc]
    if cls == C_SFU:
        return U_SFU
    if cls != C_MEMORY:
        return U_NONE
    m = inst_mem(work, pos)
    if m < 0:
        return U_NONE  # no lane accessed memory (all guarded off)
    return U_LSU if mem_space(work, m) == MemorySpace.SHARED else U_LSU_MSHR


@compiled(inline=True)
def refresh_ready(sm, work, ext, s, w, now):
    """Recompute when slot ``w``'s next instruction may issue (its operands, and whatever the
    extension makes it wait for), and the unit it needs."""
    pos = sm.slot_pos[s, w]
    pc = inst_pc(work, pos)
    sm.slot_unit[s, w] = _unit_of(work, pos, pc)
    t = _ready_from(ext, sm, work, s, w, pos, now)
    for k in range(work.pc_src_first[pc], work.pc_src_first[pc + 1]):
        v = sm.reg_ready[s, w, work.pc_src[k]]
        if v > t:
            t = v
    for k in range(work.pc_dst_first[pc], work.pc_dst_first[pc + 1]):
        v = sm.reg_ready[s, w, work.pc_dst[k]]
        if v > t:
            t = v
    sm.slot_ready[s, w] = t
    if t < NEVER:
        t = align(t, sm.period[s])
        k = w % sm.params[S_SCHEDULERS]
        if t < sm.sched_next[s, k]:
            sm.sched_next[s, k] = t
        wake(sm, s, t)


@compiled(inline=True)
def wake(sm, s, t):
    """Make sure SM ``s`` is looked at no later than the clock edge at or after ``t``."""
    t = align(t, sm.period[s])
    if t < sm.sm_next[s]:
        sm.sm_next[s] = t
    if t < sm.sm_min[0]:
        sm.sm_min[0] = t


@compiled(inline=True)
def count_clocks(sm, s, t):
    """Count SM ``s``'s clock edges after the last one counted, up to ``t``: each scheduler
    charges them to the reason it last failed to issue for. Whatever would change that reason
    wakes the SM (an operand, a unit, MSHRs) or updates it first (``activate``)."""
    period = sm.period[s]
    n = (t - sm.clock_last[s]) // period
    if n > 0:
        for k in range(sm.sched_stall.shape[1]):
            sm.stats[s, sm.sched_stall[s, k]] += n
        sm.stats[s, T_CLOCKS] += n
        sm.clock_last[s] += n * period


@compiled(inline=True)
def activate(sm, s, w, now):
    """Slot ``w`` has instructions to issue again from ``now`` (a new warp, a barrier released,
    an offloaded block back or started). An idle scheduler now waits on it, a dependency,
    until it scans again; its clocks before ``now`` stay idle."""
    sm.slot_state[s, w] = ACTIVE
    k = w % sm.params[S_SCHEDULERS]
    if sm.sched_stall[s, k] == T_STALL_IDLE:
        count_clocks(sm, s, now - 1)
        sm.sched_stall[s, k] = T_STALL_DEPENDENCY


@compiled(inline=True)
def _done_with_ctas(sm, work):
    return sm.counters[0] == work.params[W_NUM_CTAS]


@compiled(inline=True)
def counting(sm, work, s):
    """Whether SM ``s``'s clocks count: it has a warp, or its program's launch a CTA left to
    dispatch (a unit that takes no CTAs: any launch; GPGPU-Sim clocks a core only then)."""
    if sm.sm_warps[s] > 0:
        return True
    p = sm.program[s]
    if p < 0:
        return not _done_with_ctas(sm, work)
    return sm.next_cta[p] < sm.end_cta[p]


@compiled(inline=True)
def _fits(sm, work, s):
    """Whether SM ``s``'s program has a CTA left to dispatch and it fits on ``s`` now."""
    program = sm.program[s]
    if program < 0 or sm.next_cta[program] >= sm.end_cta[program]:
        return False
    launch = work.cta_launch[sm.next_cta[program]]
    p = sm.params
    return (
        sm.sm_ctas[s] < p[S_CTAS]
        and sm.sm_warps[s] + work.launches[launch, L_WARPS_PER_CTA] <= sm.unit_slots[s]
        and sm.sm_registers[s] + _registers_per_cta(work, launch) <= p[S_REGISTERS]
        and sm.sm_shared[s] + work.launches[launch, L_SHARED_BYTES] <= p[S_SHARED]
    )


@compiled
def _start_cta(sm, work, ext, s, now):
    """Place the next CTA of SM ``s``'s program on it (the caller checked it fits)."""
    program = sm.program[s]
    cta = sm.next_cta[program]
    sm.next_cta[program] += 1
    sm.counters[0] += 1
    launch = work.cta_launch[cta]
    wpc = work.launches[launch, L_WARPS_PER_CTA]
    first_warp = (
        work.launches[launch, L_FIRST_WARP] + (cta - work.launches[launch, L_FIRST_CTA]) * wpc
    )
    sm.cta_sm[cta] = s
    sm.cta_left[cta] = wpc
    sm.cta_arrived[cta] = 0
    sm.sm_ctas[s] += 1
    sm.sm_warps[s] += wpc
    sm.sm_registers[s] += _registers_per_cta(work, launch)
    sm.sm_shared[s] += work.launches[launch, L_SHARED_BYTES]
    sm.stats[s, T_CTAS] += 1
    nregs = work.params[W_NUM_REGISTERS]
    placed = 0
    for w in range(sm.slot_warp.shape[1]):
        if placed == wpc:
            break
        if sm.slot_state[s, w] != FREE:
            continue
        warp = first_warp + placed
        placed += 1
        sm.slot_warp[s, w] = warp
        sm.slot_cta[s, w] = cta
        sm.slot_pos[s, w] = work.warp_first[warp]
        sm.slot_end[s, w] = work.warp_end[warp]
        sm.slot_age[s, w] = sm.counters[1]
        sm.counters[1] += 1
        _warp_started(ext, s, w)
        for r in range(nregs):
            sm.reg_ready[s, w, r] = 0
        for k in range(sm.load_left.shape[2]):
            sm.load_left[s, w, k] = 0
        if sm.slot_pos[s, w] >= sm.slot_end[s, w]:
            sm.slot_state[s, w] = FREE  # an empty stream (cannot happen for real warps)
            sm.slot_warp[s, w] = -1
            sm.cta_left[cta] -= 1
            continue
        activate(sm, s, w, now)
        refresh_ready(sm, work, ext, s, w, now)
    if sm.next_cta[program] == sm.end_cta[program]:
        # the launch's last CTA: its program's SMs without a warp count no more clocks, nor,
        # once no program has a CTA left, the SMs that take none
        everyone = _done_with_ctas(sm, work)
        for other in range(sm.params[S_COUNT]):
            mine = sm.program[other] == program or (sm.program[other] < 0 and everyone)
            if mine and sm.sm_warps[other] == 0:
                count_clocks(sm, other, now)


@compiled(inline=True)
def _launch_over(sm, p):
    """Program ``p``'s launch has ended if its CTAs have finished and its requests completed;
    the loop stops then for its next launch (``more``)."""
    if sm.unfinished[p] == 0 and sm.owed[p] == 0 and sm.more[p] != 0:
        sm.launch_over[p] = 1


def launch_end_ps(sm: SmState, program: int, stopped_ps: int) -> int:
    """When ``program``'s launch ended, the loop having stopped for it at ``stopped_ps``: its
    last request's completion or its units' last clock, as a lone launch's end is."""
    units = sm.program == program
    return max(stopped_ps, int(sm.done_at[program]), int(sm.clock_last[units].max(initial=0)))


@compiled(inline=True)
def owe(sm, pool, rid, program):
    """Request ``rid`` belongs to ``program`` (-1: none), whose launch ends only once it has
    completed (:func:`release_request`)."""
    pool.fields[rid, rq.Q_PROGRAM] = program
    if program >= 0:
        sm.owed[program] += 1


@compiled(inline=True)
def release_request(sm, pool, rid, when):
    """Request ``rid`` completed at ``when``: give its id back. A system releases every
    request of a core so, for a program's launch to end when its last request has (several
    programs at once)."""
    program = pool.fields[rid, rq.Q_PROGRAM]
    rq.release(pool, rid)
    if program >= 0:
        sm.owed[program] -= 1
        sm.done_at[program] = when
        _launch_over(sm, program)


@compiled(inline=True)
def launch_ended(sm):
    """Whether a program's launch ended and its next waits to start (a stop of the loop)."""
    for p in range(sm.launch_over.shape[0]):
        if sm.launch_over[p] != 0:
            return True
    return False


@compiled(entry=True)
def dispatch_initial(sm, work, ext, now):
    """Hand out CTAs breadth-first over the SMs (as the hardware block scheduler does) until no
    SM takes another or the launch has none left."""
    num_ctas = work.params[W_NUM_CTAS]
    placed = True
    while placed and sm.counters[0] < num_ctas:
        placed = False
        for s in range(sm.params[S_COUNT]):
            if sm.counters[0] < num_ctas and _fits(sm, work, s):
                _start_cta(sm, work, ext, s, now)
                placed = True


@compiled
def _warp_finished(sm, work, ext, s, w, now):
    """Slot ``w`` issued its last instruction and has no load in flight: free it; free the CTA
    when it was its last warp, and start the next CTA there."""
    cta = sm.slot_cta[s, w]
    sm.slot_state[s, w] = FREE
    sm.slot_warp[s, w] = -1
    sm.slot_ready[s, w] = NEVER
    sm.counters[2] += 1
    sm.cta_left[cta] -= 1
    if sm.cta_left[cta] == 0:
        sm.counters[3] += 1
        launch = work.cta_launch[cta]
        sm.sm_ctas[s] -= 1
        sm.sm_warps[s] -= work.launches[launch, L_WARPS_PER_CTA]
        sm.sm_registers[s] -= _registers_per_cta(work, launch)
        sm.sm_shared[s] -= work.launches[launch, L_SHARED_BYTES]
        program = work.launches[launch, L_PROGRAM]
        sm.unfinished[program] -= 1
        _launch_over(sm, program)
        while not _done_with_ctas(sm, work) and _fits(sm, work, s):
            _start_cta(sm, work, ext, s, now)
        if not counting(sm, work, s):  # its last clocks
            count_clocks(sm, s, now)
    elif sm.cta_arrived[cta] > 0 and sm.cta_arrived[cta] == sm.cta_left[cta]:
        _release_barrier(sm, work, ext, s, cta, now)


@compiled
def _release_barrier(sm, work, ext, s, cta, now):
    """Every unfinished warp of ``cta`` reached the barrier: let them all go on."""
    sm.cta_arrived[cta] = 0
    nxt = now + sm.period[s]
    for w in range(sm.slot_warp.shape[1]):
        if sm.slot_cta[s, w] == cta and sm.slot_state[s, w] == BARRIER:
            activate(sm, s, w, now)
            refresh_ready(sm, work, ext, s, w, nxt)


@compiled(inline=True)
def _loads_in_flight(sm, s, w):
    for k in range(sm.load_left.shape[2]):
        if sm.load_left[s, w, k] > 0:
            return True
    return False


@compiled(inline=True)
def _drained(sm, s, w):
    """No load of slot ``w`` in flight and (stack slots) every write acknowledged."""
    return sm.slot_writes[s, w] == 0 and not _loads_in_flight(sm, s, w)


@compiled
def stream_done(sm, work, ext, events, s, w, now):
    """Slot ``w`` issued its last instruction and drained: its warp finishes, unless the
    extension ran something else in the slot (an offloaded block) and takes it over."""
    if not _stream_taken(ext, sm, events, s, w, now):
        _warp_finished(sm, work, ext, s, w, now)


@compiled(inline=True)
def advance_slot(sm, work, ext, events, s, w, now):
    """Move slot ``w`` past the instruction it just issued (and past what the extension says
    the slot does not run; it may also park the slot)."""
    sm.slot_pos[s, w] += 1
    if _parked_after(ext, sm, work, s, w, now):
        return
    if sm.slot_pos[s, w] >= sm.slot_end[s, w]:
        if _drained(sm, s, w):
            stream_done(sm, work, ext, events, s, w, now)
        else:
            sm.slot_state[s, w] = DRAIN
            sm.slot_ready[s, w] = NEVER
        return
    if sm.slot_state[s, w] == ACTIVE:
        refresh_ready(sm, work, ext, s, w, now + sm.period[s])


@compiled(inline=True)
def set_destinations(sm, work, s, w, pc, t):
    for k in range(work.pc_dst_first[pc], work.pc_dst_first[pc + 1]):
        sm.reg_ready[s, w, work.pc_dst[k]] = t


# ------------------------------------------------------------------------------ memory
@compiled(inline=True)
def send_to_l2(sm, links, events, pool, port, rid, now, size, traffic):
    """A GPU SM's request crosses its crossbar port to the L2; a stack SM (no port) hands its
    request to the logic layer, which routes it to the owning vault."""
    if port < 0:
        pool.fields[rid, rq.Q_SOURCE] = rq.FROM_STACK
        ev.push(events, now, EV_NDP_REQUEST, rid, 0)
        return
    pool.fields[rid, rq.Q_SOURCE] = rq.FROM_GPU
    arrival = linkmod.send(links, port, now, size, traffic)
    ev.push(events, arrival, EV_L2_REQUEST, rid, 0)


@compiled
def _issue_memory(sm, work, l1, pool, links, events, port, page, s, w, pos, pc, m, now):
    """Issue global/local memory instruction ``m``; False if a structural hazard (no load slot,
    not enough MSHRs, no request ids) prevents it this cycle."""
    p = sm.params
    kind = mem_kind(work, m)
    first = mem_tx_first(work, m)
    count = mem_tx_count(work, m)
    period = sm.period[s]
    header = p[S_HEADER_BYTES]
    use_l1 = p[S_L1_ENABLED] != 0
    if kind == MemoryKind.LOAD or kind == MemoryKind.ATOMIC:
        load = free_load_slot(sm, s, w)
        if load < 0:
            block_memory(sm, s, 0)
            return False
        needed = 0
        if kind == MemoryKind.LOAD and use_l1:
            for t in range(first, first + count):
                line = physical_line(page, tx_line(work, t))
                if not cachemod.probe(l1, s, line) and cachemod.mshr_find(l1, s, line) < 0:
                    needed += 1
            if needed > l1.mshr_line.shape[1] - l1.mshr_used[s]:
                block_memory(sm, s, needed)
                return False
        if pool.meta[0] < count:
            block_memory(sm, s, 0)
            return False
        left = 0
        done = now
        for t in range(first, first + count):
            line = physical_line(page, tx_line(work, t))
            if kind == MemoryKind.LOAD and use_l1:
                sm.stats[s, T_L1_ACCESSES] += 1
                if cachemod.lookup(l1, s, line):
                    sm.stats[s, T_L1_HITS] += 1
                    done = max(done, now + p[S_LAT_L1] * period)
                    continue
                sm.stats[s, T_L1_MISSES] += 1
            rid = rq.new(pool, line, rq.R_LOAD if kind == MemoryKind.LOAD else rq.R_ATOMIC, s,
                         w, tx_bytes(work, t), now)  # fmt: skip
            owe(sm, pool, rid, sm.program[s])
            f = pool.fields[rid]
            f[rq.Q_LOAD] = load
            left += 1
            if kind == MemoryKind.LOAD and use_l1:
                mshr = cachemod.mshr_find(l1, s, line)
                if mshr >= 0:  # someone already fetches this line: wait on its MSHR
                    f[rq.Q_NEXT] = l1.mshr_head[s, mshr]
                    l1.mshr_head[s, mshr] = rid
                    sm.stats[s, T_L1_MERGES] += 1
                    continue
                mshr = cachemod.mshr_allocate(l1, s, line)
                l1.mshr_head[s, mshr] = rid
            if kind == MemoryKind.ATOMIC:
                sm.stats[s, T_ATOMICS] += 1
                size = header + tx_bytes(work, t)
            else:
                sm.stats[s, T_LOADS] += 1
                size = header
            send_to_l2(sm, links, events, pool, port, rid, now + (t - first) * period, size,
                        linkmod.READ_REQUEST)  # fmt: skip
        if left == 0:
            set_destinations(sm, work, s, w, pc, done)
        else:
            set_destinations(sm, work, s, w, pc, NEVER)
            sm.load_left[s, w, load] = left
            sm.load_pc[s, w, load] = pc
            sm.load_done[s, w, load] = done
    else:  # stores and reductions: written through, nobody waits
        if pool.meta[0] < count:
            block_memory(sm, s, 0)
            return False
        for t in range(first, first + count):
            line = physical_line(page, tx_line(work, t))
            if kind == MemoryKind.STORE and use_l1:
                sm.stats[s, T_L1_ACCESSES] += 1
                if cachemod.lookup(l1, s, line):  # write-through, no allocation on a miss
                    sm.stats[s, T_L1_HITS] += 1
                else:
                    sm.stats[s, T_L1_MISSES] += 1
            # a stack slot counts its writes until they are acknowledged (Q_SLOT)
            rid = rq.new(pool, line, rq.R_STORE if kind == MemoryKind.STORE else rq.R_REDUCTION,
                         s, w, tx_bytes(work, t), now)  # fmt: skip
            owe(sm, pool, rid, sm.program[s])
            if port < 0:
                sm.slot_writes[s, w] += 1
            if kind == MemoryKind.STORE:
                sm.stats[s, T_STORES] += 1
            else:
                sm.stats[s, T_ATOMICS] += 1
            send_to_l2(sm, links, events, pool, port, rid, now + (t - first) * period,
                        header + tx_bytes(work, t), linkmod.WRITE_REQUEST)  # fmt: skip
    sm.stats[s, T_TRANSACTIONS] += count
    sm.ldst_free[s] = now + max(count, 1) * period
    return True


@compiled(inline=True)
def free_load_slot(sm, s, w):
    """A load slot of slot ``w`` with nothing in flight, or -1 (its loads in flight are at the
    limit: it waits for one to complete)."""
    for k in range(sm.load_left.shape[2]):
        if sm.load_left[s, w, k] == 0:
            return k
    return -1


@compiled(inline=True)
def physical_line(page, virtual_line):
    """Translate a virtual line through the page table ``page`` = (table, vpn base, shift)."""
    table, base, shift = page
    line_shift = shift - LINE_SHIFT
    vpn = (virtual_line >> line_shift) - base
    offset = virtual_line & ((1 << line_shift) - 1)
    return (table[vpn] << line_shift) | offset


@compiled(inline=True)
def block_memory(sm, s, need):
    """A memory instruction of SM ``s`` cannot issue until ``need`` L1 MSHRs are free (0: until
    the next fill): no memory instruction of the SM tries before then."""
    sm.mem_blocked[s] = True
    if need < sm.mem_need[s]:
        sm.mem_need[s] = need


@compiled(inline=True)
def memory_freed(sm, l1, s, when):
    """A fill reached SM ``s`` (and freed its MSHR): blocked memory instructions try again once
    enough MSHRs are free. Waking on every fill instead would re-scan an SM whose uncoalesced
    loads each need dozens of MSHRs once per returning line, to no effect."""
    if sm.mem_blocked[s] and l1.mshr_line.shape[1] - l1.mshr_used[s] >= sm.mem_need[s]:
        sm.mem_blocked[s] = False
        sm.mem_need[s] = NEVER
        t = align(when, sm.period[s])
        for k in range(sm.sched_next.shape[1]):  # any scheduler may hold a waiting load
            if t < sm.sched_next[s, k]:
                sm.sched_next[s, k] = t
        wake(sm, s, when)


@compiled(inline=True)
def complete_transaction(sm, work, ext, events, s, w, load, when):
    """One line of a load (or atomic) arrived at ``when``; its registers are ready once all
    have."""
    sm.load_left[s, w, load] -= 1
    if when > sm.load_done[s, w, load]:
        sm.load_done[s, w, load] = when
    if sm.load_left[s, w, load] > 0:
        return
    set_destinations(sm, work, s, w, sm.load_pc[s, w, load], sm.load_done[s, w, load])
    state = sm.slot_state[s, w]
    if state == ACTIVE:
        refresh_ready(sm, work, ext, s, w, when)
    elif state == DRAIN and _drained(sm, s, w):
        stream_done(sm, work, ext, events, s, w, when)
    else:  # a state of the extension's (a block waiting for its live-ins)
        _loaded_while_waiting(ext, sm, work, events, s, w, when)


@compiled
def write_acknowledged(sm, work, ext, events, s, w, when):
    """A write of stack slot ``w`` reached its vault; an offloaded block is done only once all
    its writes are (TOM: its acknowledgement tells the GPU which lines to invalidate)."""
    sm.slot_writes[s, w] -= 1
    if sm.slot_state[s, w] == DRAIN and _drained(sm, s, w):
        stream_done(sm, work, ext, events, s, w, when)


# ------------------------------------------------------------------------------- issue
@compiled(inline=True)
def _unit_free(sm, s, w, now):
    """When the unit slot ``w``'s next instruction needs accepts it (``now`` if it needs none;
    NEVER for memory while the SM waits for fills to free MSHRs)."""
    unit = sm.slot_unit[s, w]
    if unit == U_NONE:
        return now
    if unit == U_SFU:
        return max(sm.sfu_free[s], now)
    if unit == U_LSU_MSHR and sm.mem_blocked[s]:
        return NEVER
    return max(sm.ldst_free[s], now)


@compiled
def cycle(sm, work, l1, pool, links, events, port, page, ext, s, now):
    """One clock of SM ``s`` at ``now``: every scheduler issues at most one instruction.
    Returns how many issued."""
    p = sm.params
    period = sm.period[s]
    schedulers = p[S_SCHEDULERS]
    slots = sm.slot_warp.shape[1]
    issued_total = 0
    sm.stats[s, T_EVALUATED] += 1
    gto = p[S_POLICY] == GTO
    next_try = NEVER
    for k in range(schedulers):
        if sm.sched_next[s, k] > now:  # none of its warps can issue yet: skip the scan
            next_try = min(next_try, sm.sched_next[s, k])
            sm.stats[s, sm.sched_stall[s, k]] += 1
            continue
        # Candidates in priority order: GTO tries the last issued slot first, then the oldest;
        # LRR starts after the last slot it served.
        best = -1
        best_age = NEVER
        unit_blocked = False
        waiting = False  # a warp has an instruction whose operands are not ready
        later = NEVER  # the earliest another slot of this scheduler may issue
        last = sm.sched_last[s, k]
        if gto and sm.slot_ready[s, last] <= now and _unit_free(sm, s, last, now) <= now:
            best = last  # the greedy warp can go: nobody ranks before it, no scan needed
            later = now + period
        else:
            for w in range(k, slots, schedulers):
                ready_at = sm.slot_ready[s, w]
                if ready_at > now:
                    later = min(later, ready_at)
                    waiting = waiting or sm.slot_state[s, w] == ACTIVE
                    continue
                free_at = _unit_free(sm, s, w, now)
                if free_at > now:
                    unit_blocked = True
                    later = min(later, free_at)  # NEVER: memory, woken by fills
                    continue
                later = min(later, now + period)  # it could go next cycle if not now
                if gto:
                    age = sm.slot_age[s, w]
                else:
                    age = w - last - 1
                    if age < 0:
                        age += slots
                if age < best_age:
                    best, best_age = w, age
        sm.sched_next[s, k] = later  # issuing below lowers it for the issuing warp
        next_try = min(next_try, later)
        if best < 0:
            if unit_blocked:
                reason = T_STALL_UNIT
            elif waiting:
                reason = T_STALL_DEPENDENCY
            else:  # no warp, or all at a barrier, finishing, or waiting for offloaded blocks
                reason = T_STALL_IDLE
            sm.stats[s, reason] += 1
            sm.sched_stall[s, k] = reason
            continue
        if issue(sm, work, l1, pool, links, events, port, page, ext, s, best, now):
            sm.sched_last[s, k] = best
            issued_total += 1
            # Until its next scan no warp of this scheduler can issue (else it would scan next
            # cycle): the others wait as the scan found them, the issuing one for its operands.
            if unit_blocked:
                sm.sched_stall[s, k] = T_STALL_UNIT
            elif waiting or sm.slot_state[s, best] == ACTIVE:
                sm.sched_stall[s, k] = T_STALL_DEPENDENCY
            else:
                sm.sched_stall[s, k] = T_STALL_IDLE
        else:  # no MSHR, load slot or request left: memory waits for fills, others go on
            sm.stats[s, T_STALL_UNIT] += 1
            sm.sched_stall[s, k] = T_STALL_UNIT
            sm.sched_next[s, k] = now + period
            next_try = min(next_try, now + period)
    if issued_total > 0:
        sm.stats[s, T_ACTIVE_CYCLES] += 1
        next_try = now + period
    sm.sm_next[s] = align(next_try, period) if next_try < NEVER else NEVER
    return issued_total


@compiled
def issue(sm, work, l1, pool, links, events, port, page, ext, s, w, now):
    """Issue slot ``w``'s next instruction, unless the extension takes it (offloading the block
    it starts, say); False if a structural hazard stops it."""
    p = sm.params
    period = sm.period[s]
    pos = sm.slot_pos[s, w]
    taken = _issue_taken(ext, sm, work, l1, pool, links, events, port[s], page, s, w, pos, now)
    if taken != NOT_TAKEN:
        return taken == ISSUED
    pc = inst_pc(work, pos)
    cls = work.pc_class[pc]
    if cls == C_MEMORY:
        m = inst_mem(work, pos)
        if m < 0:  # no lane accessed memory (all guarded off): costs an LSU slot only
            set_destinations(sm, work, s, w, pc, now + p[S_LAT_L1] * period)
        elif mem_space(work, m) == MemorySpace.SHARED:
            conflict = mem_conflict(work, m)
            set_destinations(sm, work, s, w, pc,
                              now + (p[S_LAT_SHARED] + conflict - 1) * period)  # fmt: skip
            sm.ldst_free[s] = now + conflict * period
            sm.stats[s, T_SHARED_ACCESSES] += 1
        elif not _issue_memory(sm, work, l1, pool, links, events, port[s], page, s, w, pos, pc,
                               m, now):  # fmt: skip
            return False
        sm.stats[s, T_MEMORY] += 1
    elif cls == C_SFU:
        set_destinations(sm, work, s, w, pc, now + p[S_LAT_SFU] * period)
        sm.sfu_free[s] = now + p[S_SFU_INTERVAL] * period
        sm.stats[s, T_SFU] += 1
    elif cls == C_BARRIER:
        cta = sm.slot_cta[s, w]
        sm.stats[s, T_BARRIERS] += 1
        sm.stats[s, T_ISSUED] += 1
        sm.stats[s, T_THREAD_INSTRUCTIONS] += inst_lanes(work, pos)
        sm.slot_state[s, w] = BARRIER
        sm.slot_ready[s, w] = NEVER
        sm.cta_arrived[cta] += 1
        advance_slot(sm, work, ext, events, s, w, now)
        if sm.cta_arrived[cta] == sm.cta_left[cta]:
            _release_barrier(sm, work, ext, s, cta, now)
        return True
    elif cls == C_BRANCH:
        set_destinations(sm, work, s, w, pc, now + p[S_LAT_BRANCH] * period)
        sm.stats[s, T_BRANCH] += 1
    elif cls == C_CONSTANT:
        set_destinations(sm, work, s, w, pc, now + p[S_LAT_CONSTANT] * period)
        sm.stats[s, T_ALU] += 1
    else:  # C_ALU and C_EXIT
        set_destinations(sm, work, s, w, pc, now + p[S_LAT_ALU] * period)
        sm.stats[s, T_ALU] += 1
    sm.stats[s, T_ISSUED] += 1
    sm.stats[s, T_THREAD_INSTRUCTIONS] += inst_lanes(work, pos)
    advance_slot(sm, work, ext, events, s, w, now)
    return True


__all__ = [
    "C_ALU",
    "SM_STAT_NAMES",
    "SmState",
    "build_sm_state",
    "complete_transaction",
    "cycle",
    "dispatch_initial",
]


@compiled(inline=True)
def _next_ps(sm):
    return sm.sm_min[0]


@compiled
def _tick(sm, work, l1, pool, links, events, sm_port, page, ext, now):
    """Every SM whose clock edge is ``now`` runs a cycle; the earliest next edge is kept."""
    skip_idle = sm.params[S_SKIP_IDLE] != 0
    t_sm = NEVER
    for s in range(sm.params[S_COUNT]):
        if sm.sm_next[s] != now:
            if sm.sm_next[s] < t_sm:
                t_sm = sm.sm_next[s]
            continue
        if not counting(sm, work, s):  # no warp, and no CTA left for it
            sm.sm_next[s] = NEVER
            continue
        count_clocks(sm, s, now - sm.period[s])  # the clocks it slept through
        sm.clock_last[s] = now  # counted by the evaluation below
        sm.stats[s, T_CLOCKS] += 1
        if not skip_idle:  # every scheduler scans its warps, and the SM runs next clock
            sm.sched_next[s, :] = now
        cycle(sm, work, l1, pool, links, events, sm_port, page, ext, s, now)
        if not skip_idle and counting(sm, work, s):
            sm.sm_next[s] = now + sm.period[s]
        if sm.sm_next[s] < t_sm:
            t_sm = sm.sm_next[s]
    sm.sm_min[0] = t_sm


#: The SMs as a clocked component of the engine's loop.
CLOCK = Clock(_next_ps, _tick)
