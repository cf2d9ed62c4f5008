"""The compiled core of a GPU attached to memory cubes: events and SM clocks, interleaved.

A memory request's life after it leaves an SM (:mod:`ndpsim.hw.core.sm`):

1. ``L2_REQUEST``: it reaches its L2 slice through the crossbar. A load hit answers after the hit
   latency; a miss joins the MSHR of its line, or takes one and goes to memory. Stores and
   reductions are written through (and update a present line); atomics are done at the L2.
2. ``MEM_ARRIVE``: through the host interface (the host's link to the cube's port, then the
   cube network's hops, :mod:`ndpsim.hw.host_interface`) its vault takes it
   (:mod:`ndpsim.hw.dram.vaults`: a controller queue, or the channel's backlog when it is full).
3. The vault's controller issues commands on its clock; finished requests become ``DRAM_DONE``.
4. ``DRAM_DONE``: read data (or a write acknowledgement) goes back through the host interface.
5. ``L2_FILL``: the line fills the L2 and answers everyone waiting on its MSHR.
6. ``SM_FILL``: the line reaches the SM, fills the L1 and completes the loads waiting on it.

A request of a stack unit (near-data processing, :mod:`ndpsim.hw.gpu.offload`) skips the L2: it
goes from the logic layer to the owning vault, over the cube network when that vault is in
another stack, and its data (or write acknowledgement) comes back the same way (``NDP_FILL``).
With ``internal_gbps`` set, every DRAM access also crosses its cube's TSVs.

The memory path is built from components, each a compiled state of its own in :class:`GpuState`
with the functions that move a request through it: the address map
(:mod:`ndpsim.hw.dram.address_map`), the host interface, the cube network's hops
(:mod:`ndpsim.hw.hops`), the vaults and their banks (:mod:`ndpsim.hw.dram.controller`). This
module holds what is the GPU's own: the L2 slices and the crossbar, and where each kind of
request goes next.

Offloading a block: the GPU warp's request crosses the TX link (``OFFLOAD_ARRIVE``), runs in a
stack-SM slot (or waits for one), and when it is done and its writes acknowledged
(``OFFLOAD_DONE``) the acknowledgement crosses the RX link (``OFFLOAD_ACK``): the GPU
invalidates the lines the block wrote and the warp resumes after the block.

SNDP's partitioned execution adds two packets that leave the GPU through the L2 slices like
requests. A read-and-forward packet (RDF) is answered from the GPU's caches on a hit: the data
crosses the GPU's link to the target stack. On a miss it reads the owning vault, and the vault
forwards the data over the memory network to the target stack. A write-address packet (WTA)
crosses the GPU's link to the target stack. Either ends in the NSU's buffers
(``BUFFER_FILL``). Every NSU write sends an invalidation message from its vault to the GPU.

At one time, events come first, then DRAM channels, then SM clock edges: data arriving at ``t``
can be used by an instruction issued at ``t``, and a request arriving at ``t`` is seen by its
controller at ``t``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import numpy as np

from ndpsim.engine import events as ev
from ndpsim.engine import fifo, kinds
from ndpsim.engine.assemble import assemble
from ndpsim.hw import cache as cachemod
from ndpsim.hw import hops as hopsmod
from ndpsim.hw import host_interface as hostmod
from ndpsim.hw import link as linkmod
from ndpsim.hw import requests as rq
from ndpsim.hw.core import sm as smmod
from ndpsim.hw.dram import address_map as amapmod
from ndpsim.hw.dram import controller as ctl
from ndpsim.hw.dram import vaults as vaultmod
from ndpsim.hw.dram.vaults import EV_DRAM_DONE, EV_MEM_ARRIVE
from ndpsim.hw.gpu import offload as ofl
from ndpsim.hw.gpu import offload_execution as offx
from ndpsim.numba_cache import compiled
from ndpsim.systems.skeleton.program import AssembledLaunch
from ndpsim.trace.trace import MemoryKind, MemorySpace
from ndpsim.trace.work import (
    W_NUM_CTAS,
    KernelWork,
    inst_lanes,
    inst_mem,
    mem_kind,
    mem_space,
    mem_tx_count,
    mem_tx_first,  # fmt: skip
    tx_line,
)

EV_L2_REQUEST, EV_NDP_REQUEST = smmod.EV_L2_REQUEST, smmod.EV_NDP_REQUEST
EV_OFFLOAD_SEND, EV_OFFLOAD_DONE = offx.EV_OFFLOAD_SEND, offx.EV_OFFLOAD_DONE
(EV_L2_FILL, EV_SM_FILL, EV_NDP_FILL, EV_OFFLOAD_ARRIVE, EV_OFFLOAD_ACK,
 EV_BUFFER_FILL) = kinds.declare(
    __name__, "L2_FILL", "SM_FILL", "NDP_FILL", "OFFLOAD_ARRIVE", "OFFLOAD_ACK", "BUFFER_FILL",
)  # fmt: skip
#: The handler of each event kind, from which the engine assembles the loop.
HANDLERS = kinds.Handlers("the GPU model")
HANDLERS.on(EV_MEM_ARRIVE)(vaultmod.arrive)

(M_SLICES, M_L2_LATENCY, M_L2_PERIOD, M_XBAR_LATENCY, M_HEADER, M_LINE, M_L2_ENABLED,
 M_HEADROOM, M_HIST_BIN_PS, M_IDEAL, M_WRITE_INVALIDATIONS) = range(11)  # fmt: skip
MEM_PARAMS = 11
# M_WRITE_INVALIDATIONS: a stack processor's write sends an invalidation to the GPU (SNDP 4.2)

# accesses = hits + misses; a miss merges into an MSHR, takes one, or (stores) goes straight
# to memory; mshr_full_waits counts misses that first waited for a free MSHR
(L_ACCESSES, L_HITS, L_MISSES, L_MERGES, L_MSHR_FULL, L_WRITES, L_ATOMICS, L_FILLS,
 L_DRAM_READS, L_DRAM_WRITES) = range(10)  # fmt: skip
L2_STAT_NAMES = (
    "accesses", "hits", "misses", "mshr_merges", "mshr_full_waits", "write_throughs",
    "atomics", "fills", "dram_reads", "dram_writes",
)  # fmt: skip


def headroom(sms: int, schedulers: int) -> int:
    """Event slots and request ids advance() keeps free (it stops with ``GROW`` for
    :meth:`Launch.grow` to enlarge them): one round of every SM sends at most SMs x schedulers
    x 32 lines."""
    return sms * schedulers * 32 + 1024


class MemorySide(NamedTuple):
    """The GPU's side of memory: the L2 slices and the crossbar back to the SMs, and what the
    memory system completed."""

    params: np.ndarray  # int64[MEM_PARAMS]
    slice_port: np.ndarray  # int64[slices]: link from the slice back to the SMs
    mshr_wait_head: np.ndarray  # int64[slices]: requests waiting for a free L2 MSHR (a queue per
    mshr_wait_tail: np.ndarray  # slice, engine.fifo, linked by Q_L2_NEXT)
    stats: np.ndarray  # int64[slices, len(L2_STAT_NAMES)]
    progress: np.ndarray  # int64[2]: requests completed, time of the last completion
    latency_hist: np.ndarray  # int64[bins]: load and atomic round trips (SM to SM), in bins of
    # M_HIST_BIN_PS; the last bin holds everything longer


# ---------------------------------------------------------------------------- handlers
@compiled(inline=True)
def _to_memory(mem, amap, host, hops, links, events, pool, rid, now):
    """Send request ``rid`` (its line already physical) through the host interface to its
    vault."""
    f = pool.fields[rid]
    cube = amapmod.locate(amap, pool, rid)
    if rq.reads(f[rq.Q_KIND]):
        size, traffic = mem.params[M_HEADER], linkmod.READ_REQUEST
    else:
        size, traffic = mem.params[M_HEADER] + f[rq.Q_BYTES], linkmod.WRITE_REQUEST
    arrival = hostmod.down(host, hops, links, cube, now, size, traffic)
    ev.push(events, arrival, EV_MEM_ARRIVE, rid, 0)


@compiled(inline=True)
def _respond(sm, mem, amap, host, hops, links, events, pool, rid, slice_, now):
    """Send line data from slice ``slice_`` to the SM of ``rid``. An atomic is done now, at
    the L2, and its result written through to memory."""
    size_bytes = mem.params[M_HEADER] + mem.params[M_LINE]
    arrival = linkmod.send(links, mem.slice_port[slice_], now, size_bytes, linkmod.READ_DATA)
    ev.push(events, arrival + mem.params[M_XBAR_LATENCY], EV_SM_FILL, rid, 0)
    if pool.fields[rid, rq.Q_KIND] == rq.R_ATOMIC:
        # advance() keeps ids in reserve for this
        write = rq.new(pool, pool.fields[rid, rq.Q_LINE], rq.R_STORE, -1, -1,
                       pool.fields[rid, rq.Q_BYTES], now)  # fmt: skip
        smmod.owe(sm, pool, write, pool.fields[rid, rq.Q_PROGRAM])  # the atomic's program's
        pool.fields[write, rq.Q_SOURCE] = rq.FROM_GPU
        st = mem.stats[slice_]
        st[L_WRITES] += 1
        st[L_DRAM_WRITES] += 1
        _to_memory(mem, amap, host, hops, links, events, pool, write, now)


@compiled(inline=True)
def _miss_waits(mem, l2, pool, rid, slice_, line):
    """A read that missed in slice ``slice_`` takes an MSHR and goes to memory (True), or
    waits: behind the MSHR already fetching its line, or in order for a free MSHR."""
    st = mem.stats[slice_]
    f = pool.fields[rid]
    mshr = cachemod.mshr_find(l2, slice_, line)
    if mshr >= 0:
        st[L_MISSES] += 1
        st[L_MERGES] += 1
        f[rq.Q_L2_NEXT] = l2.mshr_head[slice_, mshr]
        l2.mshr_head[slice_, mshr] = rid
        return False
    mshr = cachemod.mshr_allocate(l2, slice_, line)
    if mshr < 0:  # wait, in order, for a fill to free an MSHR
        st[L_MSHR_FULL] += 1
        fifo.push(mem.mshr_wait_head, mem.mshr_wait_tail, pool.fields[:, rq.Q_L2_NEXT], slice_,
                  rid)  # fmt: skip
        return False
    f[rq.Q_L2_NEXT] = -1  # it heads the MSHR's waiting list
    l2.mshr_head[slice_, mshr] = rid
    return True


@compiled(inline=True)
def _l2_request(sm, mem, l2, amap, host, hops, links, events, pool, rid, now, retry):
    """Request ``rid`` reaches its L2 slice (``retry``: again, after waiting for an MSHR; it
    was counted as an access then)."""
    f = pool.fields[rid]
    line = f[rq.Q_LINE]
    slice_ = line % mem.params[M_SLICES]
    f[rq.Q_SLICE] = slice_
    st = mem.stats[slice_]
    kind = f[rq.Q_KIND]
    latency = mem.params[M_L2_LATENCY]
    enabled = mem.params[M_L2_ENABLED] != 0
    if not retry:
        st[L_ACCESSES] += 1
        if kind == rq.R_ATOMIC:
            st[L_ATOMICS] += 1
    hit = enabled and cachemod.lookup(l2, slice_, line)
    if kind == rq.R_STORE or kind == rq.R_REDUCTION:  # written through
        st[L_HITS if hit else L_MISSES] += 1
        st[L_WRITES] += 1
        st[L_DRAM_WRITES] += 1
    elif hit:
        st[L_HITS] += 1
        _respond(sm, mem, amap, host, hops, links, events, pool, rid, slice_, now + latency)
        return
    else:
        if enabled and not _miss_waits(mem, l2, pool, rid, slice_, line):
            return
        st[L_MISSES] += 1
        st[L_DRAM_READS] += 1
    _to_memory(mem, amap, host, hops, links, events, pool, rid, now + latency)


@HANDLERS.on(EV_DRAM_DONE)
@compiled
def _dram_done(sm, mem, host, hops, vaults, links, events, pool, rid, now):
    f = pool.fields[rid]
    cube = f[rq.Q_CUBE]
    header = mem.params[M_HEADER]
    moved = mem.params[M_LINE] if rq.reads(f[rq.Q_KIND]) else f[rq.Q_BYTES]
    now = vaultmod.through_tsv(vaults, links, cube, now, moved)
    if f[rq.Q_SOURCE] == rq.FROM_STACK:
        _ndp_respond(sm, mem, host, hops, links, events, pool, rid, now)
        return
    if f[rq.Q_KIND] == rq.R_RDF:
        _forward(mem, hops, links, events, pool, rid, cube, now)
        return
    if rq.reads(f[rq.Q_KIND]):
        size = header + mem.params[M_LINE]
        arrival = hostmod.up(host, hops, links, cube, now, size, linkmod.READ_DATA)
        ev.push(events, arrival, EV_L2_FILL, rid, 0)
        return
    # the write is acknowledged; it counts as completed once the acknowledgement leaves the
    # cube network (before the host link)
    now = hopsmod.route(hops, links, cube, host.port[cube], now, header, linkmod.WRITE_ACK)
    linkmod.send(links, host.from_cube[cube], now, header, linkmod.WRITE_ACK)
    mem.progress[0] += 1
    mem.progress[1] = now
    smmod.release_request(sm, pool, rid, now)


@compiled(inline=True)
def _l2_fill(sm, mem, l2, amap, host, hops, links, events, pool, rid, now):
    """A line reached its L2 slice: answer the requests waiting for it. Returns the slice, whose
    MSHR is free again (-1 without an L2)."""
    f = pool.fields[rid]
    line = f[rq.Q_LINE]
    slice_ = f[rq.Q_SLICE]
    mem.stats[slice_, L_FILLS] += 1
    if mem.params[M_L2_ENABLED] == 0:
        _respond(sm, mem, amap, host, hops, links, events, pool, rid, slice_, now)
        return -1
    cachemod.fill(l2, slice_, line, False)
    mshr = cachemod.mshr_find(l2, slice_, line)
    waiter = cachemod.mshr_release(l2, slice_, mshr)
    while waiter >= 0:
        nxt = pool.fields[waiter, rq.Q_L2_NEXT]
        _respond(sm, mem, amap, host, hops, links, events, pool, waiter, slice_, now)
        waiter = nxt
    return slice_


@compiled(inline=True)
def _mshr_waiter(mem, l2, pool, slice_):
    """The oldest request waiting for an MSHR of ``slice_``, taken off the wait list, if an
    MSHR is free (else, or for slice -1, -1)."""
    if slice_ < 0 or fifo.empty(mem.mshr_wait_head, slice_):
        return -1
    if l2.mshr_used[slice_] >= l2.mshr_line.shape[1]:
        return -1
    return fifo.pop(mem.mshr_wait_head, pool.fields[:, rq.Q_L2_NEXT], slice_)


@HANDLERS.on(EV_SM_FILL)
@compiled
def _sm_fill(sm, work, l1, mem, off, events, pool, rid, now):
    f = pool.fields[rid]
    s = f[rq.Q_SM]
    mem.progress[0] += 1
    mem.progress[1] = now
    hist = mem.latency_hist
    hist[min((now - f[rq.Q_ISSUED]) // mem.params[M_HIST_BIN_PS], hist.shape[0] - 1)] += 1
    if f[rq.Q_KIND] == rq.R_ATOMIC or sm.params[smmod.S_L1_ENABLED] == 0:
        smmod.complete_transaction(sm, work, off, events, s, f[rq.Q_SLOT], f[rq.Q_LOAD], now)
        smmod.release_request(sm, pool, rid, now)
        smmod.memory_freed(sm, l1, s, now)
        return
    line = f[rq.Q_LINE]
    cachemod.fill(l1, s, line, False)
    mshr = cachemod.mshr_find(l1, s, line)
    waiter = cachemod.mshr_release(l1, s, mshr)
    while waiter >= 0:
        w = pool.fields[waiter]
        nxt = w[rq.Q_NEXT]
        smmod.complete_transaction(sm, work, off, events, s, w[rq.Q_SLOT], w[rq.Q_LOAD], now)
        smmod.release_request(sm, pool, waiter, now)
        waiter = nxt
    smmod.memory_freed(sm, l1, s, now)


# ------------------------------------------------------------------------ near-data
@HANDLERS.on(EV_NDP_REQUEST)
@compiled
def _ndp_request(sm, mem, amap, hops, links, events, pool, rid, now):
    """A stack SM's request leaves the logic layer for its vault: directly when the vault is in
    the same stack (or always, in the ideal system where data sits with its code), else over
    the cube network."""
    f = pool.fields[rid]
    cube = amapmod.locate(amap, pool, rid)
    home = sm.stack[f[rq.Q_SM]]
    if cube != home and mem.params[M_IDEAL] == 0:
        if rq.reads(f[rq.Q_KIND]):
            now = hopsmod.route(hops, links, home, cube, now, mem.params[M_HEADER],
                                linkmod.READ_REQUEST)  # fmt: skip
        else:
            now = hopsmod.route(hops, links, home, cube, now,
                                mem.params[M_HEADER] + f[rq.Q_BYTES],
                                linkmod.WRITE_REQUEST)  # fmt: skip
    ev.push(events, now, EV_MEM_ARRIVE, rid, 0)


@compiled
def _ndp_respond(sm, mem, host, hops, links, events, pool, rid, now):
    """Read data or a write acknowledgement goes back from the vault to the stack unit."""
    f = pool.fields[rid]
    home = sm.stack[f[rq.Q_SM]]
    cube = f[rq.Q_CUBE]
    if cube != home and mem.params[M_IDEAL] == 0:
        if rq.reads(f[rq.Q_KIND]):
            now = hopsmod.route(hops, links, cube, home, now,
                                mem.params[M_HEADER] + mem.params[M_LINE],
                                linkmod.READ_DATA)  # fmt: skip
        else:
            now = hopsmod.route(hops, links, cube, home, now, mem.params[M_HEADER],
                                linkmod.WRITE_ACK)  # fmt: skip
    if not rq.reads(f[rq.Q_KIND]) and mem.params[M_WRITE_INVALIDATIONS] != 0:
        hostmod.up(host, hops, links, cube, now, mem.params[M_HEADER], linkmod.OTHER)
    ev.push(events, now, EV_NDP_FILL, rid, 0)


@HANDLERS.on(EV_NDP_FILL)
@compiled
def _ndp_fill(sm, work, l1, mem, off, events, pool, rid, now):
    f = pool.fields[rid]
    if rq.reads(f[rq.Q_KIND]):
        _sm_fill(sm, work, l1, mem, off, events, pool, rid, now)
        return
    mem.progress[0] += 1
    mem.progress[1] = now
    smmod.write_acknowledged(sm, work, off, events, f[rq.Q_SM], f[rq.Q_SLOT], now)
    smmod.release_request(sm, pool, rid, now)


@compiled(inline=True)
def _lanes(work, off, i):
    """Lanes whose registers an offload packet carries: TOM's Eq. 3/4 count the whole warp;
    SNDP sends only the active threads' values (sec. 4.4)."""
    if off.params[ofl.O_EXECUTION] == ofl.EXECUTE_PARTITIONED:
        return inst_lanes(work, off.inst_start[i])
    return 32


