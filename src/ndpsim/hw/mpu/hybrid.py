"""MPU's hybrid pipeline, an extension of the SIMT core (:mod:`ndpsim.hw.core.sm`): every
instruction is fetched, decoded and issued by a subcore on the base die, and runs there or on
its warp's near-bank unit (NBU) on the DRAM die, its registers moved over the core's TSV bus as
needed (Xie et al., MICRO 2021, sec. IV-B).

At issue the instruction offload engine (sec. IV-B1) places the instruction: far if its opcode
runs only on the base die (a global or local memory access, whose addresses the load-store unit
checks and coalesces; control; a transcendental; a parameter load; shared memory when it sits on
the base die), else by the location policy's hint (:mod:`ndpsim.policy.location`), else by the
register track table: near iff every source register it computes from has a near-bank copy (an
instruction with none, only immediates and special registers, runs far: MPU-Sim keeps those on
the base die). Each operand must then be where it is used: a global access's address far, its
value near when the access goes to the NBU whole and far otherwise, a guard far, any other
operand where the instruction runs. A register that lacks a copy there is moved first (the
register move engines, step 3): near to far is a request up the TSVs and the register down,
far to near the register up; the instruction issues once the moves arrive, and the track table
then holds both copies until the register is written again, when only the writer's side has it.

A near instruction crosses the TSVs (``instruction_bytes``), waits for its NBU's ALU (one warp
instruction per core cycle), runs, and returns to its subcore to commit (``commit_bytes``): its
destinations are ready for the scoreboard when the commit arrives (:func:`commit`, an event).

The hybrid load-store unit (sec. IV-B2) takes a global access once its addresses are far. When
every lane is active, its lines are consecutive and all of them sit in the banks of the warp's
own NBU (:func:`nbu_of`), it goes to the NBU whole: one message on the TSVs (the leading address and
the register), the NBU's load-store extension reads or writes its banks, and a load's data lands
in the near-bank register file, with one commit message back. Otherwise the unit issues one
transaction a cycle: to a bank of its own core over its TSVs, or to another core's over the
mesh (and that core's TSVs), the data of a load coming back the same way; when the last line of
a load is in, the register is written to the near-bank register file over the TSVs. Stores
complete for the warp at issue, as on a GPU; a launch ends once they reached their banks.

With ``near_bank`` off (the paper's PonB) every instruction and register stays on the base die
and loads return their data to it.

The memory side (a transaction reaching its bank, its data coming back) is the system's
(:mod:`ndpsim.systems.mpu.model`); what a request is on its way is in its ``Q_SOURCE`` field
(:data:`SENT_WHOLE` ...).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ndpsim.engine import events as ev
from ndpsim.engine import kinds
from ndpsim.engine.clock import NEVER
from ndpsim.hw import cache as cachemod
from ndpsim.hw import link as linkmod
from ndpsim.hw import requests as rq
from ndpsim.hw.core import sm as simt
from ndpsim.hw.core.sm import (
    ACTIVE,
    HAZARD,
    ISSUED,
    NOT_TAKEN,
    S_LAT_ALU,
    S_LAT_SHARED,
    T_ALU,
    T_ATOMICS,
    T_ISSUED,
    T_LOADS,
    T_MEMORY,
    T_SHARED_ACCESSES,
    T_STORES,
    T_THREAD_INSTRUCTIONS,
    T_TRANSACTIONS,
    advance_slot,
    align,
    block_memory,
    free_load_slot,
    owe,
    physical_line,
    refresh_ready,
    set_destinations,
    write_acknowledged,
)
from ndpsim.hw.dram import address_map
from ndpsim.hw.dram import vaults as vaultmod
from ndpsim.hw.hops import next_hop
from ndpsim.numba_cache import compiled
from ndpsim.trace.trace import MemoryKind
from ndpsim.trace.work import (
    C_BARRIER,
    C_MEMORY,
    inst_lanes,
    inst_mem,
    inst_pc,
    mem_conflict,
    mem_kind,
    mem_tx_count,
    mem_tx_first,
    tx_bytes,
    tx_line,
)

# where an instruction runs, or an operand must be (static tables, built by
# ndpsim.hw.mpu.tables): by the register track table / wherever the instruction runs (FOLLOW), near
# the banks, on the base die, or, for a global access's value operand, near when the access goes
# whole and far otherwise
FOLLOW, NEAR, FAR, VALUE = 0, 1, 2, 3
# the register track table: a bit per copy (0: never written, so nothing to move)
FAR_COPY, NEAR_COPY = 1, 2

# a request's way (Q_SOURCE): sent whole to the warp's NBU, per transaction to the core's own
# banks or to another core's, or a split load's last line being written to the near-bank
# register file
SENT_WHOLE, SENT_LOCAL, SENT_REMOTE, WRITING_BACK = range(4)

# parameters (HybridState.params)
(H_INSTRUCTION_BYTES, H_COMMIT_BYTES, H_MOVE_REQUEST_BYTES, H_TSV_HEADER_BYTES,
 H_NET_HEADER_BYTES, H_FLIT_BYTES, H_BANK_IO_BYTES, H_NEAR_BANK, H_SUBCORES, H_REMOTE_CACHE,
 H_REMOTE_CACHE_CYCLES) = range(11)  # fmt: skip
HYBRID_PARAMS = 11

# counters per core (after the SIMT core's) and per NBU
(C_FAR_INSTRUCTIONS, C_SPLIT_ACCESSES, C_LOCAL_TRANSACTIONS, C_REMOTE_TRANSACTIONS,
 C_REMOTE_CACHE_HITS, C_MOVES_TO_FAR, C_MOVES_TO_NEAR,
 C_REGISTER_WRITEBACKS) = range(8)  # fmt: skip
CORE_STAT_NAMES = (
    "far_instructions", "split_accesses", "local_transactions", "remote_transactions",
    "remote_cache_hits", "register_moves_to_far", "register_moves_to_near", "register_writebacks",
)  # fmt: skip
N_INSTRUCTIONS, N_SHARED_ACCESSES, N_WHOLE_ACCESSES, N_WHOLE_TRANSACTIONS = range(4)
NBU_STAT_NAMES = (
    "near_instructions", "near_shared_accesses", "whole_accesses", "whole_transactions",
)  # fmt: skip

#: A near-bank instruction's return to its subcore (a0: core * slots + slot, a1: its pc), a
#: request's packet reaching the next router of the mesh (a0: the request), and a remote load's
#: line found in the core's remote cache (a0: the request).
EV_COMMIT, EV_HOP, EV_REMOTE_HIT = kinds.declare(__name__, "MPU_COMMIT", "MPU_HOP",
                                                 "MPU_REMOTE_HIT")  # fmt: skip


class HybridState(NamedTuple):
    params: np.ndarray  # int64[HYBRID_PARAMS]
    pc_place: np.ndarray  # int64[pcs]: FOLLOW (the track table decides), NEAR or FAR
    pc_global: np.ndarray  # int64[pcs]: 1 for a global or local access (the load-store unit)
    src_need: np.ndarray  # int64[len(work.pc_src)]: FOLLOW, NEAR, FAR or VALUE per operand
    dst_at: np.ndarray  # int64[len(work.pc_dst)]: FOLLOW, NEAR or FAR per destination
    reg_bytes: np.ndarray  # int64[registers]: a warp's register on the TSVs
    reg_at: np.ndarray  # int64[cores, slots, registers]: FAR_COPY | NEAR_COPY
    move_done: np.ndarray  # int64[cores, slots]: when the slot's register moves arrive
    lines_left: np.ndarray  # int64[cores, slots, load slots]: lines of a load not gathered
    tsv: np.ndarray  # int64[cores]: the link id of each core's TSV bus
    node: np.ndarray  # int64[cores]: each core's router in the mesh
    nbu_free: np.ndarray  # int64[cores, subcores]: when each NBU's ALU takes an instruction
    hops: object  # ndpsim.hw.hops.Hops of the mesh
    amap: address_map.AddressMap
    remote_cache: cachemod.Caches  # per core: lines its loads fetched from other cores' banks
    core_stats: np.ndarray  # int64[cores, len(CORE_STAT_NAMES)]
    nbu_stats: np.ndarray  # int64[cores * subcores, len(NBU_STAT_NAMES)]


# --------------------------------------------------------------------------------- helpers
@compiled(inline=True)
def packet_bytes(ext, payload):
    """A network packet carrying ``payload`` bytes: a header flit and whole flits of data."""
    flit = ext.params[H_FLIT_BYTES]
    return ext.params[H_NET_HEADER_BYTES] + (payload + flit - 1) // flit * flit


@compiled(inline=True)
def data_bytes(ext, used):
    """The bytes of a transaction that uses ``used`` bytes of its line: whole bank I/O units."""
    unit = ext.params[H_BANK_IO_BYTES]
    return (used + unit - 1) // unit * unit


@compiled(inline=True)
def core_of(ext, channel):
    """The core whose NBUs include ``channel`` (cores and channels numbered over processors)."""
    return channel // ext.params[H_SUBCORES]


@compiled(inline=True)
def to_bank(ext, links, events, rid, core, now, payload, traffic):
    """Transaction ``rid`` goes down ``core``'s TSVs (its header and ``payload`` bytes) to its
    bank's channel, from the core's load-store unit or the core's router."""
    arrive = linkmod.send(links, ext.tsv[core], now, ext.params[H_TSV_HEADER_BYTES] + payload,
                          traffic)  # fmt: skip
    ev.push(events, arrive, vaultmod.EV_MEM_ARRIVE, rid, 0)


