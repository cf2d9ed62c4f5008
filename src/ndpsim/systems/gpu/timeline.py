"""A GPU system's timeline: its SMs, links, DRAM channels and offloading, window by window.

:func:`gpu_timeline` is the skeleton's :class:`~ndpsim.systems.skeleton.timeline.RunTimeline`
over the GPU's samplers: the memory path's links and DRAM channels
(:mod:`ndpsim.systems.skeleton.timeline`), and the GPU's own below.

What each of the GPU's own tracks shows per window:

* an SM (GPU SM, stack SM or NSU): its schedulers' cycles as every SIMT core's
  (:class:`~ndpsim.systems.skeleton.timeline.SimtSampler`; idle includes warps waiting for
  offloaded blocks), and the warps waiting on an offloaded block at the window's end.
* a stack (near-data processing): blocks offloaded to it and offloads declined in the window;
  and the offload ratio of a ratio policy (SNDP's) at the window's end.
* instant marks: each kernel launch, and TOM's learned mapping when its learning phase ends.
"""

from __future__ import annotations

import numpy as np

from ndpsim.engine.timeline import Timeline
from ndpsim.hw.gpu import offload as ofl
from ndpsim.hw.gpu import offload_execution as offx
from ndpsim.systems.gpu.layout import GpuLayout
from ndpsim.systems.skeleton.timeline import (
    DramSampler,
    LinkSampler,
    Rows,
    RunTimeline,
    Sampler,
    SimtSampler,
    count_series,
    no_gauges,
)

_WAITING_ON_OFFLOAD = (offx.OFFLOAD_WAIT, offx.OFFLOADED, offx.CREDIT_WAIT)
_OFFLOAD_COUNTERS = ("offloaded", "declined")
_DECLINED = [i for i, n in enumerate(ofl.OFFLOAD_STAT_NAMES) if n.startswith("declined_")]
_OFFLOADED = ofl.OFFLOAD_STAT_NAMES.index("offloaded")


def _offloaded_warps(state) -> np.ndarray:
    """Per SM, its warps waiting on an offloaded block."""
    return np.isin(state.sm.slot_state, _WAITING_ON_OFFLOAD).sum(axis=1)


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
        SimtSampler(timeline, "SMs", [layout.processor_label(s) for s in range(layout.sms)],
                    c.sm.schedulers, {"offloaded_warps": _offloaded_warps}),
        LinkSampler(timeline, link_labels),
        DramSampler(timeline, [layout.channel_label(ch) for ch in range(channels)]),
    ]  # fmt: skip
    if c.ndp is not None:
        samplers.append(OffloadSampler(timeline, c.memory.cubes))
    if ratio is not None:
        samplers.append(RatioSampler(timeline, ratio))
    return RunTimeline(timeline, samplers, launches_on="SMs")


__all__ = ["gpu_timeline"]
