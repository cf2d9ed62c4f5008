"""TOM's and SNDP's offload execution, an extension of the SIMT core (:mod:`ndpsim.hw.core.sm`).

The SIMT core runs warps and knows nothing of offloading; the GPU systems compose it with this
module by passing their offload state (:class:`ndpsim.hw.gpu.offload.OffloadState`) as the
core's extension, whose hooks (:mod:`ndpsim.engine.hooks`) are implemented here:

* at the start of a candidate block a GPU warp asks the offload controller (TOM's decision, or
  SNDP's ratio), which may take the block: the warp then sends it to its stack (its live-ins
  once ready, after the offload pipeline's latency) and waits for the acknowledgement, or, with
  SNDP's partitioned execution, goes on with its part (addresses, read-and-forward and
  write-address packets) after reserving the target NSU's buffer entries (credits);
* a stack processor runs an offloaded block in a free warp slot (an NSU skipping the GPU's part
  and waiting for its buffered packets) and reports it done; the system's memory side sends the
  acknowledgement, which resumes the GPU warp with its live-outs.

The slot states a warp takes here (waiting for credits, for its live-ins, for the
acknowledgement) are the core's extension states: the core never issues from them.
"""

from __future__ import annotations

from ndpsim.engine import events as ev
from ndpsim.engine import fifo, kinds
from ndpsim.engine.clock import NEVER
from ndpsim.hw import cache as cachemod
from ndpsim.hw import link as linkmod
from ndpsim.hw import requests as rq
from ndpsim.hw.core import sm as simt
from ndpsim.hw.core.sm import (
    ACTIVE,
    DRAIN,
    EV_NDP_REQUEST,
    EXTENSION_STATES,
    FREE,
    HAZARD,
    ISSUED,
    NOT_TAKEN,
    S_HEADER_BYTES,
    S_L1_ENABLED,
    S_LAT_ALU,
    T_ISSUED,
    T_L1_ACCESSES,
    T_L1_HITS,
    T_L1_MISSES,
    T_MEMORY,
    T_STORES,
    T_THREAD_INSTRUCTIONS,
    T_TRANSACTIONS,
    U_LSU,
    U_LSU_MSHR,
    activate,
    advance_slot,
    align,
    block_memory,
    count_clocks,
    counting,
    physical_line,
    refresh_ready,
    send_to_l2,
    set_destinations,
)
from ndpsim.hw.gpu import offload as ofl
from ndpsim.numba_cache import compiled
from ndpsim.trace.trace import MemoryKind
from ndpsim.trace.work import (
    C_MEMORY,
    inst_lanes,
    inst_mem,
    inst_pc,
    mem_kind,
    mem_tx_count,
    mem_tx_first,
    tx_bytes,
    tx_line,
)

# a GPU warp whose block was offloaded waits for NSU buffer credits (SNDP, CREDIT_WAIT) and its
# live-in registers (OFFLOAD_WAIT), then for the acknowledgement (OFFLOADED; an SNDP warp first
# runs its part of the block)
OFFLOAD_WAIT, OFFLOADED, CREDIT_WAIT = EXTENSION_STATES, EXTENSION_STATES + 1, EXTENSION_STATES + 2

# events: an offload request to send; a stack processor finished an offloaded block
EV_OFFLOAD_SEND, EV_OFFLOAD_DONE = kinds.declare(__name__, "OFFLOAD_SEND", "OFFLOAD_DONE")


# ------------------------------------------------------------------- the core's hooks
@simt.READY_FROM.implement(ofl.OffloadState)
def _ready_from(off, sm, work, s, w, pos, now):
    """An NSU's memory instruction waits for the packets it consumes, and uses no data cache
    (SNDP Table 2)."""
    if sm.stack[s] >= 0 and off.pc_role.shape[0] > 0:
        if sm.slot_unit[s, w] == U_LSU_MSHR:
            sm.slot_unit[s, w] = U_LSU
        if not _buffered(work, off, pos):
            return NEVER  # its RDF data or write addresses are still on their way
    return now


@simt.WARP_STARTED.implement(ofl.OffloadState)
def _warp_started(off, s, w):
    if off.slot_decided.shape[0] > 0:
        off.slot_decided[s, w] = -1