@compiled(inline=True)
def nbu_of(ext, sm, s, w):
    """The NBU (of its core's) holding slot ``w``'s near-bank registers: each warp has its own
    (sec. IV-B2: "the NBU id associated with the register in the given warp"), in turn by its
    index, so the warps of a CTA spread over the NBUs whatever slots they took."""
    return sm.slot_warp[s, w] % ext.params[H_SUBCORES]


@compiled(inline=True)
def _move(ext, links, s, w, r, need, now):
    """Make register ``r`` of slot ``w`` valid where ``need`` says; returns when it is."""
    at = ext.reg_at[s, w, r]
    if at == 0:
        return now  # never written: nothing to move
    if need == FAR:
        if at & FAR_COPY:
            return now
        t = linkmod.send(links, ext.tsv[s], now, ext.params[H_MOVE_REQUEST_BYTES], linkmod.OTHER)
        t = linkmod.send(links, ext.tsv[s], t, ext.reg_bytes[r], linkmod.OTHER)
        ext.reg_at[s, w, r] = at | FAR_COPY
        ext.core_stats[s, C_MOVES_TO_FAR] += 1
        return t
    if at & NEAR_COPY:
        return now
    t = linkmod.send(links, ext.tsv[s], now, ext.reg_bytes[r], linkmod.OTHER)
    ext.reg_at[s, w, r] = at | NEAR_COPY
    ext.core_stats[s, C_MOVES_TO_NEAR] += 1
    return t


