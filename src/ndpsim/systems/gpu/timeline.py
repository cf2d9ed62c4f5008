"""A GPU system's timeline: its SMs, links, DRAM channels and offloading, window by window.

:func:`gpu_timeline` is the skeleton's :class:`~ndpsim.systems.skeleton.timeline.RunTimeline`
over the GPU's samplers: the memory path's links and DRAM channels
(:mod:`ndpsim.systems.skeleton.timeline`), and the GPU's own below.

What each of the GPU's own tracks shows per window:

* an SM (GPU SM, stack SM or NSU): the fractions of its schedulers' cycles that issued, were
  stalled (a unit busy or an operand not ready) and were idle (no warp ready to issue,
  including warps waiting for offloaded blocks), and the warps waiting on an offloaded block at
  the window's end. An SM's clocks are counted lazily by the model (when it wakes); the clocks
  it slept through up to the window's end are charged here to the reasons it will charge
  them to, so each window gets its own clocks.
* a stack (near-data processing): blocks offloaded to it and offloads declined in the window;
  and the offload ratio of a ratio policy (SNDP's) at the window's end.
* instant marks: each kernel launch, and TOM's learned mapping when its learning phase ends.
"""

from __future__ import annotations

import numpy as np

from ndpsim.engine.timeline import Timeline
from ndpsim.hw.core import sm as smmod
from ndpsim.hw.gpu import offload as ofl
from ndpsim.hw.gpu import offload_execution as offx
from ndpsim.systems.gpu.layout import GpuLayout
from ndpsim.systems.skeleton.timeline import (
    DramSampler,
    LinkSampler,
    Rows,
    RunTimeline,
    Sampler,
    count_series,
    no_gauges,
)
from ndpsim.trace.work import W_NUM_CTAS

_SM_COUNTERS = (smmod.T_CLOCKS, smmod.T_ISSUED, smmod.T_STALL_UNIT, smmod.T_STALL_DEPENDENCY,
                smmod.T_STALL_IDLE)  # fmt: skip
_WAITING_ON_OFFLOAD = (offx.OFFLOAD_WAIT, offx.OFFLOADED, offx.CREDIT_WAIT)
_OFFLOAD_COUNTERS = ("offloaded", "declined")
_DECLINED = [i for i, n in enumerate(ofl.OFFLOAD_STAT_NAMES) if n.startswith("declined_")]
_OFFLOADED = ofl.OFFLOAD_STAT_NAMES.index("offloaded")


def _sm_series(deltas: np.ndarray, gauges: np.ndarray, window_ps: int, schedulers: int):
    clocks, issued, unit, dependency, idle = deltas.T
    slots = np.maximum(clocks * schedulers, 1)  # scheduler cycles; an unclocked SM shows 0
    return {"issuing": issued / slots, "stalled": (unit + dependency) / slots,
            "idle": idle / slots, "offloaded_warps": gauges[:, 0]}  # fmt: skip


class SmSampler(Sampler):
    """The ``SMs`` group: every SIMT unit of the state's ``sm`` (GPU SMs and stack units)."""

    def __init__(self, timeline: Timeline, labels: list[str], schedulers: int):
        self._base = np.zeros((len(labels), len(_SM_COUNTERS)), dtype=np.int64)
        timeline.group("SMs", labels, [smmod.SM_STAT_NAMES[t] for t in _SM_COUNTERS],
                       ["offloaded_warps"],
                       lambda d, g, w: _sm_series(d, g, w, schedulers))  # fmt: skip

    def rows(self, state, now_ps: int) -> Rows:
        waiting = np.isin(state.sm.slot_state, _WAITING_ON_OFFLOAD).sum(axis=1)
        return {"SMs": (self._counters(state, now_ps), waiting[:, None].astype(np.float64))}

    def launch_end(self, state, now_ps: int) -> None:
        self._base = self._counters(state, now_ps)

    def _counters(self, state, now_ps: int) -> np.ndarray:
        """Each SM's counters of the run so far, with the clocks it slept through before
        ``now_ps`` charged as the model will charge them when it wakes (``sm.count_clocks``).
        A clock at ``now_ps`` itself is left to the model: it may yet be evaluated."""
        sm, work = state.sm, state.work
        stats = sm.stats[:, list(_SM_COUNTERS)].copy()
        program = np.maximum(sm.program, 0)
        left = np.where(sm.program >= 0, sm.next_cta[program] < sm.end_cta[program],
                        sm.counters[0] < work.params[W_NUM_CTAS])  # fmt: skip
        counting = (sm.sm_warps > 0) | left  # as sm.counting
        slept = (now_ps - 1 - sm.clock_last) // sm.period
        pending = np.where(counting, np.maximum(slept, 0), 0)
        stats[:, 0] += pending
        for column, reason in enumerate(_SM_COUNTERS):
            if reason in smmod.STALL_REASONS:
                stats[:, column] += pending * (sm.sched_stall == reason).sum(axis=1)
        return self._base + stats


class OffloadSampler(Sampler):
    """The ``offloading`` group: per stack, the blocks offloaded to it and the offloads
    declined."""

    def __init__(self, timeline: Timeline, cubes: int):
        self._base = np.zeros((cubes, 2), dtype=np.int64)
        timeline.group("offloading", [f"cube{k}" for k in range(cubes)], _OFFLOAD_COUNTERS, [],
                       count_series(_OFFLOAD_COUNTERS))  # fmt: skip

    def rows(self, state, now_ps: int) -> Rows:
        return {"offloading": (self._counters(state), no_gauges(len(self._base)))}

    def launch_end(self, state, now_ps: int) -> None:
        self._base = self._counters(state)

    def _counters(self, state) -> np.ndarray:
        stats = state.off.stats
        if not stats.shape[0]:
            return self._base.copy()
        now = np.stack([stats[:, _OFFLOADED], stats[:, _DECLINED].sum(axis=1)], axis=1)
        return self._base + now


class RatioSampler(Sampler):
    """The ``offload policy`` group: the offload ratio of a ratio policy (SNDP's)."""

    def __init__(self, timeline: Timeline, ratio):
        self.ratio = ratio
        timeline.group("offload policy", ["offload ratio"], [], ["ratio"],
                       lambda d, g, w: {"ratio": g[:, 0]})  # fmt: skip

    def rows(self, state, now_ps: int) -> Rows:
        return {"offload policy": (np.zeros((1, 0), dtype=np.int64),
                                   np.full((1, 1), self.ratio.ratio))}  # fmt: skip


def gpu_timeline(timeline: Timeline, layout: GpuLayout, link_labels: list[str],
                 ratio=None) -> RunTimeline:  # fmt: skip
    """The controller sampling one GPU run into ``timeline`` (``ratio``: SNDP's offload ratio
    controller, or None)."""
    c = layout.config
    channels = c.memory.cubes * layout.channels_per_cube
    samplers = [
        SmSampler(timeline, [layout.processor_label(s) for s in range(layout.sms)],
                  c.sm.schedulers),
        LinkSampler(timeline, link_labels),
        DramSampler(timeline, [layout.channel_label(ch) for ch in range(channels)]),
    ]  # fmt: skip
    if c.ndp is not None:
        samplers.append(OffloadSampler(timeline, c.memory.cubes))
    if ratio is not None:
        samplers.append(RatioSampler(timeline, ratio))
    return RunTimeline(timeline, samplers, launches_on="SMs")


__all__ = ["gpu_timeline"]