@compiled
def _partitioned_at_l2(sm, l1, l2, mem, amap, host, hops, links, events, pool, off, rid, now):
    """An RDF or WTA packet reached the L2 slice it leaves the GPU through, freeing its entry
    in the SM's ready-packet buffer. A WTA goes to the target stack. An RDF that hits in the
    L1 or L2 sends the cached data (only the active threads' bytes) to the target stack;
    one that misses goes to the owning vault, which forwards the data."""
    f = pool.fields[rid]
    s = f[rq.Q_SM]
    off.ready_packets[s] -= 1
    smmod.memory_freed(sm, l1, s, now)
    line = f[rq.Q_LINE]
    slice_ = line % mem.params[M_SLICES]
    target = f[rq.Q_TARGET]
    header = mem.params[M_HEADER]
    st = mem.stats[slice_]
    if f[rq.Q_KIND] == rq.R_WTA:
        arrival = hostmod.down(host, hops, links, target, now, header, linkmod.OFFLOAD)
        ev.push(events, arrival, EV_BUFFER_FILL, rid, 0)
        return
    latency = mem.params[M_L2_LATENCY]
    hit = f[rq.Q_HIT] != 0  # the SM's L1 held the line: the L2 is not looked up
    if not hit:
        st[L_ACCESSES] += 1
        if mem.params[M_L2_ENABLED] != 0 and cachemod.lookup(l2, slice_, line):
            hit = True
            st[L_HITS] += 1
        else:
            st[L_MISSES] += 1
    if hit:
        off.stats[target, ofl.K_RDF_HITS] += 1
        off.cand_rdf_hits[off.inst_candidate[f[rq.Q_SLOT]]] += 1
        size = header + f[rq.Q_BYTES]
        arrival = hostmod.down(host, hops, links, target, now + latency, size,
                               linkmod.READ_DATA)  # fmt: skip
        ev.push(events, arrival, EV_BUFFER_FILL, rid, 0)
        return
    st[L_DRAM_READS] += 1
    _to_memory(mem, amap, host, hops, links, events, pool, rid, now + latency)