@compiled(inline=True)
def _location(ext, work, s, w, pc):
    """Where instruction ``pc`` runs: its opcode's or the policy's place, else the register
    track table's (near iff every operand it computes from has a near-bank copy)."""
    place = ext.pc_place[pc]
    if place != FOLLOW:
        return place
    operands = 0
    for k in range(work.pc_src_first[pc], work.pc_src_first[pc + 1]):
        if ext.src_need[k] != FOLLOW:
            continue
        operands += 1
        at = ext.reg_at[s, w, work.pc_src[k]]
        if at != 0 and (at & NEAR_COPY) == 0:
            return FAR
    return NEAR if operands > 0 else FAR


@compiled(inline=True)
def _written(ext, work, s, w, pc, where):
    """Instruction ``pc`` ran at ``where``: its destinations have a copy there only."""
    for k in range(work.pc_dst_first[pc], work.pc_dst_first[pc + 1]):
        at = ext.dst_at[k]
        if at == FOLLOW:
            at = where
        ext.reg_at[s, w, work.pc_dst[k]] = NEAR_COPY if at == NEAR else FAR_COPY


@compiled(inline=True)
def _goes_whole(ext, sm, work, page, s, w, pos, m):
    """Whether global access ``m`` goes to the warp's NBU whole: a load or a store with every
    lane active whose lines are consecutive and all in the banks of that NBU."""
    kind = mem_kind(work, m)
    if ext.params[H_NEAR_BANK] == 0 or inst_lanes(work, pos) != 32:
        return False
    if kind != MemoryKind.LOAD and kind != MemoryKind.STORE:
        return False
    first = mem_tx_first(work, m)
    mine = s * ext.params[H_SUBCORES] + nbu_of(ext, sm, s, w)  # channels count NBUs in order
    for t in range(first, first + mem_tx_count(work, m)):
        if t > first and tx_line(work, t) != tx_line(work, t - 1) + 1:
            return False
        line = physical_line(page, tx_line(work, t))
        if address_map.channel_of(ext.amap, line) != mine:
            return False
    return True


