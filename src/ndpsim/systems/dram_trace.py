"""A DRAM device driven by a request trace: the DRAM model alone, as Ramulator runs it.

A front end offers the requests in order, up to ``inject_per_cycle`` per DRAM cycle; a request
whose channel queue is full stalls the front end (and every request behind it) until the queue has
room. K = 1 makes the front end the bottleneck (cycles about equal to requests); a K of 8 or more
saturates the memory. Time skips over cycles in which nothing can happen. The front end and the
channels are the two clocks of a loop the engine assembles (:mod:`ndpsim.engine.assemble`),
compiled here and run epoch by epoch on the engine's loop (:mod:`ndpsim.engine.loop`), whose
watchdog stops a trace that stops making progress.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from ndpsim.engine import events as ev
from ndpsim.engine import kinds, loop
from ndpsim.engine.assemble import Clock, assemble
from ndpsim.engine.clock import NEVER
from ndpsim.engine.reference import references
from ndpsim.errors import SimulationError
from ndpsim.hw.dram import controller as ctl
from ndpsim.hw.dram.mapping import (
    BANK,
    BANKGROUP,
    CHANNEL,
    COLUMN,
    FIELDS,
    RANK,
    ROW,
    AddressMapping,
    decode,
    interleaved_layout,
)
from ndpsim.hw.dram.spec import DramPreset
from ndpsim.numba_cache import compiled

# where a run is: the last cycle a clock ran, the next request to offer, the cycle by which the
# front end had offered them all (-1 until then), the last cycle a request's data was done, the
# next cycle the front end offers requests, and whether a full queue stopped it there
AT_NOW, AT_NEXT, AT_INJECTED, AT_LAST_DONE, AT_OFFER, AT_BLOCKED = range(6)
# the run's constants: requests offered per cycle, the clock period
P_PER_CYCLE, P_TCK = range(2)


class TraceState(NamedTuple):
    """A DRAM device and the trace driving it, as the engine's assembled loop sees them."""

    events: ev.EventQueue  # always empty: the front end and the channels are clocks
    dram: ctl.DramState
    bits: np.ndarray  # the address mapping, decoded by ``decode``
    xor: np.ndarray
    addresses: np.ndarray
    writes: np.ndarray
    wake: np.ndarray  # int64[channels]: the cycle each channel next wants to run
    fields: np.ndarray  # scratch for decoding
    nodes: np.ndarray  # scratch for the controller
    at: np.ndarray
    params: np.ndarray


@compiled(inline=True)
def _cycle_ps(cycle, params):
    return NEVER if cycle >= ctl.NEVER else cycle * params[P_TCK]


@compiled(inline=True)
def _earliest(wake):
    earliest = ctl.NEVER
    for ch in range(wake.shape[0]):
        earliest = min(earliest, wake[ch])
    return earliest


@compiled(inline=True)
def _front_end_next(addresses, wake, at, params):
    """The next cycle the front end offers requests; after a full queue stopped it, the first
    later cycle at which a channel runs (and may have made room)."""
    if at[AT_NEXT] >= addresses.shape[0]:
        return NEVER
    cycle = at[AT_OFFER]
    if at[AT_BLOCKED] != 0:
        cycle = max(cycle, _earliest(wake))
    return _cycle_ps(cycle, params)


@compiled(inline=True)
def _front_end_tick(dram, bits, xor, addresses, writes, wake, fields, at, params, now):
    """Offer up to ``inject_per_cycle`` requests, in order, until a channel queue is full."""
    cycle = now // params[P_TCK]
    n = addresses.shape[0]
    i, k = at[AT_NEXT], 0
    blocked = False
    while i < n and k < params[P_PER_CYCLE]:
        decode(bits, xor, addresses[i], fields)
        ch = fields[CHANNEL]
        ok = ctl.enqueue(dram, ch, writes[i] != 0, i, fields[RANK], fields[BANKGROUP],
                         fields[BANK], fields[ROW], fields[COLUMN], cycle)  # fmt: skip
        if not ok:
            blocked = True
            break
        if wake[ch] > cycle:
            wake[ch] = cycle
        i += 1
        k += 1
    at[AT_NEXT] = i
    at[AT_NOW], at[AT_OFFER], at[AT_BLOCKED] = cycle, cycle + 1, blocked
    if i == n and at[AT_INJECTED] < 0:
        at[AT_INJECTED] = cycle


@compiled(inline=True)
def _channels_next(wake, params):
    return _cycle_ps(_earliest(wake), params)


@compiled(inline=True)
def _channels_tick(dram, wake, nodes, at, params, now):
    """Every channel due runs; the cycles at which requests' data was done are taken in."""
    cycle = now // params[P_TCK]
    for ch in range(wake.shape[0]):
        if wake[ch] <= cycle:
            wake[ch] = ctl.tick(dram, ch, cycle, nodes)
    for j in range(min(dram.done_count[0], dram.done_cycle.shape[0])):
        if dram.done_cycle[j] > at[AT_LAST_DONE]:
            at[AT_LAST_DONE] = dram.done_cycle[j]
    dram.done_count[0] = 0
    at[AT_NOW] = cycle


@compiled(inline=True)
def _short_of_room():
    return False  # the queues are the controller's own, refusing what does not fit


@compiled(inline=True)
def _queued(dram):
    queued = 0
    for ch in range(dram.q_count.shape[0]):
        queued += dram.q_count[ch, 0] + dram.q_count[ch, 1]
    return queued