@simt.STREAM_TAKEN.implement(ofl.OffloadState)
def _stream_taken(off, sm, events, s, w, now):
    """A stack slot finished its offloaded block: it reports it done (the memory side sends the
    acknowledgement)."""
    if sm.stack[s] < 0:
        return False
    sm.slot_state[s, w] = DRAIN
    sm.slot_ready[s, w] = NEVER
    ev.push(events, now, EV_OFFLOAD_DONE, s, w)
    return True


@simt.PARKED_AFTER.implement(ofl.OffloadState)
def _parked_after(off, sm, work, s, w, now):
    """An NSU skips an SNDP block's address arithmetic (the GPU ran it); a GPU warp at the end
    of its part of an offloaded SNDP block waits for the acknowledgement (True: parked)."""
    if off.pc_role.shape[0] > 0 and off.slot_instance[s, w] >= 0:
        if sm.stack[s] >= 0:
            while (sm.slot_pos[s, w] < sm.slot_end[s, w]
                   and _role(work, off, sm.slot_pos[s, w]) == ofl.ROLE_GPU):  # fmt: skip
                sm.slot_pos[s, w] += 1
        elif sm.slot_pos[s, w] == off.inst_end[off.slot_instance[s, w]]:
            # the GPU's part of an SNDP block is done: wait for the NSU, unless it finished
            if not off.inst_acked[off.slot_instance[s, w]]:
                sm.slot_state[s, w] = OFFLOADED
                sm.slot_ready[s, w] = NEVER
                return True
            _take_live_outs(sm, off, s, w, now)
    return False


@simt.LOADED_WHILE_WAITING.implement(ofl.OffloadState)
def _loaded_while_waiting(off, sm, work, events, s, w, when):
    """A load a block's live-in waited for completed: the block leaves."""
    if sm.slot_state[s, w] == OFFLOAD_WAIT:
        _send_offload(sm, work, off, events, s, w, when)


@simt.ISSUE_TAKEN.implement(ofl.OffloadState)
def _issue_taken(off, sm, work, l1, pool, links, events, port, page, s, w, pos, now):
    """At the start of a candidate block the controller decides (and may offload it); an
    offloaded SNDP block's memory instructions (and the GPU's @NSU ones) issue as packets or
    buffered accesses. NOT_TAKEN: the core issues the instruction."""
    if off.pos_instance.shape[0] > 0 and sm.stack[s] < 0:
        i = off.pos_instance[pos]
        if i >= 0 and off.slot_decided[s, w] != pos:  # the start of a candidate block
            off.slot_decided[s, w] = pos
            if off.control[ofl.C_LEARNING] != 0:  # TOM's learning phase: nothing offloaded
                ofl.observe(off, i, s * sm.slot_pos.shape[1] + w)
            else:
                decision = ofl.decide(off, links, i, pos, now)
                if decision == ofl.OFFLOAD:
                    _offload(sm, work, off, events, s, w, i, now)
                    return ISSUED
                if decision == ofl.RUN_TO_FIRST_ACCESS:
                    off.slot_probe[s, w] = i
        i = off.slot_probe[s, w]
        if i >= 0 and off.inst_probe[i] == pos:  # the destination is known now (footnote 4)
            off.slot_probe[s, w] = -1
            if ofl.admit(off, i):
                st = off.stats[off.inst_dest[i]]
                st[ofl.K_REDUNDANT] += pos - off.inst_start[i]
                for ran in range(off.inst_start[i], pos):
                    st[ofl.K_REDUNDANT_THREADS] += inst_lanes(work, ran)
                _offload(sm, work, off, events, s, w, i, now)
                return ISSUED
        if off.control[ofl.C_LEARN_RUNNING] > 0 and off.slot_decided[s, w] >= 0:
            ofl.observed_progress(off, off.pos_instance[off.slot_decided[s, w]], pos)
    if off.pc_role.shape[0] > 0:
        pc = inst_pc(work, pos)
        if off.pc_role[pc] != 0:  # inside an SNDP block
            cls = work.pc_class[pc]
            if sm.stack[s] >= 0 or off.slot_instance[s, w] >= 0:  # offloaded: partitioned
                if cls == C_MEMORY or (sm.stack[s] < 0 and off.pc_role[pc] == ofl.ROLE_NSU):
                    if _issue_partitioned(sm, work, l1, pool, links, events, port, page, off, s,
                                          w, pos, pc, cls, now):  # fmt: skip
                        return ISSUED
                    return HAZARD
            else:  # Algorithm 1's throughput counts block instructions run on the GPU too
                off.control[ofl.C_BLOCK_INSTRUCTIONS] += 1
    return NOT_TAKEN