# ------------------------------------------------------------------------------- the hooks
@simt.READY_FROM.implement(HybridState)
def _after_moves(ext, sm, work, s, w, pos, now):
    """An instruction whose registers are on their way issues once they have arrived."""
    return max(now, ext.move_done[s, w])


@simt.WARP_STARTED.implement(HybridState)
def _no_copies(ext, s, w):
    for r in range(ext.reg_at.shape[2]):
        ext.reg_at[s, w, r] = 0
    ext.move_done[s, w] = 0


# At the other points the hybrid pipeline does what the SIMT core does on its own: a slot runs
# one warp's stream and nothing else, and has no waiting state of its own.
for _same in (simt.STREAM_TAKEN, simt.PARKED_AFTER, simt.LOADED_WHILE_WAITING):
    _same.implement(HybridState)(_same.default.py_func)


@simt.ISSUE_TAKEN.implement(HybridState)
def _offload_engine(ext, sm, work, l1, pool, links, events, port, page, s, w, pos, now):
    """Place the instruction, move what it needs, and run it near, through the hybrid
    load-store unit, or (NOT_TAKEN) on the subcore as the SIMT core does."""
    pc = inst_pc(work, pos)
    if work.pc_class[pc] == C_BARRIER:
        return NOT_TAKEN
    m = inst_mem(work, pos) if work.pc_class[pc] == C_MEMORY else -1
    lsu = ext.pc_global[pc] != 0 and m >= 0
    whole = lsu and _goes_whole(ext, sm, work, page, s, w, pos, m)
    where = FAR if lsu else _location(ext, work, s, w, pc)
    arrived = now
    for k in range(work.pc_src_first[pc], work.pc_src_first[pc + 1]):
        need = ext.src_need[k]
        if need == VALUE:
            need = NEAR if whole else FAR
        elif need == FOLLOW:
            need = where
        arrived = max(arrived, _move(ext, links, s, w, work.pc_src[k], need, now))
    if arrived > now:  # issue again once the registers are there
        ext.move_done[s, w] = arrived
        refresh_ready(sm, work, ext, s, w, now)
        return HAZARD
    if lsu:
        return _load_store(ext, sm, work, pool, links, events, page, s, w, pos, pc, m, whole,
                           now)  # fmt: skip
    if where == FAR:
        _written(ext, work, s, w, pc, FAR)
        ext.core_stats[s, C_FAR_INSTRUCTIONS] += 1
        return NOT_TAKEN
    _near(ext, sm, work, links, events, s, w, pos, pc, m, now)
    return ISSUED