@compiled(inline=True)
def _finished(dram, addresses, at, params):
    """Every request offered and none left in a controller queue: done at the last data."""
    if at[AT_NEXT] < addresses.shape[0] or _queued(dram) != 0:
        return False, 0
    return True, max(at[AT_NOW], at[AT_LAST_DONE]) * params[P_TCK]


@compiled(inline=True)
def _requested():
    return False


#: The engine's loop over a trace (:func:`ndpsim.engine.assemble.assemble`): the front end, then
#: the channels, so that a request offered in a cycle can be served in it.
advance = compiled(entry=True)(
    assemble(
        TraceState,
        kinds.Handlers("the DRAM trace runner"),
        (Clock(_front_end_next, _front_end_tick), Clock(_channels_next, _channels_tick)),
        short_of_room=_short_of_room,
        finished=_finished,
        requested=_requested,
        home=__name__,
    )
)


class _TraceRun(loop.Model):
    """A trace on one DRAM device, as the engine's loop drives it."""

    def __init__(self, preset: DramPreset, mapping: AddressMapping, addresses: np.ndarray,
                 writes: np.ndarray, inject_per_cycle: int):  # fmt: skip
        self.preset = preset
        self.tck = preset.timing.tCK_ps
        bits, xor = mapping.arrays()
        self.state = TraceState(
            events=ev.event_queue(1),
            dram=ctl.build_dram_state(preset),
            bits=bits,
            xor=xor,
            addresses=addresses,
            writes=writes,
            wake=np.zeros(preset.organization.channels, dtype=np.int64),
            fields=np.zeros(len(FIELDS), dtype=np.int64),
            nodes=np.zeros(5, dtype=np.int64),
            at=np.array([0, 0, -1, 0, 0, 0], dtype=np.int64),  # AT_INJECTED: -1, not yet
            params=np.array([inject_per_cycle, self.tck], dtype=np.int64),
        )
        self.at = self.state.at
        self._arguments = references(self.state)

    def advance(self, until_ps: int, until_events: int = NEVER) -> tuple[int, int]:
        return advance(*self._arguments, until_ps, until_events)

    def events_handled(self) -> int:
        return ev.handled(self.state.events)

    def progress(self) -> tuple[int, int]:
        served = self.state.dram.stats[:, [ctl.S_READS_DONE, ctl.S_WRITES_DONE]]
        return int(self.at[AT_NEXT]), int(served.sum())

    def stuck(self, now_ps: int) -> str:
        offered, queued = int(self.at[AT_NEXT]), int(self.state.dram.q_count.sum())
        return (f"DRAM {self.preset.name!r} stopped making progress at cycle "
                f"{int(self.at[AT_NOW])}: {offered} of {len(self.state.addresses)} requests "
                f"offered, {queued} in controller queues")  # fmt: skip


@dataclass(frozen=True)
class DramTraceResult:
    """What a DRAM-only run measured."""

    preset: str
    requests: int
    cycles: int  # until the last request's data is done
    inject_cycles: int  # until the front end had offered every request
    stats: dict[str, int]
    wall_seconds: float
    clock_ghz: float

    @property
    def row_hit_rate(self) -> float:
        s = self.stats
        total = s["row_hits"] + s["row_misses"] + s["row_conflicts"]
        return s["row_hits"] / total if total else 0.0

    @property
    def average_read_latency_cycles(self) -> float:
        return self.stats["read_latency_cycles"] / max(1, self.stats["reads_done"])

    def bandwidth_gbps(self, access_bytes: int) -> float:
        seconds = self.cycles / (self.clock_ghz * 1e9)
        return self.requests * access_bytes / seconds / 1e9 if seconds else 0.0

    @property
    def requests_per_second(self) -> float:
        return self.requests / self.wall_seconds if self.wall_seconds else float("inf")


def run_dram_trace(
    preset: DramPreset,
    addresses: np.ndarray,
    is_write: np.ndarray,
    *,
    inject_per_cycle: int = 8,
    mapping: AddressMapping | None = None,
) -> DramTraceResult:
    """Drive a fresh device with a trace; returns cycles, row-buffer outcomes and latency."""
    mapping = mapping or interleaved_layout(preset.organization)
    addresses = np.ascontiguousarray(addresses, dtype=np.int64)
    writes = np.ascontiguousarray(is_write, dtype=np.uint8)
    trace = _TraceRun(preset, mapping, addresses, writes, int(inject_per_cycle))
    state = trace.state.dram
    start = time.perf_counter()
    cycles = loop.run(trace, 0) // trace.tck
    wall = time.perf_counter() - start
    overlapping = np.flatnonzero(state.bus_overlap)
    if len(overlapping):
        ranks = preset.organization.ranks
        raise SimulationError(
            f"DRAM {preset.name!r}: the data bus of "
            + ", ".join(f"channel {int(b) // ranks} rank {int(b) % ranks}" for b in overlapping[:8])
            + " carried two bursts at once (a timing constraint is missing)"
        )
    totals = state.stats.sum(axis=0)
    stats = {name: int(totals[i]) for i, name in enumerate(ctl.STAT_NAMES)}
    return DramTraceResult(
        preset=preset.name,
        requests=len(addresses),
        cycles=int(cycles),
        inject_cycles=int(trace.at[AT_INJECTED]),
        stats=stats,
        wall_seconds=wall,
        clock_ghz=preset.timing.clock_ghz,
    )
