"""CPU cores driven by CPU threads' instruction streams (:mod:`ndpsim.trace.cpu_work`),
compiled: one model for the out-of-order core and the in-order one, each core running one
thread's stream.

The out-of-order core is modelled as its instruction window, the way Sniper's
instruction-window-centric model (Carlson et al., TACO 2014) and ZSim's OOO core (Sanchez and
Kozyrakis, ISCA 2013) state theirs:

* **Dispatch.** Every cycle up to ``width`` instructions enter the reorder buffer (ROB) in
  program order, while it has room, a load or atomic has a load-queue entry and a store a
  store-queue entry. A mispredicted branch stops dispatch until it resolves, then for
  ``mispredict_cycles`` (the front end refilling).
* **Execution.** An instruction starts once every register it reads is ready, a cycle after
  dispatch at the earliest (registers are renamed: only true dependences wait); its result is
  ready its class's latency later. A load or atomic goes to memory when it starts, and its
  result is ready when memory answers. Functional units are not contended beyond the dispatch
  width (an assumption: the window and the memory system bound these workloads first).
* **Retire.** Up to ``width`` completed instructions a cycle leave the ROB head in order; a load
  frees its load-queue entry then. A store writes at retire and keeps its store-queue entry
  until memory has taken the write, so the store queue bounds the writes in flight and the load
  queue the loads: the core's memory-level parallelism.
* **Branches.** A two-level GAs predictor (ALP's Table 1): ``history_bits`` of global history
  and the branch pc's low ``pc_bits`` select a 2-bit counter; it is trained with the outcome
  the thread's path took.

A load, store or atomic whose lane made no access (its guard predicate was false) issues as an
integer instruction.

The in-order core (``in_order``) dispatches an instruction only once its sources are ready
(stall on use); loads still overlap up to the load queue, so a miss stalls the core at its
first use rather than at the load.

Memory is outside the core. A load, atomic or store leaves a request in the cores' request
buffer (``CpuCores.req_*``) with the time it wants memory; whoever owns the memory (a system's
cache hierarchy, or a test's fixed latency) takes the buffer after each :func:`tick`, up to
``req_used`` as it grows (an answer may start waiting loads, whose requests join the buffer),
then empties it (``req_used[0] = 0``), and answers each load with :func:`load_done` and each
write with :func:`store_written`, at once or later (a later answer's loads wait in the buffer
for the next round).
Times are picoseconds; latencies are cycles of the core's clock.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ndpsim.engine.clock import NEVER
from ndpsim.numba_cache import compiled
from ndpsim.trace.cpu_work import (
    K_ATOMIC,
    K_BRANCH,
    K_INT,
    K_LOAD,
    K_STORE,
    CpuWork,
)

# core parameters (CpuCores.params)
(P_WIDTH, P_ROB, P_LOAD_QUEUE, P_STORE_QUEUE, P_MISPREDICT, P_IN_ORDER, P_HISTORY_BITS,
 P_PC_BITS, P_PERIOD_PS) = range(9)  # fmt: skip
CORE_PARAMS = 9

#: The most registers one instruction reads whose writers may still be waiting for memory.
MAX_PENDING_SOURCES = 8

# ROB entry states
FREE, WAITING, EXECUTING = 0, 1, 2

# per-core counters
(S_INSTRUCTIONS, S_CYCLES, S_BRANCHES, S_MISPREDICTS, S_LOADS, S_STORES, S_ATOMICS,
 S_ROB_FULL, S_LOAD_QUEUE_FULL, S_STORE_QUEUE_FULL, S_MISPREDICT_STALL, S_DEPENDENCY_STALL,
 S_PEAK_LOADS) = range(13)  # fmt: skip
CORE_STAT_NAMES = (
    "instructions", "cycles", "branches", "mispredicts", "loads", "stores", "atomics",
    "rob_full_cycles", "load_queue_full_cycles", "store_queue_full_cycles",
    "mispredict_stall_cycles", "dependency_stall_cycles", "peak_loads_in_flight",
)  # fmt: skip

# request kinds in the request buffer
REQ_LOAD, REQ_ATOMIC, REQ_STORE = 0, 1, 2


class CpuCores(NamedTuple):
    """Every core of one kind, indexed first by core."""

    params: np.ndarray  # int64[CORE_PARAMS]
    latency: np.ndarray  # int64[classes]: cycles from start to result, per K_* class
    segment: np.ndarray  # int64[cores]: the segment of the next instruction to dispatch
    last: np.ndarray  # int64[cores]: one past the core's last segment
    # the segment at hand, read once when a core enters it (see _enter):
    at_pc: np.ndarray  # int64[cores]: the pc of the next instruction to dispatch
    start_pc: np.ndarray  # int64[cores]: the segment's first pc
    end_pc: np.ndarray  # int64[cores]: one past its last
    access: np.ndarray  # int64[cores]: the next access of the core's stream
    access_end: np.ndarray  # int64[cores]: one past the segment's last access
    access_pc: np.ndarray  # int64[cores]: the pc that makes the next access, -1 for none left
    rob_pc: np.ndarray  # int64[cores, rob]: the pc of each entry's instruction
    rob_kind: np.ndarray  # int64[cores, rob]: its class (K_*) as it executes
    rob_mem: np.ndarray  # int64[cores, rob]: its access, or -1
    rob_state: np.ndarray  # int64[cores, rob]: FREE, WAITING or EXECUTING
    rob_ready: np.ndarray  # int64[cores, rob]: when its known sources are ready
    rob_done: np.ndarray  # int64[cores, rob]: when its result is ready, NEVER until known
    rob_wait: np.ndarray  # int64[cores, rob, MAX_PENDING_SOURCES]: entries it waits on
    rob_pending: np.ndarray  # int64[cores, rob]: how many of rob_wait it still waits on
    rob_waiters: np.ndarray  # int64[cores, rob]: entries waiting on it
    head: np.ndarray  # int64[cores]: the oldest entry
    count: np.ndarray  # int64[cores]: entries in use
    reg_ready: np.ndarray  # int64[cores, registers]: when the latest value is ready
    reg_writer: np.ndarray  # int64[cores, registers]: its writer's entry while unknown, or -1
    loads: np.ndarray  # int64[cores]: load-queue entries in use
    stores: np.ndarray  # int64[cores]: store-queue entries in use (until written)
    stall_until: np.ndarray  # int64[cores]: dispatch waits until then (a mispredict)
    stall_branch: np.ndarray  # int64[cores]: a mispredicted branch's entry not yet resolved
    history: np.ndarray  # int64[cores]: global branch history
    counters: np.ndarray  # int64[cores, 2 ** (history_bits + pc_bits)]: 2-bit counters
    stats: np.ndarray  # int64[cores, len(CORE_STAT_NAMES)]
    req_core: np.ndarray  # int64[capacity]: the request buffer, filled by tick
    req_entry: np.ndarray  # int64[capacity]: the ROB entry of a load or atomic (-1: a store)
    req_address: np.ndarray  # int64[capacity]
    req_bytes: np.ndarray  # int64[capacity]
    req_kind: np.ndarray  # int64[capacity]: REQ_*
    req_time: np.ndarray  # int64[capacity]: when the core wants memory
    req_used: np.ndarray  # int64[1]


def build_cores(work: CpuWork, params: np.ndarray, latency: np.ndarray,
                last: np.ndarray | None = None) -> CpuCores:  # fmt: skip
    """A core for each thread of ``work``, core ``c`` running thread ``c``, up to segment
    ``last[c]`` (default: the thread's end; see :func:`resume`)."""
    cores = work.threads
    rob = int(params[P_ROB])
    table = 1 << int(params[P_HISTORY_BITS] + params[P_PC_BITS])
    # a tick's loads and stores, and the loads a memory answer may start, for every core
    capacity = cores * (2 * int(params[P_WIDTH]) + rob)
    first = work.thread_first[:-1].astype(np.int64)
    state = CpuCores(
        params=params.astype(np.int64), latency=latency.astype(np.int64), segment=first.copy(),
        last=(work.thread_first[1:] if last is None else last).astype(np.int64),
        at_pc=np.zeros(cores, dtype=np.int64), start_pc=np.zeros(cores, dtype=np.int64),
        end_pc=np.zeros(cores, dtype=np.int64), access=work.mem_first[:-1].astype(np.int64),
        access_end=work.mem_first[:-1].astype(np.int64),
        access_pc=np.zeros(cores, dtype=np.int64),
        rob_pc=np.zeros((cores, rob), dtype=np.int64),
        rob_kind=np.zeros((cores, rob), dtype=np.int64),
        rob_mem=np.full((cores, rob), -1, dtype=np.int64),
        rob_state=np.zeros((cores, rob), dtype=np.int64),
        rob_ready=np.zeros((cores, rob), dtype=np.int64),
        rob_done=np.full((cores, rob), NEVER, dtype=np.int64),
        rob_wait=np.zeros((cores, rob, MAX_PENDING_SOURCES), dtype=np.int64),
        rob_pending=np.zeros((cores, rob), dtype=np.int64),
        rob_waiters=np.zeros((cores, rob), dtype=np.int64),
        head=np.zeros(cores, dtype=np.int64), count=np.zeros(cores, dtype=np.int64),
        reg_ready=np.zeros((cores, max(work.registers, 1)), dtype=np.int64),
        reg_writer=np.full((cores, max(work.registers, 1)), -1, dtype=np.int64),
        loads=np.zeros(cores, dtype=np.int64), stores=np.zeros(cores, dtype=np.int64),
        stall_until=np.zeros(cores, dtype=np.int64),
        stall_branch=np.full(cores, -1, dtype=np.int64),
        history=np.zeros(cores, dtype=np.int64),
        counters=np.full((cores, table), 1, dtype=np.int64),  # weakly not taken
        stats=np.zeros((cores, len(CORE_STAT_NAMES)), dtype=np.int64),
        req_core=np.zeros(capacity, dtype=np.int64),
        req_entry=np.zeros(capacity, dtype=np.int64),
        req_address=np.zeros(capacity, dtype=np.int64),
        req_bytes=np.zeros(capacity, dtype=np.int64),
        req_kind=np.zeros(capacity, dtype=np.int64),
        req_time=np.zeros(capacity, dtype=np.int64),
        req_used=np.zeros(1, dtype=np.int64),
    )  # fmt: skip
    for c in range(cores):
        _enter(state, work, c, int(first[c]))
    return state


@compiled(inline=True)
def finished(cores, c):
    """Whether core ``c`` has dispatched, retired and written everything."""
    return (cores.segment[c] >= cores.last[c] and cores.count[c] == 0
            and cores.stores[c] == 0)  # fmt: skip


@compiled(inline=True)
def _enter(cores, work, c, s):
    """Core ``c`` moves on to segment ``s`` (or past its last): what its instructions need
    about the segment is read here, once, rather than at each instruction."""
    if cores.access[c] != cores.access_end[c]:
        raise ValueError("a CPU core left a segment with accesses it never made")
    cores.segment[c] = s
    if s >= cores.last[c]:
        return
    start = np.int64(work.seg_pc[s])
    cores.at_pc[c], cores.start_pc[c] = start, start
    cores.end_pc[c] = start + np.int64(work.seg_length[s])
    cores.access_end[c] = cores.access[c] + np.int64(work.seg_accesses[s])
    _next_access(cores, work, c)


@compiled
def resume(cores, work, c, last):
    """Core ``c``, finished, goes on with its stream up to segment ``last`` (its program's
    next launch, when several programs' launches are one work)."""
    cores.last[c] = last
    _enter(cores, work, c, cores.segment[c])


@compiled(inline=True)
def _next_access(cores, work, c):
    m = cores.access[c]
    cores.access_pc[c] = (cores.start_pc[c] + np.int64(work.mem_offset[m])
                          if m < cores.access_end[c] else -1)  # fmt: skip


@compiled(inline=True)
def _wrap(i, rob):
    """ROB position ``i`` (below ``2 * rob``) taken round the ring, without a division."""
    return i - rob if i >= rob else i


@compiled(inline=True)
def _request(cores, c, entry, address, size, kind, at):
    k = cores.req_used[0]
    if k == len(cores.req_core):
        raise ValueError("the CPU cores' request buffer is full: its owner did not empty it")
    cores.req_core[k], cores.req_entry[k], cores.req_address[k] = c, entry, address
    cores.req_bytes[k], cores.req_kind[k], cores.req_time[k] = size, kind, at
    cores.req_used[0] = k + 1


@compiled(inline=True)
def _start(cores, work, c, e):
    """Entry ``e``'s sources are all known: it starts at ``rob_ready`` and its result is ready
    a latency later, or when memory answers."""
    kind = cores.rob_kind[c, e]
    start = cores.rob_ready[c, e]
    cores.rob_state[c, e] = EXECUTING
    if kind in (K_LOAD, K_ATOMIC):
        m = cores.rob_mem[c, e]
        _request(cores, c, e, work.mem_address[m], work.mem_bytes[m],
                 REQ_ATOMIC if kind == K_ATOMIC else REQ_LOAD, start)  # fmt: skip
        in_flight = cores.loads[c]
        if in_flight > cores.stats[c, S_PEAK_LOADS]:
            cores.stats[c, S_PEAK_LOADS] = in_flight
        return
    _resolved(cores, work, c, e, start + cores.latency[kind] * cores.params[P_PERIOD_PS])


@compiled(inline=True)
def _resolved(cores, work, c, e, t):
    """Entry ``e``'s result is ready at ``t``: its registers' latest values, if it is still
    their latest writer."""
    cores.rob_done[c, e] = t
    pc = cores.rob_pc[c, e]
    for k in range(work.pc_dst_first[pc], work.pc_dst_first[pc + 1]):
        r = work.pc_dst[k]
        if cores.reg_writer[c, r] == e:
            cores.reg_writer[c, r] = -1
            cores.reg_ready[c, r] = t


@compiled
def _wake(cores, work, c, after):
    """Start every waiting entry younger than ``after`` whose producers are now all known, in
    program order, so that one pass also starts the dependents of what it starts."""
    rob = cores.params[P_ROB]
    age = _wrap(after - cores.head[c] + rob, rob) + 1
    while age < cores.count[c]:
        e = _wrap(cores.head[c] + age, rob)
        if cores.rob_state[c, e] == WAITING:
            pending = 0  # the producers still unknown, kept at the front
            for k in range(cores.rob_pending[c, e]):
                p = cores.rob_wait[c, e, k]
                if cores.rob_done[c, p] < NEVER:
                    cores.rob_ready[c, e] = max(cores.rob_ready[c, e], cores.rob_done[c, p])
                    cores.rob_waiters[c, p] -= 1
                else:
                    cores.rob_wait[c, e, pending] = p
                    pending += 1
            cores.rob_pending[c, e] = pending
            if pending == 0:
                _start(cores, work, c, e)
        age += 1


@compiled
def load_done(cores, work, c, e, t):
    """Memory answered the load or atomic in entry ``e`` of core ``c``: its data is there at
    ``t``; the entries waiting on it may start (none, for most loads: their users have not
    been dispatched yet, or they hit in the L1 and were answered at once)."""
    _resolved(cores, work, c, e, t)
    if cores.rob_waiters[c, e] > 0:
        _wake(cores, work, c, e)
    b = cores.stall_branch[c]
    if b >= 0 and cores.rob_done[c, b] < NEVER:  # a mispredicted branch resolved
        cores.stall_until[c] = (
            cores.rob_done[c, b] + cores.params[P_MISPREDICT] * cores.params[P_PERIOD_PS]
        )
        cores.stall_branch[c] = -1


@compiled(inline=True)
def store_written(cores, c):
    """Memory took one of core ``c``'s writes (in order)."""
    cores.stores[c] -= 1


@compiled(inline=True)
def _predict(cores, c, pc, taken):
    """Predict the branch at ``pc`` and train the predictor with its outcome (``taken``, 0 or
    1); whether it mispredicted."""
    bits = cores.params[P_HISTORY_BITS]
    index = ((pc & ((1 << cores.params[P_PC_BITS]) - 1)) << bits) | (
        cores.history[c] & ((1 << bits) - 1)
    )
    counter = cores.counters[c, index]
    if taken:
        cores.counters[c, index] = min(counter + 1, 3)
    else:
        cores.counters[c, index] = max(counter - 1, 0)
    cores.history[c] = (cores.history[c] << 1) | taken
    return (counter >= 2) != (taken != 0)


@compiled(inline=True)
def _retire(cores, work, c, now):
    rob, width = cores.params[P_ROB], cores.params[P_WIDTH]
    retired = 0
    while retired < width and cores.count[c] > 0:
        e = cores.head[c]
        if cores.rob_done[c, e] > now:
            break
        kind = cores.rob_kind[c, e]
        if kind in (K_LOAD, K_ATOMIC):
            cores.loads[c] -= 1
        elif kind == K_STORE:  # written now; its queue entry waits for memory
            m = cores.rob_mem[c, e]
            _request(cores, c, -1, work.mem_address[m], work.mem_bytes[m], REQ_STORE, now)
        cores.rob_state[c, e] = FREE
        cores.rob_done[c, e] = NEVER
        cores.head[c] = _wrap(e + 1, rob)
        cores.count[c] -= 1
        cores.stats[c, S_INSTRUCTIONS] += 1
        retired += 1


@compiled(inline=True)
def _dispatch(cores, work, c, now):
    rob, width = cores.params[P_ROB], cores.params[P_WIDTH]
    period = cores.params[P_PERIOD_PS]
    in_order = cores.params[P_IN_ORDER] != 0
    dispatched = 0
    while dispatched < width and cores.segment[c] < cores.last[c]:
        if cores.stall_branch[c] >= 0 or now < cores.stall_until[c]:
            cores.stats[c, S_MISPREDICT_STALL] += int(dispatched == 0)
            return
        if cores.count[c] == rob:
            cores.stats[c, S_ROB_FULL] += int(dispatched == 0)
            return
        pc = cores.at_pc[c]
        kind = work.pc_class[pc]
        accessed = pc == cores.access_pc[c]
        if kind in (K_LOAD, K_STORE, K_ATOMIC) and not accessed:
            kind = K_INT  # its guard was false: nothing to access
        if kind in (K_LOAD, K_ATOMIC) and cores.loads[c] == cores.params[P_LOAD_QUEUE]:
            cores.stats[c, S_LOAD_QUEUE_FULL] += int(dispatched == 0)
            return
        if kind == K_STORE and cores.stores[c] == cores.params[P_STORE_QUEUE]:
            cores.stats[c, S_STORE_QUEUE_FULL] += int(dispatched == 0)
            return
        ready = now + period
        if in_order:  # stall on use: every source ready by the next cycle
            for k in range(work.pc_src_first[pc], work.pc_src_first[pc + 1]):
                r = work.pc_src[k]
                if cores.reg_writer[c, r] >= 0 or cores.reg_ready[c, r] > ready:
                    cores.stats[c, S_DEPENDENCY_STALL] += int(dispatched == 0)
                    return
        e = _wrap(cores.head[c] + cores.count[c], rob)
        cores.count[c] += 1
        m = cores.access[c] if accessed else -1
        if accessed:
            cores.access[c] = m + 1
            _next_access(cores, work, c)
        if pc + 1 < cores.end_pc[c]:
            cores.at_pc[c] = pc + 1
            following = pc + 1
        else:
            s = cores.segment[c] + 1
            # the core's last instruction (of its stream, or of a launch) goes nowhere
            following = work.seg_pc[s] if s < cores.last[c] else pc + 1
            _enter(cores, work, c, s)
        cores.rob_pc[c, e], cores.rob_kind[c, e] = pc, kind
        cores.rob_mem[c, e] = m if kind in (K_LOAD, K_STORE, K_ATOMIC) else -1
        cores.rob_done[c, e] = NEVER
        cores.rob_waiters[c, e] = 0
        pending = 0
        for k in range(work.pc_src_first[pc], work.pc_src_first[pc + 1]):
            r = work.pc_src[k]
            writer = cores.reg_writer[c, r]
            if writer >= 0:
                already = False
                for q in range(pending):
                    already = already or cores.rob_wait[c, e, q] == writer
                if not already:
                    if pending == MAX_PENDING_SOURCES:
                        raise ValueError("an instruction waits on more than "
                                         "MAX_PENDING_SOURCES loads")  # fmt: skip
                    cores.rob_wait[c, e, pending] = writer
                    cores.rob_waiters[c, writer] += 1
                    pending += 1
            else:
                ready = max(ready, cores.reg_ready[c, r])
        cores.rob_pending[c, e] = pending
        cores.rob_ready[c, e] = ready
        for k in range(work.pc_dst_first[pc], work.pc_dst_first[pc + 1]):
            r = work.pc_dst[k]
            cores.reg_writer[c, r] = e
            cores.reg_ready[c, r] = NEVER
        if kind in (K_LOAD, K_ATOMIC):
            cores.loads[c] += 1
            cores.stats[c, S_ATOMICS if kind == K_ATOMIC else S_LOADS] += 1
        elif kind == K_STORE:
            cores.stores[c] += 1
            cores.stats[c, S_STORES] += 1
        if pending == 0:
            _start(cores, work, c, e)
        else:
            cores.rob_state[c, e] = WAITING
        if kind == K_BRANCH:
            cores.stats[c, S_BRANCHES] += 1
            if _predict(cores, c, pc, 1 if following != pc + 1 else 0):
                cores.stats[c, S_MISPREDICTS] += 1
                if cores.rob_done[c, e] < NEVER:
                    cores.stall_until[c] = (
                        cores.rob_done[c, e] + cores.params[P_MISPREDICT] * period
                    )
                else:
                    cores.stall_branch[c] = e
        dispatched += 1


@compiled
def tick(cores, work, now):
    """One cycle of every core at ``now``: retire, then dispatch. Their memory requests join
    the request buffer, which the memory's owner empties."""
    for c in range(len(cores.segment)):
        if finished(cores, c):
            continue
        cores.stats[c, S_CYCLES] += 1
        _retire(cores, work, c, now)
        _dispatch(cores, work, c, now)


def core_params(
    width: int,
    rob: int,
    load_queue: int,
    store_queue: int,
    mispredict_cycles: int,
    in_order: bool,
    history_bits: int,
    pc_bits: int,
    period_ps: int,
) -> np.ndarray:
    """The parameter array of :class:`CpuCores`."""
    p = np.zeros(CORE_PARAMS, dtype=np.int64)
    p[[P_WIDTH, P_ROB, P_LOAD_QUEUE, P_STORE_QUEUE, P_MISPREDICT, P_IN_ORDER, P_HISTORY_BITS,
       P_PC_BITS, P_PERIOD_PS]] = (width, rob, load_queue, store_queue, mispredict_cycles,
                                   int(in_order), history_bits, pc_bits, period_ps)  # fmt: skip
    return p


__all__ = ["CORE_STAT_NAMES", "CpuCores", "CpuWork", "build_cores", "core_params", "finished",
           "load_done", "resume", "store_written", "tick"]  # fmt: skip
