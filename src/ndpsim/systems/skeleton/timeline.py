"""A run sampled into a :class:`~ndpsim.engine.timeline.Timeline`, component by component.

A kind's timeline is a :class:`RunTimeline` over :class:`Sampler` s, one per kind of
component: each declares its group of tracks and reads its counters out of the compiled state
at every window's end. The controller only reads arrays, so a run with a timeline measures
exactly what a run without one does. The memory path's samplers are here, the same for every
kind:

* a SIMT core (any kind's): the fractions of its schedulers' cycles that issued, were stalled
  (a unit busy or an operand not ready) and were idle (no warp ready to issue), and the kind's
  gauges at the window's end. A core's clocks are counted lazily by the model (when it wakes);
  the clocks it slept through up to the window's end are charged here to the reasons it will
  charge them to, so each window gets its own clocks;
* a link: its utilization (busy time in the window over the window) and the bandwidth it
  carried (GB/s, the bytes of the packets put on it in the window);
* a DRAM channel: reads, writes, row hits, misses and conflicts in the window.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from ndpsim.engine import loop
from ndpsim.engine.timeline import Timeline
from ndpsim.hw.core import sm as smmod
from ndpsim.hw.dram import controller as ctl
from ndpsim.trace.work import W_NUM_CTAS

Rows = dict[str, tuple[np.ndarray, np.ndarray]]  # group: (counters so far, gauges now)


class Sampler(ABC):
    """One group of tracks: declared on the timeline when made, read at every window's end."""

    @abstractmethod
    def rows(self, state: Any, now_ps: int) -> Rows:
        """This group's counters (the run's so far) and gauges, from the compiled ``state``."""

    def launch_end(self, state: Any, now_ps: int) -> None:  # noqa: B027 - most carry nothing
        """A launch ended with ``state``: carry over what the next launch's state starts
        afresh (nothing, for a group whose counters live through the run)."""


class RunTimeline(loop.Controller):
    """Samples one run into ``timeline``: :meth:`launch` at each launch's start (its compiled
    state), the loop's calls at every window end, :meth:`launch_end` at its end. Each launch
    is marked on the track group ``launches_on``."""

    def __init__(self, timeline: Timeline, samplers: Sequence[Sampler], launches_on: str):
        self.timeline = timeline
        self.samplers = list(samplers)
        self.launches_on = launches_on
        self.state: Any = None

    def launch(self, state: Any, index: int, kernel: str, now_ps: int) -> None:
        """Launch ``index`` of ``kernel`` starts at ``now_ps`` on compiled ``state``."""
        self.state = state
        self.timeline.mark(now_ps, self.launches_on, f"launch {index}: {kernel}")
        self.timeline.sample(now_ps, self._rows(now_ps), boundary=True)
        self.next_ps = self.timeline.next_sample_ps(now_ps)

    def epoch_end(self, now_ps: int) -> None:
        self.timeline.sample(now_ps, self._rows(now_ps))
        self.next_ps = self.timeline.next_sample_ps(now_ps)

    def launch_end(self, state: Any, now_ps: int) -> None:
        """The launch ended at ``now_ps`` with ``state`` (the loop may have grown its pools)."""
        self.state = state
        self.timeline.sample(now_ps, self._rows(now_ps), boundary=True)
        for sampler in self.samplers:
            sampler.launch_end(state, now_ps)
        self.state, self.next_ps = None, None

    def _rows(self, now_ps: int) -> Rows:
        rows: Rows = {}
        for sampler in self.samplers:
            rows.update(sampler.rows(self.state, now_ps))
        return rows


def no_gauges(n: int) -> np.ndarray:
    """The gauges of a group that has none, for ``n`` tracks."""
    return np.zeros((n, 0), dtype=np.float64)


def count_series(names: Sequence[str]):
    """A group's series when each counter is shown as its count per window."""

    def series(deltas: np.ndarray, gauges: np.ndarray, window_ps: int):
        return {name: deltas[:, i] for i, name in enumerate(names)}

    return series


def _link_series(deltas: np.ndarray, gauges: np.ndarray, window_ps: int):
    busy_ps, moved_bytes = deltas.T
    return {"utilization": busy_ps / window_ps, "gbps": moved_bytes * 1000 / window_ps}