@compiled
def _forward(mem, hops, links, events, pool, rid, cube, now):
    """The owning vault (in ``cube``) read an RDF's line: its data, only the active threads'
    bytes, goes over the memory network to the target stack's NSU."""
    f = pool.fields[rid]
    now = hopsmod.route(hops, links, cube, f[rq.Q_TARGET], now,
                        mem.params[M_HEADER] + f[rq.Q_BYTES], linkmod.READ_DATA)  # fmt: skip
    ev.push(events, now, EV_BUFFER_FILL, rid, 0)


@HANDLERS.on(EV_BUFFER_FILL)
@compiled
def _buffer_fill(sm, work, mem, off, pool, rid, now):
    f = pool.fields[rid]
    mem.progress[0] += 1
    mem.progress[1] = now
    offx.buffer_filled(sm, work, off, f[rq.Q_SLOT], f[rq.Q_LOAD], now)
    smmod.release_request(sm, pool, rid, now)


@HANDLERS.on(EV_OFFLOAD_SEND)
@compiled
def _offload_send(mem, host, hops, work, links, events, off, i, now):
    d = off.inst_dest[i]
    if mem.params[M_IDEAL] == 0:
        size = ofl.request_bytes(off, off.inst_candidate[i], _lanes(work, off, i))
        now = hostmod.down(host, hops, links, d, now, size, linkmod.OFFLOAD)
    ev.push(events, now, EV_OFFLOAD_ARRIVE, i, 0)


