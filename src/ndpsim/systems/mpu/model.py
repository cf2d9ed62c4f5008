"""The ``mpu`` kind's compiled model: the cores (the SIMT core with MPU's hybrid pipeline as its
extension, :mod:`ndpsim.hw.mpu.hybrid`), the NBUs' channels (:mod:`ndpsim.hw.dram.vaults`), each
core's TSV bus and the mesh of routers, and the handlers of a transaction's way back.

A transaction the load-store unit sent (:func:`ndpsim.hw.mpu.hybrid._load_store`) reaches its
channel's controller; when its bank has served it, a write is done (nobody waits for it); a
read's data goes where its request says: into the near-bank register file of the warp's NBU
(sent whole; the last line of the access sends the commit to the subcore), or up its bank's
core's TSVs to the load-store unit (and over the mesh, from another core). A split load whose
last line reached the unit writes its register to the near-bank register file over the TSVs;
its destination is ready then.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ndpsim.engine import events as ev
from ndpsim.engine import kinds
from ndpsim.engine.assemble import assemble
from ndpsim.hw import cache, link
from ndpsim.hw import requests as rq
from ndpsim.hw.core import sm as smmod
from ndpsim.hw.dram import controller
from ndpsim.hw.dram import vaults as vaultmod
from ndpsim.hw.hops import next_hop
from ndpsim.hw.mpu import hybrid
from ndpsim.numba_cache import compiled
from ndpsim.trace.work import W_NUM_CTAS


class State(NamedTuple):  # the compiled model's components; handlers take them by name
    sm: smmod.SmState
    work: object
    l1: cache.Caches  # none: MPU has no data cache (sec. IV-C); the SIMT core's MSHR checks
    pool: rq.RequestPool
    links: link.Links  # the mesh's links, then one TSV bus per core
    events: ev.EventQueue
    sm_port: np.ndarray  # -1 for every core: no crossbar port
    page: tuple
    vaults: vaultmod.Vaults
    dram: controller.DramState
    progress: np.ndarray  # int64[3]: requests completed, when the last one was, room to keep
    ext: hybrid.HybridState


HANDLERS = kinds.Handlers("MPU")
HANDLERS.on(vaultmod.EV_MEM_ARRIVE)(vaultmod.arrive)
HANDLERS.on(hybrid.EV_COMMIT)(hybrid.commit)
(EV_BACK,) = kinds.declare(__name__, "MPU_BACK")


@HANDLERS.on(vaultmod.EV_DRAM_DONE)
@compiled
def _dram_done(sm, l1, ext, links, events, pool, progress, rid, now):
    f = pool.fields[rid]
    s, w, load = f[rq.Q_SM], f[rq.Q_SLOT], f[rq.Q_LOAD]
    if not rq.reads(f[rq.Q_KIND]):  # a write reached its bank
        _done(sm, l1, pool, progress, s, rid, now)
        return
    back = now
    if f[rq.Q_SOURCE] == hybrid.SENT_WHOLE:  # into the near-bank register file
        ext.lines_left[s, w, load] -= 1
        if ext.lines_left[s, w, load] == 0:
            back = link.send(links, ext.tsv[s], now, ext.params[hybrid.H_COMMIT_BYTES],
                             link.OTHER)  # fmt: skip
    else:  # up its bank's core's TSVs, and over the mesh from another core
        data = hybrid.data_bytes(ext, f[rq.Q_BYTES])
        bank_core = hybrid.core_of(ext, f[rq.Q_CHANNEL])
        back = link.send(links, ext.tsv[bank_core], now,
                         ext.params[hybrid.H_TSV_HEADER_BYTES] + data, link.READ_DATA)  # fmt: skip
        if bank_core != s:
            f[rq.Q_NODE], f[rq.Q_DEST] = ext.node[bank_core], ext.node[s]
            at = next_hop(ext.hops, links, pool, rid, back, hybrid.packet_bytes(ext, data),
                          link.READ_DATA)  # fmt: skip
            ev.push(events, at, hybrid.EV_HOP, rid, 0)
            return
    ev.push(events, back, EV_BACK, rid, 0)


@HANDLERS.on(hybrid.EV_HOP)
@compiled
def _hop(ext, links, events, pool, rid, now):
    """A transaction's packet reached a router: on to the next, or it has arrived (at the bank's
    core, down its TSVs to the bank; back at the core that sent it)."""
    f = pool.fields[rid]
    reads = rq.reads(f[rq.Q_KIND])
    returning = f[rq.Q_DEST] == ext.node[f[rq.Q_SM]]
    payload = hybrid.data_bytes(ext, f[rq.Q_BYTES]) if returning or not reads else 0
    if returning or reads:
        traffic = link.READ_DATA if returning else link.READ_REQUEST
    else:
        traffic = link.WRITE_REQUEST
    if f[rq.Q_NODE] != f[rq.Q_DEST]:
        at = next_hop(ext.hops, links, pool, rid, now, hybrid.packet_bytes(ext, payload),
                      traffic)  # fmt: skip
        ev.push(events, at, hybrid.EV_HOP, rid, 0)
    elif returning:
        ev.push(events, now, EV_BACK, rid, 0)
    else:
        hybrid.to_bank(ext, links, events, rid, hybrid.core_of(ext, f[rq.Q_CHANNEL]), now,
                       payload, traffic)  # fmt: skip


@HANDLERS.on(EV_BACK, hybrid.EV_REMOTE_HIT)
@compiled
def _back(sm, work, l1, ext, links, events, pool, progress, rid, now):
    """A read's line (or the commit of an access sent whole) is back at the core; a load's line
    from another core's banks stays in the core's remote cache, if it has one."""
    f = pool.fields[rid]
    s, w, load = f[rq.Q_SM], f[rq.Q_SLOT], f[rq.Q_LOAD]
    way = f[rq.Q_SOURCE]
    if (way == hybrid.SENT_REMOTE and f[rq.Q_KIND] == rq.R_LOAD
            and ext.params[hybrid.H_REMOTE_CACHE] != 0):  # fmt: skip
        cache.fill(ext.remote_cache, s, f[rq.Q_LINE], False)
    if way == hybrid.SENT_LOCAL or way == hybrid.SENT_REMOTE:
        ext.lines_left[s, w, load] -= 1
        if ext.lines_left[s, w, load] == 0 and ext.params[hybrid.H_NEAR_BANK] != 0:
            f[rq.Q_SOURCE] = hybrid.WRITING_BACK  # the register, to the near-bank file
            written = link.send(links, ext.tsv[s], now,
                                hybrid.writeback_bytes(ext, work, sm.load_pc[s, w, load]),
                                link.READ_DATA)  # fmt: skip
            ext.core_stats[s, hybrid.C_REGISTER_WRITEBACKS] += 1
            ev.push(events, written, EV_BACK, rid, 0)
            return
    smmod.complete_transaction(sm, work, ext, events, s, w, load, now)
    _done(sm, l1, pool, progress, s, rid, now)


@compiled(inline=True)
def _done(sm, l1, pool, progress, s, rid, now):
    smmod.release_request(sm, pool, rid, now)
    smmod.memory_freed(sm, l1, s, now)
    progress[0] += 1
    progress[1] = now


@compiled(inline=True)
def _short_of_room(events, pool, progress):
    return events.meta[2] < progress[2] or pool.meta[0] < progress[2]


@compiled(inline=True)
def _finished(sm, work, pool, progress):
    if sm.counters[3] != work.params[W_NUM_CTAS] or pool.meta[0] != pool.free.shape[0]:
        return False, 0
    end = progress[1]
    for s in range(sm.params[smmod.S_COUNT]):
        end = max(end, sm.clock_last[s])
    return True, end


@compiled(inline=True)
def _nothing_requested():
    return False


advance = compiled(entry=True)(assemble(
    State, HANDLERS, (vaultmod.CLOCK, smmod.CLOCK), short_of_room=_short_of_room,
    finished=_finished, requested=_nothing_requested, home=__name__))  # fmt: skip
