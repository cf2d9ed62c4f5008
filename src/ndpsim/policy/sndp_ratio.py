"""SNDP's offload ratio: the fraction of offload-block instances sent to the NSUs.

The compiled controller (:func:`ndpsim.hw.gpu.offload.decide`) draws each instance at random
against the ratio in ``off.control``. A static ratio stays put (sec. 7.1). The dynamic one is
Algorithm 1 (sec. 7.2), a hill climber run between epochs of the simulation (a controller of
the engine's loop, :mod:`ndpsim.engine.loop`), as the hardware or the GPU's embedded CPU would
run it between epochs. At the end of every epoch but the first
it compares the throughput of offload-block instructions (offloaded or not) with the previous
epoch's. When the throughput dropped, it reverses direction. It then adapts the step: smaller
after many recent reversals (it is near the optimum), larger otherwise. Finally it moves the
ratio one step.

The paper's parameters: 30,000-cycle epochs, initial ratio 0.1, step size between 0.05 and
0.15 (starting at 0.15) changed by 0.05, and a history of the last 4 direction changes.
The algorithm's last line, as printed, keeps the ratio within
``[step_unit, 1 - step_unit]``. We read it as a clamp of the moved ratio to that range. So the
ratio never reaches 0 (the paper notes that STN keeps trying non-zero ratios) nor 1.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence

from ndpsim.engine.loop import Controller
from ndpsim.hw.gpu import offload as ofl

# SNDP sec. 7.2: Algorithm 1's parameters
INITIAL_RATIO = 0.1
STEP_MAX, STEP_MIN, STEP_UNIT = 0.15, 0.05, 0.05
HISTORY_WINDOW = 4


class RatioController(Controller):
    """The offload ratio of one SNDP run, carried across its kernel launches: fixed, or
    adapted by Algorithm 1 every ``epoch_ps`` (the loop calls ``epoch_end`` at ``next_ps``).
    ``timeline`` records (time µs, ratio) at every change, starting with the initial ratio."""

    def __init__(self, ratio: float, epoch_ps: int | None = None):
        self.ratio = ratio
        self.epoch_ps = epoch_ps
        self.next_ps = epoch_ps if epoch_ps else None
        self.timeline: list[tuple[float, float]] = [(0.0, ratio)]
        self._off: ofl.OffloadState | None = None
        self._counted = 0  # block instructions of the epoch in launches already finished
        self._base = 0  # the current launch's counter at the start of the epoch
        self._previous: float | None = None  # last epoch's throughput
        self._direction = 1
        self._step = STEP_MAX
        self._reversals: deque[bool] = deque(maxlen=HISTORY_WINDOW)

    def attach(self, off: ofl.OffloadState) -> None:
        """A new launch starts with compiled state ``off``: it draws against our ratio."""
        if self._off is not None:
            self._counted += int(self._off.control[ofl.C_BLOCK_INSTRUCTIONS]) - self._base
        self._off = off
        self._base = 0
        self._write()

    def _write(self) -> None:
        if self._off is not None and self._off.control.shape[0]:
            self._off.control[ofl.C_RATIO_PERMILLE] = round(self.ratio * 1000)

    def epoch_end(self, now_ps: int) -> None:
        """Algorithm 1 at the end of an epoch (``now_ps`` = its end)."""
        assert self.epoch_ps is not None and self._off is not None
        current = int(self._off.control[ofl.C_BLOCK_INSTRUCTIONS])
        throughput = (self._counted + current - self._base) / self.epoch_ps
        self._counted, self._base = 0, current
        self.next_ps = now_ps + self.epoch_ps
        if self._previous is None:  # the first epoch only measures
            self._previous = throughput
            return
        reversed_ = throughput < self._previous
        self._previous = throughput
        if reversed_:
            self._direction = -self._direction
        self._reversals.append(reversed_)
        if sum(self._reversals) > HISTORY_WINDOW / 2 and self._step > STEP_MIN:
            self._step = round(self._step - STEP_UNIT, 6)
        elif self._step < STEP_MAX:
            self._step = round(self._step + STEP_UNIT, 6)
        moved = self.ratio + self._direction * self._step
        self.ratio = round(min(max(moved, STEP_UNIT), 1.0 - STEP_UNIT), 6)
        self._write()
        self.timeline.append((now_ps / 1e6, self.ratio))


def time_weighted_ratio(timeline: Sequence[Sequence[float]], end_us: float) -> float | None:
    """The offload ratio averaged over a run's time: each (time µs, ratio) point of
    ``timeline`` holds until the next, the last until ``end_us``. None without points."""
    points = sorted((float(t), float(r)) for t, r in timeline)
    if not points:
        return None
    start = points[0][0]
    span = max(end_us, points[-1][0]) - start
    if span <= 0:
        return points[-1][1]
    ends = [t for t, _ in points[1:]] + [max(end_us, points[-1][0])]
    return sum(r * (e - t) for (t, r), e in zip(points, ends, strict=True)) / span


__all__ = ["RatioController", "time_weighted_ratio"]
