"""A DRAM device driven by a request trace: the DRAM model alone, as Ramulator runs it.

A front end offers the requests in order, up to ``inject_per_cycle`` per DRAM cycle; a request
whose channel queue is full stalls the front end (and every request behind it) until the queue has
room. K = 1 makes the front end the bottleneck (cycles about equal to requests); a K of 8 or more
saturates the memory. Time skips over cycles in which nothing can happen.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
from numba import njit

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


@njit(cache=True, _nrt=False)
def _simulate(d, bits, xor, addresses, writes, per_cycle, wake, fields, nodes):  # pragma: no cover
    n = addresses.shape[0]
    channels = d.params[ctl.P_CHANNELS]
    now = 0
    i = 0
    injected_by = 0
    last_done = 0
    while True:
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
                break
        if i < n and not blocked:
            now += 1
        else:
            now = max(now + 1, next_wake)
    return max(now, last_done), injected_by


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
    bits, xor = mapping.arrays()
    state = ctl.build_dram_state(preset)
    addresses = np.ascontiguousarray(addresses, dtype=np.int64)
    writes = np.ascontiguousarray(is_write, dtype=np.uint8)
    start = time.perf_counter()
    wake = np.zeros(preset.organization.channels, dtype=np.int64)
    scratch_fields = np.zeros(len(FIELDS), dtype=np.int64)
    scratch_nodes = np.zeros(5, dtype=np.int64)
    cycles, injected_by = _simulate(
        state, bits, xor, addresses, writes, int(inject_per_cycle), wake, scratch_fields,
        scratch_nodes,
    )  # fmt: skip
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
        inject_cycles=int(injected_by),
        stats=stats,
        wall_seconds=wall,
        clock_ghz=preset.timing.clock_ghz,
    )