@compiled(inline=True)
def _near(ext, sm, work, links, events, s, w, pos, pc, m, now):
    """Run instruction ``pc`` on the NBU of slot ``w``'s warp."""
    p, period = sm.params, sm.period[s]
    sub = nbu_of(ext, sm, s, w)
    nbu = s * ext.params[H_SUBCORES] + sub
    arrive = linkmod.send(links, ext.tsv[s], now, ext.params[H_INSTRUCTION_BYTES],
                          linkmod.OFFLOAD)  # fmt: skip
    start = max(align(arrive, period), ext.nbu_free[s, sub])
    if work.pc_class[pc] == C_MEMORY:  # shared memory beside the NBUs
        conflict = mem_conflict(work, m) if m >= 0 else 1
        latency, busy = p[S_LAT_SHARED] + conflict - 1, conflict
        sm.stats[s, T_SHARED_ACCESSES] += 1
        sm.stats[s, T_MEMORY] += 1
        ext.nbu_stats[nbu, N_SHARED_ACCESSES] += 1
    else:
        latency, busy = p[S_LAT_ALU], 1
        sm.stats[s, T_ALU] += 1
    ext.nbu_free[s, sub] = start + busy * period
    set_destinations(sm, work, s, w, pc, NEVER)
    _written(ext, work, s, w, pc, NEAR)
    sm.slot_writes[s, w] += 1  # the slot drains only once it has committed
    ev.push(events, start + latency * period, EV_COMMIT, s * sm.slot_warp.shape[1] + w, pc)
    ext.nbu_stats[nbu, N_INSTRUCTIONS] += 1
    sm.stats[s, T_ISSUED] += 1
    sm.stats[s, T_THREAD_INSTRUCTIONS] += inst_lanes(work, pos)
    advance_slot(sm, work, ext, events, s, w, now)


@compiled
def commit(sm, work, ext, links, events, who, pc, now):
    """A near-bank instruction finished: it returns to its subcore, whose scoreboard releases
    its destinations when it arrives."""
    s, w = who // sm.slot_warp.shape[1], who % sm.slot_warp.shape[1]
    arrived = linkmod.send(links, ext.tsv[s], now, ext.params[H_COMMIT_BYTES], linkmod.OTHER)
    set_destinations(sm, work, s, w, pc, arrived)
    if sm.slot_state[s, w] == ACTIVE:
        refresh_ready(sm, work, ext, s, w, now)
    write_acknowledged(sm, work, ext, events, s, w, now)


@compiled(inline=True)
def remote_cached(ext, s, request, line):
    """Whether core ``s``'s remote cache serves this transaction to another core's banks: a load
    of a line it holds. A store or an atomic drops the core's copy, which it would make stale
    (the cache keeps no other core's writes: it is read-only, as MPU-Sim's)."""
    if ext.params[H_REMOTE_CACHE] == 0:
        return False
    if request == rq.R_LOAD:
        return cachemod.lookup(ext.remote_cache, s, line)
    cachemod.invalidate(ext.remote_cache, s, line)
    return False


