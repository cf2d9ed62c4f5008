"""Runs a caller advances step by step: started, advanced to a time or by a number of events,
looked at and changed between steps, then finished.

A system's ``start`` returns a :class:`SteppedRun` over the same generator its ``run`` drains
(:func:`ndpsim.engine.loop.steps`, launch after launch), so a run stepped without being changed
ends exactly as an uninterrupted one: a pause only makes the compiled loop return where it would
otherwise have gone on. Between steps the caller sees the run through its :attr:`~SteppedRun.view`
(what a system kind shows: its counters so far, the occupancy of its queues, the page table, the
compiled state of the launch in flight) and may change what the view offers: move a page, or
change a policy's setting in the live state. This is what an agent acting on a running
simulation (AIMM's, behind a Gymnasium environment) is built on.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any, Protocol

from ndpsim.engine.loop import Pause, to_the_end
from ndpsim.errors import SimulationError


class RunView(Protocol):
    """What a stepped run of a system kind shows between steps."""

    def events_handled(self) -> int:
        """Events the run's loop has handled so far, over every launch."""
        ...

    def counters(self) -> dict[str, dict[str, int]]:
        """Every counter so far, by component and name (the launches finished and the one in
        flight)."""
        ...

    def occupancy(self) -> dict[str, int]:
        """How full the run's queues and pools are now."""
        ...


class SteppedRun:
    """One run of a system, advanced by its caller (see the module). ``steps`` yields the time
    reached at every pause ``pause`` asks for and returns the run's result."""

    def __init__(self, steps: Generator[int, None, Any], pause: Pause, view: RunView):
        self._steps = steps
        self._pause = pause
        self.view = view
        self.now_ps = 0
        self.result: Any = None  # the run's result, once finished

    @property
    def finished(self) -> bool:
        return self.result is not None

    def advance(self, until_ps: int | None = None, *, events: int | None = None) -> bool:
        """Simulate until the time ``until_ps`` (ps) or until ``events`` more events have been
        handled, whichever comes first, or to the end; returns whether the run has finished."""
        if self.finished:
            raise SimulationError("the run has finished: nothing is left to advance")
        if until_ps is None and events is None:
            raise SimulationError("advance to a time (until_ps) or by a number of events")
        if until_ps is not None and until_ps <= self.now_ps:
            raise SimulationError(f"the run is at {self.now_ps} ps; advance to a later time "
                                  f"than {until_ps} ps")  # fmt: skip
        if events is not None and events < 1:
            raise SimulationError(f"advance by at least one event, not {events}")
        self._pause.next_ps = until_ps
        self._pause.events = None if events is None else self.view.events_handled() + events
        try:
            self.now_ps = next(self._steps)
        except StopIteration as done:
            self._ended(done.value)
        self._pause.next_ps = self._pause.events = None
        return self.finished

    def finish(self) -> Any:
        """Simulate to the end; returns the run's result (what the system's ``run`` returns)."""
        if not self.finished:
            self._pause.next_ps = self._pause.events = None  # no more pauses
            self._ended(to_the_end(self._steps))
        return self.result

    def _ended(self, result: Any) -> None:
        self.result = result
        self.now_ps = max(self.now_ps, int(result.time_ps))
