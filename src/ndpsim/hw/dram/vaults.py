"""The vaults of the memory cubes as a memory path sees them, compiled: each channel's
controller (:mod:`.controller`, banks and timing) with a backlog in front of its queue, the
channels' clocks, and each cube's TSVs.

A request arriving at its vault (``MEM_ARRIVE``) enters the controller's queue, or, when the
queue is full, the channel's backlog, in arrival order. A channel is not an event per DRAM
clock: each has the time it next wants to run and the vaults keep their minimum (a pushed and
popped event per DRAM command would cost more than the command), so they are a clocked
component of the engine's loop (:data:`CLOCK`). A finished access becomes ``DRAM_DONE``, whose
handler belongs to the system: where the data goes next depends on who asked. With TSVs
(``internal_gbps``), the access's data also crosses its cube's TSV link, shared by reads and
writes, which bounds a cube's internal bandwidth.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ndpsim.engine import events as ev
from ndpsim.engine import fifo, kinds
from ndpsim.engine.assemble import Clock
from ndpsim.engine.clock import NEVER
from ndpsim.hw import link as linkmod
from ndpsim.hw import requests as rq
from ndpsim.hw.dram import controller as ctl
from ndpsim.numba_cache import compiled

EV_MEM_ARRIVE, EV_DRAM_DONE = kinds.declare(__name__, "MEM_ARRIVE", "DRAM_DONE")


class Vaults(NamedTuple):
    tck: np.ndarray  # int64[1]: the DRAM clock period (ps)
    tsv: np.ndarray  # int64[cubes]: the link between a cube's vaults and its logic layer, or -1
    backlog_head: np.ndarray  # int64[channels]: requests waiting for a full controller queue (a
    backlog_tail: np.ndarray  # queue per channel, engine.fifo, linked by Q_BACKLOG_NEXT)
    tick_at: np.ndarray  # int64[channels]: when each channel next runs (ps), or NEVER
    tick_min: np.ndarray  # int64[1]: the minimum of tick_at
    nodes: np.ndarray  # int64[5]: scratch for the controller


def build_vaults(tck_ps: int, channels: int, tsv: np.ndarray) -> Vaults:
    """Idle vaults of ``channels`` channels in all, clocked every ``tck_ps``."""
    return Vaults(
        tck=np.array([tck_ps], dtype=np.int64),
        tsv=tsv,
        backlog_head=np.full(channels, -1, dtype=np.int64),
        backlog_tail=np.full(channels, -1, dtype=np.int64),
        tick_at=np.full(channels, NEVER, dtype=np.int64),
        tick_min=np.full(1, NEVER, dtype=np.int64),
        nodes=np.zeros(5, dtype=np.int64),
    )


@compiled(inline=True)
def _wake_channel(vaults, ch, now):
    """Make channel ``ch`` run no later than its first clock edge at or after ``now``."""
    tck = vaults.tck[0]
    t = ((now + tck - 1) // tck) * tck
    if t < vaults.tick_at[ch]:
        vaults.tick_at[ch] = t
        if t < vaults.tick_min[0]:
            vaults.tick_min[0] = t


@compiled(inline=True)
def _enqueue(dram, pool, rid, cycle):
    f = pool.fields[rid]
    return ctl.enqueue(dram, f[rq.Q_CHANNEL], not rq.reads(f[rq.Q_KIND]), rid, f[rq.Q_RANK],
                       f[rq.Q_BANKGROUP], f[rq.Q_BANK], f[rq.Q_ROW], f[rq.Q_COLUMN],
                       cycle)  # fmt: skip


@compiled(inline=True)
def arrive(vaults, dram, pool, rid, now):
    """Request ``rid`` (its DRAM coordinates filled in) reaches its vault's controller."""
    ch = pool.fields[rid, rq.Q_CHANNEL]
    cycle = now // vaults.tck[0]
    if fifo.empty(vaults.backlog_head, ch) and _enqueue(dram, pool, rid, cycle):
        _wake_channel(vaults, ch, now)
        return
    # The controller queue is full: wait, in arrival order, for room.
    fifo.push(vaults.backlog_head, vaults.backlog_tail, pool.fields[:, rq.Q_BACKLOG_NEXT], ch,
              rid)  # fmt: skip


@compiled(inline=True)
def _tick_channel(vaults, dram, events, pool, ch, now):
    """Channel ``ch``'s controller runs at ``now``; sets when it next wants to."""
    tck = vaults.tck[0]
    cycle = now // tck
    wake = ctl.tick(dram, ch, cycle, vaults.nodes)
    for i in range(dram.done_count[0]):
        ev.push(events, dram.done_cycle[i] * tck, EV_DRAM_DONE, dram.done_tag[i], 0)
    dram.done_count[0] = 0
    backlog = vaults.backlog_head
    while not fifo.empty(backlog, ch) and _enqueue(dram, pool, fifo.peek(backlog, ch), cycle):
        fifo.pop(backlog, pool.fields[:, rq.Q_BACKLOG_NEXT], ch)
        wake = min(wake, cycle + 1)
    vaults.tick_at[ch] = wake * tck if wake < ctl.NEVER else NEVER


@compiled(inline=True)
def _next_ps(vaults):
    return vaults.tick_min[0]


@compiled
def _tick(vaults, dram, events, pool, now):
    """Every channel due at ``now`` runs; the earliest next one is kept."""
    t_tick = NEVER
    for ch in range(vaults.tick_at.shape[0]):
        if vaults.tick_at[ch] == now:
            _tick_channel(vaults, dram, events, pool, ch, now)
        if vaults.tick_at[ch] < t_tick:
            t_tick = vaults.tick_at[ch]
    vaults.tick_min[0] = t_tick


#: The channels as a clocked component of the engine's loop.
CLOCK = Clock(_next_ps, _tick)


@compiled(inline=True)
def through_tsv(vaults, links, cube, now, moved_bytes):
    """An access of ``cube`` moves ``moved_bytes`` over its TSVs (if modelled); returns when
    the data is past them."""
    if vaults.tsv[cube] >= 0:
        return linkmod.send(links, vaults.tsv[cube], now, moved_bytes, linkmod.OTHER)
    return now