@HANDLERS.on(EV_OFFLOAD_ARRIVE)
@compiled
def _offload_arrive(sm, work, l1, off, events, i, now):
    """An offload request reached its stack: it runs now on the first of the stack's
    processors with a free warp slot, else waits for one, first come first served."""
    d = off.inst_dest[i]
    for k in range(off.stack_units.shape[1]):
        s = off.stack_units[d, k]
        if s >= 0 and offx.start_offloaded(sm, work, l1, off, events, s, i, now):
            return
    off.stats[d, ofl.K_QUEUED] += 1
    fifo.push(off.queue_head, off.queue_tail, off.inst_next, d, i)


@compiled
def _written_lines(work, off, i):
    """How many line writes instance ``i`` made (what its acknowledgement invalidates)."""
    n = 0
    for pos in range(off.inst_start[i], off.inst_end[i]):
        m = inst_mem(work, pos)
        if m >= 0 and mem_space(work, m) != MemorySpace.SHARED:
            kind = mem_kind(work, m)
            if kind == MemoryKind.STORE or kind == MemoryKind.REDUCTION:
                n += mem_tx_count(work, m)
    return n


@HANDLERS.on(EV_OFFLOAD_DONE)
@compiled
def _offload_done(sm, work, l1, mem, host, hops, links, events, off, s, w, now):
    """Stack slot ``w`` of SM ``s`` finished its block: acknowledge it over the RX link and
    start the next offload waiting for a slot."""
    i = off.slot_instance[s, w]
    d = off.inst_dest[i]
    offx.free_stack_slot(sm, work, off, s, w, now)
    if not fifo.empty(off.queue_head, d):
        offx.start_offloaded(sm, work, l1, off, events, s,
                              fifo.pop(off.queue_head, off.inst_next, d), now)  # fmt: skip
    if mem.params[M_IDEAL] == 0:
        # a whole block's acknowledgement lists the lines it wrote for the GPU to invalidate
        # (TOM); with partitioned execution the vaults already sent one per write (SNDP)
        partitioned = off.params[ofl.O_EXECUTION] == ofl.EXECUTE_PARTITIONED
        written = 0 if partitioned else _written_lines(work, off, i)
        size = ofl.ack_bytes(off, off.inst_candidate[i], _lanes(work, off, i), written)
        now = hostmod.up(host, hops, links, d, now, size, linkmod.OFFLOAD)
    ev.push(events, now, EV_OFFLOAD_ACK, i, 0)