# ------------------------------------------------------------------------- execution
@compiled(inline=True)
def _role(work, off, pos):
    """ROLE_* of the instruction at stream position ``pos`` (0 outside SNDP blocks)."""
    return off.pc_role[inst_pc(work, pos)]


@compiled(inline=True)
def _buffered(work, off, pos):
    """Whether the NSU has every packet the instruction at ``pos`` consumes: all its RDF data
    (a load) or all its write addresses (a store). Other instructions need none."""
    role = _role(work, off, pos)
    if role != ofl.ROLE_LOAD and role != ofl.ROLE_STORE:
        return True
    m = inst_mem(work, pos)
    return m < 0 or off.pos_arrived[pos] >= mem_tx_count(work, m)


@compiled(inline=True)
def _take_live_outs(sm, off, s, w, now):
    """The acknowledgement of slot ``w``'s offloaded block arrived: its live-out registers are
    ready and the warp is no longer offloaded."""
    i = off.slot_instance[s, w]
    c = off.inst_candidate[i]
    for k in range(off.cand_live_out_first[c], off.cand_live_out_first[c + 1]):
        sm.reg_ready[s, w, off.cand_live_out[k]] = now
    off.slot_instance[s, w] = -1
    activate(sm, s, w, now)


@compiled
def _send_offload(sm, work, off, events, s, w, now):
    """Slot ``w``'s block goes to its stack once its live-in registers are ready, after the
    offload pipeline's latency. A TOM warp then waits for the acknowledgement; an SNDP warp
    goes on with its part of the block (addresses, RDF and WTA packets)."""
    i = off.slot_instance[s, w]
    t = ofl.live_ins_ready(off, sm.reg_ready, s, w, i)
    if t >= NEVER:
        sm.slot_state[s, w] = OFFLOAD_WAIT  # a live-in waits for a load
        sm.slot_ready[s, w] = NEVER
        return
    t = max(t, now) + off.params[ofl.O_LATENCY_PS]
    ev.push(events, t, EV_OFFLOAD_SEND, i, 0)
    if off.params[ofl.O_EXECUTION] == ofl.EXECUTE_PARTITIONED:
        activate(sm, s, w, now)
        refresh_ready(sm, work, off, s, w, max(t, now + sm.period[s]))
    else:
        sm.slot_state[s, w] = OFFLOADED


@compiled
def _offload(sm, work, off, events, s, w, i, now):
    """The controller took slot ``w``'s next block (instance ``i``). A TOM warp waits for it;
    an SNDP warp first reserves the target NSU's buffer entries, queueing behind earlier warps
    when there are not enough credits (SNDP sec. 4.3)."""
    off.slot_instance[s, w] = i
    sm.slot_ready[s, w] = NEVER
    off.inst_home[i] = s * sm.slot_warp.shape[1] + w
    if off.params[ofl.O_EXECUTION] == ofl.EXECUTE_PARTITIONED:
        d = off.inst_dest[i]
        if not fifo.empty(off.credit_head, d) or not ofl.reserve_credits(off, i):
            off.stats[d, ofl.K_CREDIT_WAITS] += 1
            sm.slot_state[s, w] = CREDIT_WAIT
            fifo.push(off.credit_head, off.credit_tail, off.inst_next, d, i)
            return
    _send_offload(sm, work, off, events, s, w, now)


@compiled
def release_credits(sm, work, off, events, d, kind, n, now):
    """Stack ``d``'s NSU freed ``n`` entries of buffer ``kind``. The credits return to the GPU's
    buffer manager at once (the paper piggybacks them on other packets; we neither delay them
    nor charge bytes), and warps waiting for credits there go on, in order, while they fit."""
    off.credits[d, kind] += n
    slots = sm.slot_warp.shape[1]
    waiting = off.credit_head
    while not fifo.empty(waiting, d) and ofl.reserve_credits(off, fifo.peek(waiting, d)):
        i = fifo.pop(waiting, off.inst_next, d)
        _send_offload(sm, work, off, events, off.inst_home[i] // slots, off.inst_home[i] % slots,
                      now)  # fmt: skip


