"""The ``cpu`` kind's compiled model: the cores (:mod:`ndpsim.hw.cpu.core`) ticked on their
clock, the cache hierarchy (:mod:`ndpsim.hw.cpu.caches`) answering their requests as they ask,
and the DRAM controllers (:mod:`ndpsim.hw.dram.vaults`) behind the LLC: directly (DDR
channels), or in 3D stacks behind the host's SerDes links (``K_LINKED``), where a read's request
packet goes down the links, its data comes back up after the cube's TSVs, and a write-back goes
down with its data and is acknowledged.

After every round of the cores (and after every answer from memory, which may start loads that
waited on it), :func:`_serve` takes the cores' requests: a hit answers the core at once (a load
with :func:`~ndpsim.hw.cpu.core.load_done`, a store's write with an event at its time); an LLC
miss becomes a DRAM read of its line's 128-byte block (ndpsim's memory line), whose answer
fills the LLC (both 64-byte halves) and then every access that waited on its MSHR; the
prefetchers' reads and the LLC's write-backs go to DRAM the same way. Requests wait for an LLC
MSHR when all are busy (retried a core cycle later).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ndpsim.engine import events as ev
from ndpsim.engine import kinds
from ndpsim.engine.assemble import Clock, assemble
from ndpsim.engine.clock import NEVER
from ndpsim.hw import cache as cachemod
from ndpsim.hw import hops as hopsmod
from ndpsim.hw import host_interface as hostmod
from ndpsim.hw import link as linkmod
from ndpsim.hw import requests as rq
from ndpsim.hw.core.sm import physical_line
from ndpsim.hw.cpu import caches as cc
from ndpsim.hw.cpu import core as cpu
from ndpsim.hw.dram import address_map, controller
from ndpsim.hw.dram import vaults as vaultmod
from ndpsim.numba_cache import compiled
from ndpsim.trace.cpu_threads import PRIVATE_BASE
from ndpsim.trace.work import LINE_BYTES

#: Cache lines of 64 bytes (ALP Table 1) inside ndpsim's 128-byte memory lines: a read from
#: memory brings a block of two cache lines.
CPU_LINE_SHIFT, MEMORY_LINE_SHIFT = 6, 7
BLOCK_SHIFT = MEMORY_LINE_SHIFT - CPU_LINE_SHIFT
# what a request to DRAM is for (Q_SOURCE)
FOR_LOAD, FOR_STORE, FOR_PREFETCH, FOR_WRITEBACK, WAITING = 0, 1, 2, 3, 4
# the model's scalars (State.clocks)
(K_NEXT_TICK, K_PERIOD_PS, K_PATH_PS, K_PRIVATE_LINE, K_PRIVATE_FIRST, K_PRIVATE_LINES,
 K_WRITES_PENDING, K_LAST_DONE, K_LINKED, K_HEADER_BYTES, K_MIX) = range(11)  # fmt: skip
CLOCK_FIELDS = 11


class Mix(NamedTuple):
    """Several programs' launches as one work (``K_MIX``, :func:`~ndpsim.trace.cpu_work.
    merge_cpu_works`): the program each core runs, where each core's launches end, and how far
    each program has come."""

    core_program: np.ndarray  # int64[cores]: -1 for a core without a program
    launch_end: np.ndarray  # int64[cores, most launches]: one past each launch's segments
    launches: np.ndarray  # int64[programs]: how many each has
    running: np.ndarray  # int64[programs]: the launch each runs (its count once it is done)
    ended_ps: np.ndarray  # int64[programs]: when its last launch ended


def build_mix(core_program: np.ndarray, launch_end: np.ndarray, launches: list[int]) -> Mix:
    return Mix(core_program=np.asarray(core_program, dtype=np.int64),
               launch_end=np.asarray(launch_end, dtype=np.int64),
               launches=np.asarray(launches, dtype=np.int64),
               running=np.zeros(len(launches), dtype=np.int64),
               ended_ps=np.zeros(len(launches), dtype=np.int64))  # fmt: skip


def one_program(cores: int) -> Mix:
    """The mix of a run of one program launch by launch (unused: ``K_MIX`` is 0)."""
    return build_mix(np.zeros(cores), np.zeros((cores, 1)), [1])


class State(NamedTuple):  # the compiled model's components; handlers take them by name
    cores: cpu.CpuCores
    work: object  # ndpsim.trace.cpu_work.CpuWork
    caches: cc.CpuCaches
    pool: rq.RequestPool
    events: ev.EventQueue
    page: tuple
    amap: address_map.AddressMap
    host: hostmod.HostInterface  # the host's links to the cubes (used with K_LINKED)
    hops: hopsmod.Hops
    links: linkmod.Links
    vaults: vaultmod.Vaults
    dram: controller.DramState
    mix: Mix
    clocks: np.ndarray  # int64[CLOCK_FIELDS]


HANDLERS = kinds.Handlers("CPU")
HANDLERS.on(vaultmod.EV_MEM_ARRIVE)(vaultmod.arrive)
EV_WRITTEN, EV_RETRY = kinds.declare(__name__, "CPU_WRITTEN", "CPU_RETRY")


@compiled(inline=True)
def _memory_line(page, clocks, memory):
    """The physical line of 128-byte ``memory`` line: through the page table for device memory,
    at the top of memory for the CPU threads' private buffers."""
    if memory < clocks[K_PRIVATE_LINE]:
        return physical_line(page, memory)
    return clocks[K_PRIVATE_FIRST] + memory - clocks[K_PRIVATE_LINE]


@compiled(inline=True)
def _mapped(page, clocks, memory):
    """Whether 128-byte ``memory`` line is the program's: in its pages or a thread's private
    buffers (a prefetcher may run past the end of an array)."""
    if memory >= clocks[K_PRIVATE_LINE]:
        return memory - clocks[K_PRIVATE_LINE] < clocks[K_PRIVATE_LINES]
    table, base, shift = page
    vpn = (memory >> (shift - MEMORY_LINE_SHIFT)) - base
    return 0 <= vpn < len(table)


@compiled
def _to_memory(caches, pool, events, page, amap, host, hops, links, clocks, core, line, kind,
               purpose, mshr, t):  # fmt: skip
    """Send a read (or write) of cache ``line``'s memory line to DRAM at ``t``; returns the
    request."""
    block = line >> BLOCK_SHIFT
    rid = rq.new(pool, _memory_line(page, clocks, block), kind, core, line, 64, t)
    f = pool.fields[rid]
    f[rq.Q_SOURCE], f[rq.Q_TARGET], f[rq.Q_HIT] = purpose, block, mshr
    cube = address_map.locate(amap, pool, rid)
    t += clocks[K_PATH_PS] // 2
    if clocks[K_LINKED]:  # a request packet down the SerDes links, a write with its data
        if kind == rq.R_STORE:
            size, traffic = clocks[K_HEADER_BYTES] + LINE_BYTES, linkmod.WRITE_REQUEST
        else:
            size, traffic = clocks[K_HEADER_BYTES], linkmod.READ_REQUEST
        t = hostmod.down(host, hops, links, cube, t, size, traffic)
    ev.push(events, t, vaultmod.EV_MEM_ARRIVE, rid, 0)
    return rid


@compiled(inline=True)
def _answer(cores, work, events, clocks, c, entry, write, t):
    if write:
        ev.push(events, t, EV_WRITTEN, c, 0)
    else:
        cpu.load_done(cores, work, c, entry, t)


@compiled(inline=True)
def _access(cores, work, caches, pool, events, page, amap, host, hops, links, clocks, c, entry,
            line, write, t):  # fmt: skip
    """One access of core ``c`` (ROB ``entry`` of a load, -1 for a store's write)."""
    done, outcome, m = cc.access(caches, c, line, write, t)
    if outcome == cc.HIT:
        _answer(cores, work, events, clocks, c, entry, write, done)
        return
    if outcome == cc.RETRY:  # every LLC MSHR busy: ask again a cycle later
        rid = rq.new(pool, line, rq.R_STORE if write else rq.R_LOAD, c, entry, 64, t)
        ev.push(events, t + clocks[K_PERIOD_PS], EV_RETRY, rid, 0)
        return
    purpose = FOR_STORE if write else FOR_LOAD
    if outcome == cc.MISS:
        _to_memory(caches, pool, events, page, amap, host, hops, links, clocks, c, line,
                   rq.R_LOAD, purpose, m, done)  # fmt: skip
        # the access itself waits on the MSHR with any that merge into it
    rid = rq.new(pool, line, rq.R_LOAD, c, entry, 64, done)
    f = pool.fields[rid]
    f[rq.Q_SOURCE], f[rq.Q_TARGET] = WAITING, purpose
    f[rq.Q_NEXT] = caches.llc.mshr_head[0, m]
    caches.llc.mshr_head[0, m] = rid


@compiled
def _serve(cores, work, caches, pool, events, page, amap, host, hops, links, clocks, now):
    """Take every request the cores and the caches have left at ``now``."""
    k = 0
    while k < cores.req_used[0]:
        c, entry = cores.req_core[k], cores.req_entry[k]
        write = cores.req_kind[k] == cpu.REQ_STORE
        _access(cores, work, caches, pool, events, page, amap, host, hops, links, clocks, c, entry,
                cores.req_address[k] >> CPU_LINE_SHIFT, write, cores.req_time[k])  # fmt: skip
        if write:
            clocks[K_WRITES_PENDING] += 1
        k += 1
    cores.req_used[0] = 0
    for n in range(caches.prefetch_used[0]):
        line, m = caches.prefetch_line[n], caches.prefetch_mshr[n]
        if _mapped(page, clocks, line >> BLOCK_SHIFT):
            _to_memory(caches, pool, events, page, amap, host, hops, links, clocks,
                       caches.prefetch_core[n], line, rq.R_LOAD, FOR_PREFETCH, m,
                       now)  # fmt: skip
        elif cachemod.mshr_release(caches.llc, 0, m) >= 0:  # nobody can want such a line
            raise ValueError("an access waits on a prefetch of a line outside the program")
    caches.prefetch_used[0] = 0
    for n in range(caches.writeback_used[0]):
        _to_memory(caches, pool, events, page, amap, host, hops, links, clocks, -1,
                   caches.writeback_line[n], rq.R_STORE, FOR_WRITEBACK, -1, now)  # fmt: skip
    caches.writeback_used[0] = 0


@HANDLERS.on(vaultmod.EV_DRAM_DONE)
@compiled
def _dram_done(cores, work, caches, pool, events, page, amap, host, hops, links, vaults, clocks,
               rid, now):  # fmt: skip
    """A line is back from DRAM (or a write-back is done): the LLC takes it, then the private
    caches of every access that waited on its MSHR, and of the prefetcher that asked."""
    f = pool.fields[rid]
    purpose, block, core, mshr = f[rq.Q_SOURCE], f[rq.Q_TARGET], f[rq.Q_SM], f[rq.Q_HIT]
    t = now
    if clocks[K_LINKED]:  # through the cube's TSVs, then the data (or a write's acknowledgement)
        cube = f[rq.Q_CUBE]  # up the links
        t = vaultmod.through_tsv(vaults, links, cube, t, LINE_BYTES)
        if purpose == FOR_WRITEBACK:  # nobody waits for it
            hostmod.up(host, hops, links, cube, t, clocks[K_HEADER_BYTES], linkmod.WRITE_ACK)
        else:
            t = hostmod.up(host, hops, links, cube, t, clocks[K_HEADER_BYTES] + LINE_BYTES,
                           linkmod.READ_DATA)  # fmt: skip
    t += clocks[K_PATH_PS] - clocks[K_PATH_PS] // 2
    clocks[K_LAST_DONE] = max(clocks[K_LAST_DONE], t)
    line = f[rq.Q_SLOT]  # the cache line that asked
    rq.release(pool, rid)
    if purpose == FOR_WRITEBACK:
        return
    waiter = cc.fill_from_memory(caches, core, block, mshr)
    if purpose == FOR_PREFETCH:
        cc.fill_prefetched(caches, core, line)
    while waiter >= 0:
        w = pool.fields[waiter]
        c, entry, write = w[rq.Q_SM], w[rq.Q_SLOT], w[rq.Q_TARGET] == FOR_STORE
        line, nxt = w[rq.Q_LINE], w[rq.Q_NEXT]
        rq.release(pool, waiter)
        _answer(cores, work, events, clocks, c, entry, write,
                cc.complete_miss(caches, c, line, write, t))  # fmt: skip
        waiter = nxt
    _serve(cores, work, caches, pool, events, page, amap, host, hops, links, clocks, now)


@HANDLERS.on(EV_WRITTEN)
@compiled
def _written(cores, clocks, a0, now):
    cpu.store_written(cores, a0)
    clocks[K_WRITES_PENDING] -= 1
    clocks[K_LAST_DONE] = max(clocks[K_LAST_DONE], now)


@HANDLERS.on(EV_RETRY)
@compiled
def _retry(cores, work, caches, pool, events, page, amap, host, hops, links, clocks, rid, now):
    f = pool.fields[rid]
    c, entry, line, write = f[rq.Q_SM], f[rq.Q_SLOT], f[rq.Q_LINE], f[rq.Q_KIND] == rq.R_STORE
    rq.release(pool, rid)
    _access(cores, work, caches, pool, events, page, amap, host, hops, links, clocks, c, entry,
            line, write, now)  # fmt: skip
    _serve(cores, work, caches, pool, events, page, amap, host, hops, links, clocks, now)


@compiled(inline=True)
def _cores_next(clocks):
    return clocks[K_NEXT_TICK]


@compiled
def _next_launches(cores, work, mix, now):
    """Each program whose cores have all finished their launch goes on to its next one, or
    ends."""
    for p in range(len(mix.launches)):
        if mix.running[p] >= mix.launches[p]:
            continue
        done = True
        for c in range(len(mix.core_program)):
            done = done and (mix.core_program[c] != p or cpu.finished(cores, c))
        if not done:
            continue
        mix.running[p] += 1
        if mix.running[p] == mix.launches[p]:
            mix.ended_ps[p] = now
            continue
        for c in range(len(mix.core_program)):
            if mix.core_program[c] == p:
                cpu.resume(cores, work, c, mix.launch_end[c, mix.running[p]])


@compiled
def _cores_tick(cores, work, caches, pool, events, page, amap, host, hops, links, mix, clocks,
                now):  # fmt: skip
    if now < clocks[K_NEXT_TICK]:
        return
    cpu.tick(cores, work, now)
    _serve(cores, work, caches, pool, events, page, amap, host, hops, links, clocks, now)
    if clocks[K_MIX]:
        _next_launches(cores, work, mix, now)
    busy = False
    for c in range(len(cores.segment)):
        busy = busy or not cpu.finished(cores, c)
    clocks[K_NEXT_TICK] = now + clocks[K_PERIOD_PS] if busy else NEVER
    if not busy:
        clocks[K_LAST_DONE] = max(clocks[K_LAST_DONE], now)


CLOCK = Clock(_cores_next, _cores_tick)


@compiled(inline=True)
def _short_of_room(events, pool):
    return events.meta[2] < 4096 or pool.meta[0] < 4096


@compiled(inline=True)
def _finished(pool, clocks):
    if clocks[K_NEXT_TICK] < NEVER or pool.meta[0] != pool.free.shape[0]:
        return False, 0
    if clocks[K_WRITES_PENDING] > 0:
        return False, 0
    return True, clocks[K_LAST_DONE]


@compiled(inline=True)
def _nothing_requested():
    return False


advance = compiled(entry=True)(assemble(
    State, HANDLERS, (vaultmod.CLOCK, CLOCK), short_of_room=_short_of_room,
    finished=_finished, requested=_nothing_requested, home=__name__))  # fmt: skip


def clock_fields(period_ps: int, path_ps: int, private_line: int, private_first: int,
                 private_lines: int, header_bytes: int | None) -> np.ndarray:  # fmt: skip
    """The model's scalars; ``header_bytes`` of a link packet, None for memory without links."""
    c = np.zeros(CLOCK_FIELDS, dtype=np.int64)
    c[[K_PERIOD_PS, K_PATH_PS, K_PRIVATE_LINE, K_PRIVATE_FIRST, K_PRIVATE_LINES, K_LINKED,
       K_HEADER_BYTES]] = (period_ps, path_ps, private_line, private_first, private_lines,
                           header_bytes is not None, header_bytes or 0)  # fmt: skip
    return c


#: The first 128-byte line of the CPU threads' private buffers (:mod:`ndpsim.trace.cpu_threads`).
PRIVATE_LINE = PRIVATE_BASE >> MEMORY_LINE_SHIFT
