"""A GPU system's timeline: its SMs, links, DRAM channels and offloading, window by window.

:class:`GpuTimeline` is a controller of the engine's loop that only reads the compiled model's
arrays at the end of each window of a :class:`~ndpsim.engine.timeline.Timeline`, so a run
with a timeline measures exactly what a run without one does (tests/systems/test_timeline.py).

What each track shows per window:

* an SM (GPU SM, stack SM or NSU): the fractions of its schedulers' cycles that issued, were
  stalled (a unit busy or an operand not ready) and were idle (no warp ready to issue,
  including warps waiting for offloaded blocks), and the warps waiting on an offloaded block at
  the window's end. An SM's clocks are counted lazily by the model (when it wakes); the clocks
  it slept through up to the window's end are charged here to the reasons it will charge
  them to, so each window gets its own clocks.
* a link: its utilization (busy time in the window over the window) and the bandwidth it
  carried (GB/s, the bytes of the packets put on it in the window).
* a DRAM channel: reads, writes, row hits, misses and conflicts in the window.
* a stack (near-data processing): blocks offloaded to it and offloads declined in the window;
  and the offload ratio of a ratio policy (SNDP's) at the window's end.
* instant marks: each kernel launch, and TOM's learned mapping when its learning phase ends.
"""

from __future__ import annotations

import numpy as np

from ndpsim.engine import loop
from ndpsim.engine.timeline import Timeline
from ndpsim.hw.core import sm as smmod
from ndpsim.hw.dram import controller as ctl
from ndpsim.hw.gpu import offload as ofl
from ndpsim.hw.gpu import offload_execution as offx
from ndpsim.systems.gpu.layout import GpuLayout
from ndpsim.trace.work import W_NUM_CTAS

_SM_COUNTERS = (smmod.T_CLOCKS, smmod.T_ISSUED, smmod.T_STALL_UNIT, smmod.T_STALL_DEPENDENCY,
                smmod.T_STALL_IDLE)  # fmt: skip
_WAITING_ON_OFFLOAD = (offx.OFFLOAD_WAIT, offx.OFFLOADED, offx.CREDIT_WAIT)
_DRAM_COUNTERS = ("reads", "writes", "row_hits", "row_misses", "row_conflicts")
_OFFLOAD_COUNTERS = ("offloaded", "declined")
_DECLINED = [i for i, n in enumerate(ofl.OFFLOAD_STAT_NAMES) if n.startswith("declined_")]
_OFFLOADED = ofl.OFFLOAD_STAT_NAMES.index("offloaded")


def _sm_series(deltas: np.ndarray, gauges: np.ndarray, window_ps: int, schedulers: int):
    clocks, issued, unit, dependency, idle = deltas.T
    slots = np.maximum(clocks * schedulers, 1)  # scheduler cycles; an unclocked SM shows 0
    return {"issuing": issued / slots, "stalled": (unit + dependency) / slots,
            "idle": idle / slots, "offloaded_warps": gauges[:, 0]}  # fmt: skip


def _link_series(deltas: np.ndarray, gauges: np.ndarray, window_ps: int):
    busy_ps, moved_bytes = deltas.T
    return {"utilization": busy_ps / window_ps, "gbps": moved_bytes * 1000 / window_ps}


def _count_series(names):
    def series(deltas: np.ndarray, gauges: np.ndarray, window_ps: int):
        return {name: deltas[:, i] for i, name in enumerate(names)}

    return series