@compiled
def start_offloaded(sm, work, l1, off, events, s, i, now):
    """Run instance ``i`` in a free warp slot of stack SM ``s``; False if none is free. A TOM
    stack SM first invalidates its L1 (sec. 4.4.2), so the block reads what the GPU wrote; an
    NSU starts at the block's first instruction it runs and frees the command's buffer
    entry."""
    slots = sm.slot_warp.shape[1]
    w = -1
    for k in range(sm.unit_slots[s]):
        if sm.slot_state[s, k] == FREE:
            w = k
            break
    if w < 0:
        return False
    if not counting(sm, work, s):  # it counts again from the first clock it may issue at
        sm.clock_last[s] = max(sm.clock_last[s], align(now, sm.period[s]) - sm.period[s])
    sm.slot_warp[s, w] = off.inst_home[i]
    sm.slot_cta[s, w] = -1
    sm.slot_pos[s, w] = off.inst_start[i]
    sm.slot_end[s, w] = off.inst_end[i]
    sm.slot_age[s, w] = sm.counters[1]
    sm.counters[1] += 1
    off.slot_instance[s, w] = i
    sm.slot_writes[s, w] = 0
    off.inst_runner[i] = s * slots + w
    for r in range(sm.reg_ready.shape[2]):  # live-ins arrived with the request
        sm.reg_ready[s, w, r] = 0
    for k in range(sm.load_left.shape[2]):
        sm.load_left[s, w, k] = 0
    sm.sm_warps[s] += 1
    activate(sm, s, w, now)
    if off.params[ofl.O_FLUSH_STACK_L1] != 0:
        cachemod.flush(l1, s)
        off.stats[sm.stack[s], ofl.K_L1_FLUSHES] += 1
    if off.params[ofl.O_EXECUTION] == ofl.EXECUTE_PARTITIONED:
        while sm.slot_pos[s, w] < sm.slot_end[s, w] and _role(
            work, off, sm.slot_pos[s, w]
        ) == ofl.ROLE_GPU:  # fmt: skip
            sm.slot_pos[s, w] += 1
        release_credits(sm, work, off, events, sm.stack[s], ofl.CREDIT_COMMAND, 1,
                        now)  # fmt: skip
    refresh_ready(sm, work, off, s, w, now)
    return True


@compiled
def free_stack_slot(sm, work, off, s, w, now):
    """Stack slot ``w`` finished its block and sent the acknowledgement."""
    off.inst_runner[off.slot_instance[s, w]] = -1
    sm.slot_state[s, w] = FREE
    sm.slot_ready[s, w] = NEVER
    sm.slot_warp[s, w] = -1
    off.slot_instance[s, w] = -1
    sm.sm_warps[s] -= 1
    if not counting(sm, work, s):  # its last clocks
        count_clocks(sm, s, now)


@compiled
def resume_offloaded(sm, work, off, events, s, w, now):
    """The acknowledgement of slot ``w``'s block arrived: its live-outs are ready and the warp
    goes on after the block."""
    i = off.slot_instance[s, w]
    _take_live_outs(sm, off, s, w, now)
    sm.slot_pos[s, w] = off.inst_end[i] - 1
    advance_slot(sm, work, off, events, s, w, now - sm.period[s])


@compiled
def buffer_filled(sm, work, off, i, pos, now):
    """An RDF response or a WTA packet for the memory instruction at stream position ``pos``
    reached the NSU of instance ``i``: the NSU's warp goes on once that instruction has all of
    its packets (they may also arrive before the warp starts: the buffers hold them)."""
    off.pos_arrived[pos] += 1
    r = off.inst_runner[i]
    if r < 0:
        return
    slots = sm.slot_warp.shape[1]
    s, w = r // slots, r % slots
    if sm.slot_pos[s, w] == pos and sm.slot_state[s, w] == ACTIVE:
        refresh_ready(sm, work, off, s, w, now)


