"""A DRAM device driven by a request trace: the DRAM model alone, as Ramulator runs it.

A front end offers the requests in order, up to ``inject_per_cycle`` per DRAM cycle; a request
whose channel queue is full stalls the front end (and every request behind it) until the queue has
room. K = 1 makes the front end the bottleneck (cycles about equal to requests); a K of 8 or more
saturates the memory. Time skips over cycles in which nothing can happen. The compiled
``advance`` runs epoch by epoch on the engine's loop (:mod:`ndpsim.engine.loop`), whose watchdog
stops a trace that stops making progress.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
from numba import njit

from ndpsim.engine import loop
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

# where a run is: the next cycle to simulate, the next request to offer, the cycle by which the
# front end had offered them all (0 until then), the last cycle a request's data was done
AT_NOW, AT_NEXT, AT_INJECTED, AT_LAST_DONE = range(4)


@njit(cache=True, _nrt=False)
def advance(d, bits, xor, addresses, writes, per_cycle, tck, wake, fields, nodes, at,
            until):  # pragma: no cover  # fmt: skip
    """Run the trace from where ``at`` says until every request is done (``FINISHED``, at the
    last one's data), the next cycle starts after ``until`` ps (``EPOCH_END``), or no channel
    will ever run again although requests wait (``STUCK``). Returns (status, time reached)."""
    n = addresses.shape[0]
    channels = d.params[ctl.P_CHANNELS]
    now, i = at[AT_NOW], at[AT_NEXT]
    injected_by, last_done = at[AT_INJECTED], at[AT_LAST_DONE]
    status, reached = loop.EPOCH_END, until
    last = until // tck  # the last cycle starting by ``until``
    while now <= last:
        blocked = False
        k = 0
        while i < n and k < per_cycle:
            decode(bits, xor, addresses[i], fields)
            ch = fields[CHANNEL]
            ok = ctl.enqueue(d, ch, writes[i] != 0, i, fields[RANK], fields[BANKGROUP],
                             fields[BANK], fields[ROW], fields[COLUMN], now)  # fmt: skip
            if not ok:
                blocked = True
                break
            if wake[ch] > now:
                wake[ch] = now
            i += 1
            k += 1
        if i == n and injected_by == 0:
            injected_by = now
        next_wake = ctl.NEVER
        for ch in range(channels):
            if wake[ch] <= now:
                wake[ch] = ctl.tick(d, ch, now, nodes)
            if wake[ch] < next_wake:
                next_wake = wake[ch]
        for j in range(min(d.done_count[0], d.done_cycle.shape[0])):
            if d.done_cycle[j] > last_done:
                last_done = d.done_cycle[j]
        d.done_count[0] = 0
        if i == n:
            queued = 0
            for ch in range(channels):
                queued += d.q_count[ch, 0] + d.q_count[ch, 1]
            if queued == 0:
                status, reached = loop.FINISHED, max(now, last_done) * tck
                break
        if i < n and not blocked:
            now += 1
        elif next_wake >= ctl.NEVER:
            status, reached = loop.STUCK, now * tck
            break
        else:
            now = max(now + 1, next_wake)
    at[AT_NOW], at[AT_NEXT] = now, i
    at[AT_INJECTED], at[AT_LAST_DONE] = injected_by, last_done
    return status, reached


class _TraceRun(loop.Model):
    """A trace on one DRAM device, as the engine's loop drives it."""

    def __init__(self, preset: DramPreset, mapping: AddressMapping, addresses: np.ndarray,
                 writes: np.ndarray, inject_per_cycle: int):  # fmt: skip
        self.preset = preset
        self.state = ctl.build_dram_state(preset)
        self.bits, self.xor = mapping.arrays()
        self.addresses, self.writes = addresses, writes
        self.per_cycle = inject_per_cycle
        self.tck = preset.timing.tCK_ps
        self.wake = np.zeros(preset.organization.channels, dtype=np.int64)
        self.fields = np.zeros(len(FIELDS), dtype=np.int64)  # scratch for decoding
        self.nodes = np.zeros(5, dtype=np.int64)  # scratch for the controller
        self.at = np.zeros(4, dtype=np.int64)

    def advance(self, until_ps: int) -> tuple[int, int]:
        return advance(self.state, self.bits, self.xor, self.addresses, self.writes,
                       self.per_cycle, self.tck, self.wake, self.fields, self.nodes, self.at,
                       until_ps)  # fmt: skip

    def progress(self) -> tuple[int, int]:
        served = self.state.stats[:, [ctl.S_READS_DONE, ctl.S_WRITES_DONE]]
        return int(self.at[AT_NEXT]), int(served.sum())

    def stuck(self, now_ps: int) -> str:
        offered, queued = int(self.at[AT_NEXT]), int(self.state.q_count.sum())
        return (f"DRAM {self.preset.name!r} stopped making progress at cycle "
                f"{now_ps // self.tck}: {offered} of {len(self.addresses)} requests offered, "
                f"{queued} in controller queues")  # fmt: skip


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
    state = trace.state
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