class LinkSampler(Sampler):
    """The ``links`` group: every link of the state's ``links``, labelled ``labels``."""

    def __init__(self, timeline: Timeline, labels: list[str]):
        self._busy = np.zeros(len(labels), dtype=np.int64)
        timeline.group("links", labels, ["busy_ps", "bytes"], [], _link_series)

    def rows(self, state: Any, now_ps: int) -> Rows:
        links = state.links
        # Busy time up to now: what was booked, less what is booked past now (a link books a
        # packet from when the one before ends, so that is busy_until - now) ... except when a
        # packet was sent for a later time with a gap before it: then the busy time stays
        # where it was until the booking's start has passed, never going down.
        ahead = np.maximum(links.busy_until - now_ps, 0)
        self._busy = np.maximum(self._busy, links.busy_ps - ahead)
        moved = links.traffic[:, :, 0].sum(axis=1)
        return {"links": (np.stack([self._busy, moved], axis=1), no_gauges(len(moved)))}


_SIMT_COUNTERS = (smmod.T_CLOCKS, smmod.T_ISSUED, smmod.T_STALL_UNIT, smmod.T_STALL_DEPENDENCY,
                  smmod.T_STALL_IDLE)  # fmt: skip


def _simt_series(deltas: np.ndarray, gauges: np.ndarray, names: Sequence[str], schedulers: int):
    clocks, issued, unit, dependency, idle = deltas.T
    slots = np.maximum(clocks * schedulers, 1)  # scheduler cycles; an unclocked core shows 0
    series = {"issuing": issued / slots, "stalled": (unit + dependency) / slots,
              "idle": idle / slots}  # fmt: skip
    return series | {name: gauges[:, k] for k, name in enumerate(names)}


class SimtSampler(Sampler):
    """The group ``group``: every SIMT unit of the state's ``sm``, labelled ``labels``, with
    ``schedulers`` each; ``gauges`` read a value per unit from the state at a window's end."""

    def __init__(self, timeline: Timeline, group: str, labels: list[str], schedulers: int,
                 gauges: Mapping[str, Callable[[Any], np.ndarray]]):  # fmt: skip
        self.group, self.gauges = group, dict(gauges)
        self._base = np.zeros((len(labels), len(_SIMT_COUNTERS)), dtype=np.int64)
        names = list(self.gauges)
        timeline.group(group, labels, [smmod.SM_STAT_NAMES[t] for t in _SIMT_COUNTERS], names,
                       lambda d, g, w: _simt_series(d, g, names, schedulers))  # fmt: skip

    def rows(self, state, now_ps: int) -> Rows:
        gauges = [np.asarray(read(state), dtype=np.float64) for read in self.gauges.values()]
        values = np.stack(gauges, axis=1) if gauges else no_gauges(len(self._base))
        return {self.group: (self._counters(state, now_ps), values)}

    def launch_end(self, state, now_ps: int) -> None:
        self._base = self._counters(state, now_ps)

    def _counters(self, state, now_ps: int) -> np.ndarray:
        """Each unit's counters of the run so far, with the clocks it slept through before
        ``now_ps`` charged as the model will charge them when it wakes (``sm.count_clocks``).
        A clock at ``now_ps`` itself is left to the model: it may yet be evaluated."""
        sm, work = state.sm, state.work
        stats = sm.stats[:, list(_SIMT_COUNTERS)].copy()
        program = np.maximum(sm.program, 0)
        left = np.where(sm.program >= 0, sm.next_cta[program] < sm.end_cta[program],
                        sm.counters[0] < work.params[W_NUM_CTAS])  # fmt: skip
        counting = (sm.sm_warps > 0) | left  # as sm.counting
        slept = (now_ps - 1 - sm.clock_last) // sm.period
        pending = np.where(counting, np.maximum(slept, 0), 0)
        stats[:, 0] += pending
        for column, reason in enumerate(_SIMT_COUNTERS):
            if reason in smmod.STALL_REASONS:
                stats[:, column] += pending * (sm.sched_stall == reason).sum(axis=1)
        return self._base + stats


DRAM_COUNTERS = ("reads", "writes", "row_hits", "row_misses", "row_conflicts")


class DramSampler(Sampler):
    """The ``DRAM channels`` group: every channel of the state's ``dram``, labelled
    ``labels``."""

    def __init__(self, timeline: Timeline, labels: list[str]):
        self._columns = [ctl.STAT_NAMES.index(n) for n in DRAM_COUNTERS]
        timeline.group("DRAM channels", labels, DRAM_COUNTERS, [], count_series(DRAM_COUNTERS))

    def rows(self, state: Any, now_ps: int) -> Rows:
        dram = state.dram.stats[:, self._columns]
        return {"DRAM channels": (dram, no_gauges(len(dram)))}