@HANDLERS.on(EV_OFFLOAD_ACK)
@compiled
def _offload_ack(sm, work, l1, l2, mem, off, events, page, i, now):
    """The acknowledgement reached the GPU: the lines the block wrote are invalidated in the L2
    and in the warp's L1 (sec. 4.4.2), and the warp resumes."""
    slots = sm.slot_warp.shape[1]
    s = off.inst_home[i] // slots
    w = off.inst_home[i] % slots
    d = off.inst_dest[i]
    invalidated = 0
    for pos in range(off.inst_start[i], off.inst_end[i]):
        m = inst_mem(work, pos)
        if m < 0 or mem_space(work, m) == MemorySpace.SHARED:
            continue
        kind = mem_kind(work, m)
        if kind != MemoryKind.STORE and kind != MemoryKind.REDUCTION:
            continue
        for t in range(mem_tx_first(work, m), mem_tx_first(work, m) + mem_tx_count(work, m)):
            line = smmod.physical_line(page, tx_line(work, t))
            cachemod.invalidate(l2, line % mem.params[M_SLICES], line)
            cachemod.invalidate(l1, s, line)
            invalidated += 1
    off.pending[d] -= 1
    off.stats[d, ofl.K_ACKED] += 1
    off.stats[d, ofl.K_INVALIDATIONS] += invalidated
    off.control[ofl.C_BLOCK_INSTRUCTIONS] += off.inst_end[i] - off.inst_start[i]
    if sm.slot_state[s, w] == offx.OFFLOADED:
        offx.resume_offloaded(sm, work, off, events, s, w, now)
    else:  # an SNDP warp still finishing its part of the block resumes when it gets there
        off.inst_acked[i] = True