@compiled
def _gpu_packets(sm, work, l1, pool, links, events, port, page, off, s, w, pos, m, now):
    """A GPU warp runs a load or store of its offloaded SNDP block: it coalesces and translates
    the addresses as usual and sends one read-and-forward (load) or write-address (store)
    packet per line towards the target NSU, through its ready-packet buffer. No register of
    the warp waits: the data goes to the NSU. False if the buffer or the request pool is
    full."""
    kind = mem_kind(work, m)
    count = mem_tx_count(work, m)
    if off.ready_packets[s] + count > off.params[ofl.O_READY_PACKETS] or pool.meta[0] < count:
        block_memory(sm, s, 0)
        return False
    i = off.slot_instance[s, w]
    d = off.inst_dest[i]
    load = kind == MemoryKind.LOAD
    first = mem_tx_first(work, m)
    period = sm.period[s]
    use_l1 = sm.params[S_L1_ENABLED] != 0
    for t in range(first, first + count):
        line = physical_line(page, tx_line(work, t))
        rid = rq.new(pool, line, rq.R_RDF if load else rq.R_WTA, s, i, tx_bytes(work, t), now)
        f = pool.fields[rid]
        f[rq.Q_LOAD] = pos
        f[rq.Q_TARGET] = d
        f[rq.Q_HIT] = 0
        if load and use_l1:
            sm.stats[s, T_L1_ACCESSES] += 1
            if cachemod.lookup(l1, s, line):
                sm.stats[s, T_L1_HITS] += 1
                f[rq.Q_HIT] = 1
                off.stats[d, ofl.K_RDF_L1_HITS] += 1
            else:
                sm.stats[s, T_L1_MISSES] += 1
        send_to_l2(sm, links, events, pool, port, rid, now + (t - first) * period,
                    sm.params[S_HEADER_BYTES],
                    linkmod.READ_REQUEST if load else linkmod.WRITE_REQUEST)  # fmt: skip
    off.ready_packets[s] += count
    if load:
        off.stats[d, ofl.K_RDF] += count
        off.cand_rdf[off.inst_candidate[i]] += count
    else:
        off.stats[d, ofl.K_WTA] += count
    sm.stats[s, T_TRANSACTIONS] += count
    sm.ldst_free[s] = now + max(count, 1) * period
    return True


@compiled
def _nsu_memory(sm, work, pool, events, page, off, s, w, pos, pc, m, now):
    """An NSU runs a load or store of its block (its packets all arrived): a load takes its
    data from the read-data buffer, a store writes its value through the owning vaults at the
    addresses its WTA packets gave. Either frees its buffer entry, returning a credit. False if
    the request pool is full."""
    period = sm.period[s]
    d = sm.stack[s]
    if _role(work, off, pos) == ofl.ROLE_LOAD:
        # the buffer is read like a register operand
        set_destinations(sm, work, s, w, pc, now + sm.params[S_LAT_ALU] * period)
        sm.ldst_free[s] = now + period
        release_credits(sm, work, off, events, d, ofl.CREDIT_READ_DATA, 1, now)
        return True
    count = mem_tx_count(work, m) if m >= 0 else 0
    if pool.meta[0] < count:
        block_memory(sm, s, 0)
        return False
    first = mem_tx_first(work, m) if m >= 0 else 0
    for t in range(first, first + count):
        rid = rq.new(pool, physical_line(page, tx_line(work, t)), rq.R_STORE, s, w,
                     tx_bytes(work, t), now)  # fmt: skip
        f = pool.fields[rid]
        f[rq.Q_SOURCE] = rq.FROM_STACK
        sm.slot_writes[s, w] += 1
        ev.push(events, now + (t - first) * period, EV_NDP_REQUEST, rid, 0)
    off.stats[d, ofl.K_NSU_WRITES] += count
    sm.stats[s, T_STORES] += count
    sm.stats[s, T_TRANSACTIONS] += count
    sm.ldst_free[s] = now + max(count, 1) * period
    release_credits(sm, work, off, events, d, ofl.CREDIT_WRITE_ADDRESS, 1, now)
    return True


@compiled
def _issue_partitioned(sm, work, l1, pool, links, events, port, page, off, s, w, pos, pc, cls,
                       now):  # fmt: skip
    """Issue a memory instruction of an offloaded SNDP block (on the GPU: packets; on the NSU:
    buffered loads, stores), or an @NSU instruction on the GPU (a NOP). False if a structural
    hazard stops it."""
    gpu = sm.stack[s] < 0
    if cls == C_MEMORY:
        m = inst_mem(work, pos)
        if gpu:
            if m >= 0 and not _gpu_packets(sm, work, l1, pool, links, events, port, page, off,
                                           s, w, pos, m, now):  # fmt: skip
                return False
        elif not _nsu_memory(sm, work, pool, events, page, off, s, w, pos, pc, m, now):
            return False
        sm.stats[s, T_MEMORY] += 1
        sm.stats[s, T_THREAD_INSTRUCTIONS] += inst_lanes(work, pos)
    # else: an @NSU instruction is a NOP on the GPU: it takes an issue slot, the NSU does the work
    sm.stats[s, T_ISSUED] += 1
    advance_slot(sm, work, off, events, s, w, now)
    return True