@compiled
def _load_store(ext, sm, work, pool, links, events, page, s, w, pos, pc, m, whole, now):
    """The hybrid load-store unit takes global access ``m`` (its addresses far)."""
    kind = mem_kind(work, m)
    first, count = mem_tx_first(work, m), mem_tx_count(work, m)
    period = sm.period[s]
    reads = kind == MemoryKind.LOAD or kind == MemoryKind.ATOMIC
    load = free_load_slot(sm, s, w) if reads else -1
    if reads and load < 0:
        block_memory(sm, s, 0)
        return HAZARD
    if pool.meta[0] < count:
        block_memory(sm, s, 0)
        return HAZARD
    if kind == MemoryKind.LOAD:
        request = rq.R_LOAD
    elif kind == MemoryKind.STORE:
        request = rq.R_STORE
    elif kind == MemoryKind.ATOMIC:
        request = rq.R_ATOMIC
    else:
        request = rq.R_REDUCTION
    subcores = ext.params[H_SUBCORES]
    if whole:  # the leading address and the register, once
        sent = linkmod.send(links, ext.tsv[s], now, ext.params[H_INSTRUCTION_BYTES],
                            linkmod.OFFLOAD)  # fmt: skip
        nbu = s * subcores + nbu_of(ext, sm, s, w)
        ext.nbu_stats[nbu, N_WHOLE_ACCESSES] += 1
        ext.nbu_stats[nbu, N_WHOLE_TRANSACTIONS] += count
    else:
        ext.core_stats[s, C_SPLIT_ACCESSES] += 1
    for t in range(first, first + count):
        rid = rq.new(pool, physical_line(page, tx_line(work, t)), request, s, w,
                     tx_bytes(work, t), now)  # fmt: skip
        owe(sm, pool, rid, sm.program[s])
        f = pool.fields[rid]
        f[rq.Q_LOAD] = load
        address_map.locate(ext.amap, pool, rid)
        if whole:
            f[rq.Q_SOURCE] = SENT_WHOLE
            ev.push(events, sent, vaultmod.EV_MEM_ARRIVE, rid, 0)
        else:
            leaves = now + (t - first) * period  # one transaction a cycle
            payload = 0 if reads else data_bytes(ext, tx_bytes(work, t))
            traffic = linkmod.READ_REQUEST if reads else linkmod.WRITE_REQUEST
            target = core_of(ext, f[rq.Q_CHANNEL])
            if target != s and remote_cached(ext, s, request, f[rq.Q_LINE]):
                f[rq.Q_SOURCE] = SENT_REMOTE
                ext.core_stats[s, C_REMOTE_CACHE_HITS] += 1
                ev.push(events, leaves + ext.params[H_REMOTE_CACHE_CYCLES] * period,
                        EV_REMOTE_HIT, rid, 0)  # fmt: skip
            elif target != s:  # over the mesh, router by router, then the target's TSVs
                f[rq.Q_SOURCE] = SENT_REMOTE
                f[rq.Q_NODE], f[rq.Q_DEST] = ext.node[s], ext.node[target]
                ext.core_stats[s, C_REMOTE_TRANSACTIONS] += 1
                at = next_hop(ext.hops, links, pool, rid, leaves, packet_bytes(ext, payload),
                              traffic)  # fmt: skip
                ev.push(events, at, EV_HOP, rid, 0)
            else:
                f[rq.Q_SOURCE] = SENT_LOCAL
                ext.core_stats[s, C_LOCAL_TRANSACTIONS] += 1
                to_bank(ext, links, events, rid, s, leaves, payload, traffic)
        if kind == MemoryKind.LOAD:
            sm.stats[s, T_LOADS] += 1
        elif kind == MemoryKind.STORE:
            sm.stats[s, T_STORES] += 1
        else:
            sm.stats[s, T_ATOMICS] += 1
    if reads:
        set_destinations(sm, work, s, w, pc, NEVER)
        sm.load_left[s, w, load] = count
        sm.load_pc[s, w, load] = pc
        sm.load_done[s, w, load] = now
        ext.lines_left[s, w, load] = count
        _written(ext, work, s, w, pc, FAR)
    sm.stats[s, T_TRANSACTIONS] += count
    sm.stats[s, T_MEMORY] += 1
    sm.stats[s, T_ISSUED] += 1
    sm.stats[s, T_THREAD_INSTRUCTIONS] += inst_lanes(work, pos)
    ext.core_stats[s, C_FAR_INSTRUCTIONS] += 1
    sm.ldst_free[s] = now + (1 if whole else max(count, 1)) * period
    advance_slot(sm, work, ext, events, s, w, now)
    return ISSUED


@compiled(inline=True)
def writeback_bytes(ext, work, pc):
    """A load's destination registers, written to the near-bank register file."""
    total = 0
    for k in range(work.pc_dst_first[pc], work.pc_dst_first[pc + 1]):
        total += ext.reg_bytes[work.pc_dst[k]]
    return total


__all__ = [
    "CORE_STAT_NAMES",
    "EV_COMMIT",
    "EV_HOP",
    "NBU_STAT_NAMES",
    "HybridState",
    "commit",
]