# ------------------------------------------------------------------------------- loop
class GpuState(NamedTuple):
    """Every component of the compiled model: what its handlers and clocks receive."""

    sm: smmod.SmState
    work: KernelWork
    l1: cachemod.Caches
    pool: rq.RequestPool
    links: linkmod.Links
    events: ev.EventQueue
    sm_port: np.ndarray  # int64[sms]: each SM's link to the crossbar
    page: np.ndarray
    mem: MemorySide
    l2: cachemod.Caches
    amap: amapmod.AddressMap
    host: hostmod.HostInterface
    hops: hopsmod.Hops
    vaults: vaultmod.Vaults
    dram: ctl.DramState
    off: ofl.OffloadState


@HANDLERS.on(EV_L2_REQUEST, EV_L2_FILL)
def _l2_event(sm, l1, l2, mem, amap, host, hops, links, events, pool, off, kind, rid, now):
    """A request reaching its L2 slice, or a fill after which requests waiting for an MSHR go
    on, oldest first, for as long as MSHRs stay free (one that hits or merges takes none, so the
    next may go too). One handler for both, so that the L2 request path, inlined into it,
    is compiled once."""
    if kind == EV_L2_REQUEST and pool.fields[rid, rq.Q_KIND] >= rq.R_RDF:
        _partitioned_at_l2(sm, l1, l2, mem, amap, host, hops, links, events, pool, off, rid, now)
        return
    freed = -1  # the slice whose MSHR a fill freed
    if kind == EV_L2_FILL:
        freed = _l2_fill(sm, mem, l2, amap, host, hops, links, events, pool, rid, now)
        rid = _mshr_waiter(mem, l2, pool, freed)
    while rid >= 0:
        _l2_request(sm, mem, l2, amap, host, hops, links, events, pool, rid, now, freed >= 0)
        rid = _mshr_waiter(mem, l2, pool, freed)