class GpuTimeline(loop.Controller):
    """Samples one GPU run into ``timeline``: :meth:`launch` at each launch's start (its
    compiled state), the loop's calls at every window end, :meth:`launch_end` at its end."""

    def __init__(self, timeline: Timeline, layout: GpuLayout, link_labels: list[str],
                 ratio=None):  # fmt: skip
        self.timeline = timeline
        self.ratio = ratio  # SNDP's offload ratio controller, or None
        self.state = None
        self._sm_base = np.zeros((layout.sms, len(_SM_COUNTERS)), dtype=np.int64)
        self._offload_base = np.zeros((layout.config.memory.cubes, 2), dtype=np.int64)
        self._ndp = layout.config.ndp is not None
        self._link_busy = np.zeros(len(link_labels), dtype=np.int64)
        channels = layout.config.memory.cubes * layout.channels_per_cube
        schedulers = layout.config.sm.schedulers
        timeline.group("SMs", [layout.processor_label(s) for s in range(layout.sms)],
                       [smmod.SM_STAT_NAMES[t] for t in _SM_COUNTERS], ["offloaded_warps"],
                       lambda d, g, w: _sm_series(d, g, w, schedulers))  # fmt: skip
        timeline.group("links", link_labels, ["busy_ps", "bytes"], [], _link_series)
        timeline.group("DRAM channels", [layout.channel_label(c) for c in range(channels)],
                       _DRAM_COUNTERS, [], _count_series(_DRAM_COUNTERS))  # fmt: skip
        if self._ndp:
            timeline.group("offloading", [f"cube{k}" for k in range(layout.config.memory.cubes)],
                           _OFFLOAD_COUNTERS, [], _count_series(_OFFLOAD_COUNTERS))  # fmt: skip
        if ratio is not None:
            timeline.group("offload policy", ["offload ratio"], [], ["ratio"],
                           lambda d, g, w: {"ratio": g[:, 0]})  # fmt: skip
        self._dram_columns = [ctl.STAT_NAMES.index(n) for n in _DRAM_COUNTERS]

    def launch(self, state, index: int, kernel: str, now_ps: int) -> None:
        """Launch ``index`` of ``kernel`` starts at ``now_ps`` on compiled ``state``
        (a :class:`~ndpsim.systems.gpu.model.GpuState`)."""
        self.state = state
        self.timeline.mark(now_ps, "SMs", f"launch {index}: {kernel}")
        self.timeline.sample(now_ps, self._rows(now_ps), boundary=True)
        self.next_ps = self.timeline.next_sample_ps(now_ps)

    def epoch_end(self, now_ps: int) -> None:
        self.timeline.sample(now_ps, self._rows(now_ps))
        self.next_ps = self.timeline.next_sample_ps(now_ps)

    def launch_end(self, state, now_ps: int) -> None:
        """The launch ended at ``now_ps`` with ``state`` (the loop may have grown its pools)."""
        self.state = state
        self.timeline.sample(now_ps, self._rows(now_ps), boundary=True)
        self._sm_base = self._sm_counters(now_ps)
        self._offload_base = self._offload_counters()
        self.state, self.next_ps = None, None

    # ------------------------------------------------------------------ samples
    def _rows(self, now_ps: int) -> dict[str, tuple[np.ndarray, np.ndarray]]:
        s = self.state
        waiting = np.isin(s.sm.slot_state, _WAITING_ON_OFFLOAD).sum(axis=1)
        rows = {"SMs": (self._sm_counters(now_ps), waiting[:, None].astype(np.float64))}
        links = s.links
        # Busy time up to now: what was booked, less what is booked past now (a link books a
        # packet from when the one before ends, so that is busy_until - now) ... except when a
        # packet was sent for a later time with a gap before it: then the busy time stays
        # where it was until the booking's start has passed, never going down.
        ahead = np.maximum(links.busy_until - now_ps, 0)
        self._link_busy = np.maximum(self._link_busy, links.busy_ps - ahead)
        moved = links.traffic[:, :, 0].sum(axis=1)
        rows["links"] = (np.stack([self._link_busy, moved], axis=1), _none(len(moved)))
        dram = s.dram.stats[:, self._dram_columns]
        rows["DRAM channels"] = (dram, _none(len(dram)))
        if self._ndp:
            rows["offloading"] = (self._offload_counters(), _none(len(self._offload_base)))
        if self.ratio is not None:
            rows["offload policy"] = (np.zeros((1, 0), dtype=np.int64),
                                      np.full((1, 1), self.ratio.ratio))  # fmt: skip
        return rows

    def _sm_counters(self, now_ps: int) -> np.ndarray:
        """Each SM's counters of the run so far, with the clocks it slept through before
        ``now_ps`` charged as the model will charge them when it wakes (``sm.count_clocks``).
        A clock at ``now_ps`` itself is left to the model: it may yet be evaluated."""
        sm, work = self.state.sm, self.state.work
        stats = sm.stats[:, list(_SM_COUNTERS)].copy()
        counting = (sm.sm_warps > 0) | (sm.counters[0] < work.params[W_NUM_CTAS])
        slept = (now_ps - 1 - sm.clock_last) // sm.period
        pending = np.where(counting, np.maximum(slept, 0), 0)
        stats[:, 0] += pending
        for column, reason in enumerate(_SM_COUNTERS):
            if reason in smmod.STALL_REASONS:
                stats[:, column] += pending * (sm.sched_stall == reason).sum(axis=1)
        return self._sm_base + stats

    def _offload_counters(self) -> np.ndarray:
        stats = self.state.off.stats
        if not stats.shape[0]:
            return self._offload_base.copy()
        now = np.stack([stats[:, _OFFLOADED], stats[:, _DECLINED].sum(axis=1)], axis=1)
        return self._offload_base + now


def _none(n: int) -> np.ndarray:
    return np.zeros((n, 0), dtype=np.float64)


__all__ = ["GpuTimeline"]