@compiled(inline=True)
def _short_of_room(mem, events, pool):
    """Event slots or request ids below what one round of every SM may take."""
    room = mem.params[M_HEADROOM]
    return events.meta[2] < room or pool.meta[0] < room


@compiled(inline=True)
def _finished(sm, work, pool, mem):
    """Every CTA finished and every request (writes included) completed; what is left in the
    queue (refresh ticks) belongs to the memory, not to this kernel."""
    if sm.counters[3] != work.params[W_NUM_CTAS]:
        return False, 0
    if pool.meta[0] != pool.free.shape[0]:
        return False, 0
    end = mem.progress[1]
    for s in range(sm.params[smmod.S_COUNT]):
        end = max(end, sm.clock_last[s])
    return True, end


@compiled(inline=True)
def _requested(sm, off):
    """TOM's learning phase has seen all the instances it wanted (only an issuing warp ends
    it): the controller chooses the mapping; or a program's launch ended and its next waits
    (several programs at once): the system starts it."""
    learned = off.control[ofl.C_LEARNING] != 0 and ofl.learning_done(off)
    return learned or smmod.launch_ended(sm)


#: The engine's loop over this model (:func:`ndpsim.engine.assemble.assemble`), compiled and
#: cached here: ``advance(*state, until)``.
advance = compiled(entry=True)(
    assemble(
        GpuState,
        HANDLERS,
        (vaultmod.CLOCK, smmod.CLOCK),
        short_of_room=_short_of_room,
        finished=_finished,
        requested=_requested,
        home=__name__,
        aliases={"ext": "off"},  # the SIMT core's extension: TOM's and SNDP's offload state
    )
)


class Launch(AssembledLaunch):
    """One kernel launch on the compiled model (the skeleton's launch on :data:`advance`): the
    event queue and the request pool grow when it runs short of them; its progress is the warp
    instructions issued and the requests completed; ``diagnose`` (given the pool and the time)
    says where a stuck launch's work is."""

    def __init__(self, state: GpuState, diagnose: Callable[[rq.RequestPool, int], str]):
        super().__init__(advance, state, int(state.mem.params[M_HEADROOM]), _progress, diagnose)


def _progress(state: GpuState) -> tuple[int, int]:
    return int(state.sm.stats[:, smmod.T_ISSUED].sum()), int(state.mem.progress[0])
