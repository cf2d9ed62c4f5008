"""The epoch-by-epoch run of a compiled model, and the Python policies acting between epochs.

A model compiles its simulation as ``advance(until_ps, until_events)``: it runs until the next
thing would happen after ``until_ps`` (or its event queue has had ``until_events`` events taken
from it) and returns a status and the time it reached. :func:`run` calls it epoch by epoch and
does what the status says:

* ``FINISHED``: the work is done; the time is when it finished.
* ``EPOCH_END``: the next thing happens after ``until_ps``, the time returned. Every
  ``epoch_ps`` the watchdog compares the model's progress with the last epoch's and stops a run
  that made none for ``stall_epochs`` epochs in a row; then every controller whose time came
  gets control.
* ``GROW``: a queue or pool of the model is nearly full; it grows and the run goes on.
* ``STUCK``: nothing can happen any more although work is left: an error saying where.
* ``REQUESTED``: a condition a controller set up in the compiled state holds (for example TOM's
  learning phase has seen enough); the controllers that asked get control, then the run goes on.
* ``EVENTS``: the model handled the events it was allowed (a :class:`Pause` asked for it).

Control passes to Python only at these stops, so a policy (a :class:`Controller`) sees and
changes the model's arrays between epochs, never during one. :func:`steps` is the same run as a
generator that hands control back to its caller where a :class:`Pause` says, at a time or an
event count: what a stepped run (:mod:`ndpsim.systems.stepping`) is made of. A stop changes
nothing the model computes, so a run paused anywhere ends as it would have without the pauses.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Generator, Hashable, Sequence

from ndpsim.engine.clock import NEVER
from ndpsim.errors import SimulationError

# what advance() returns, with the time reached
FINISHED, EPOCH_END, GROW, STUCK, REQUESTED, EVENTS = range(6)

#: Simulated time between two watchdog checks.
EPOCH_PS = 20_000_000
#: Epochs in a row without progress before the watchdog stops the run.
STALL_EPOCHS = 50


class Model(ABC):
    """One run of a compiled model: its state, and the compiled ``advance`` over it."""

    @abstractmethod
    def advance(self, until_ps: int, until_events: int = NEVER) -> tuple[int, int]:
        """Simulate up to ``until_ps``, or until the model's event queue has had
        ``until_events`` events taken from it in all; returns a status (above) and the time
        reached (ps)."""

    def events_handled(self) -> int:
        """Events the model has handled so far (what ``until_events`` counts)."""
        raise SimulationError(f"{type(self).__name__} does not count the events it handles")

    @abstractmethod
    def progress(self) -> Hashable:
        """A value that changes whenever the model does work; the watchdog compares them."""

    @abstractmethod
    def stuck(self, now_ps: int) -> str:
        """Where the work left is stuck at ``now_ps``: the message of the error that stops it."""

    def grow(self) -> None:
        """Enlarge what ``advance`` found nearly full (it returned ``GROW``)."""
        raise SimulationError(f"{type(self).__name__} asked for room and has no way to grow")


class Controller(ABC):
    """A policy run in Python between epochs. It gets control (``epoch_end``) when the
    simulation reaches ``next_ps``, and when the model stopped with ``REQUESTED`` while
    ``stop_requested`` says the condition was its own."""

    #: when it next wants control (ps), or None: only when it asks for a stop
    next_ps: int | None = None

    def stop_requested(self) -> bool:
        return False

    @abstractmethod
    def epoch_end(self, now_ps: int) -> None:
        """Look at the model's state and change it at ``now_ps``; move ``next_ps`` on."""


class Pause(Controller):
    """Where a stepped run hands control back to its caller: when the simulation reaches
    ``next_ps``, or once the model has handled ``events`` events in all (either may be None)."""

    def __init__(self) -> None:
        self.next_ps: int | None = None
        self.events: int | None = None
        self.due = False

    def epoch_end(self, now_ps: int) -> None:
        self.due = True
        self.next_ps = None


def run(model: Model, start_ps: int, controllers: Sequence[Controller] = (), *,
        epoch_ps: int = EPOCH_PS, stall_epochs: int = STALL_EPOCHS) -> int:  # fmt: skip
    """Run ``model`` from ``start_ps`` until it finishes, handing control to ``controllers``
    between epochs; returns the time it finished (ps)."""
    return to_the_end(steps(model, start_ps, controllers, epoch_ps=epoch_ps,
                            stall_epochs=stall_epochs))  # fmt: skip


def to_the_end(stepping: Generator[object, None, object]) -> object:
    """What a generator of steps returns, all its steps taken."""
    while True:
        try:
            next(stepping)
        except StopIteration as done:
            return done.value


def steps(model: Model, start_ps: int, controllers: Sequence[Controller] = (),
          pause: Pause | None = None, *, epoch_ps: int = EPOCH_PS,
          stall_epochs: int = STALL_EPOCHS) -> Generator[int, None, int]:  # fmt: skip
    """:func:`run` as a generator: it yields the time reached whenever ``pause`` is due (and
    only then), and returns the time the model finished. The caller may change ``pause``
    (and the model's state) between two steps."""
    watch = start_ps + epoch_ps
    quiet = 0
    last_progress = None
    everyone = [*controllers, pause] if pause is not None else list(controllers)
    while True:
        until = min([watch, *(c.next_ps for c in everyone if c.next_ps is not None)])
        until_events = pause.events if pause is not None and pause.events is not None else NEVER
        status, reached = model.advance(until, until_events)
        if status == FINISHED:
            return max(reached, start_ps)
        if status == GROW:
            model.grow()
        elif status == STUCK:
            raise SimulationError(model.stuck(reached))
        elif status == EVENTS:
            if pause is None:
                raise SimulationError(f"{type(model).__name__} stopped after a number of "
                                      "events, but no pause asked for it")  # fmt: skip
            pause.events = None
            pause.due = True
        elif status == REQUESTED:
            asking = [c for c in controllers if c.stop_requested()]
            if not asking:
                raise SimulationError(f"{type(model).__name__} stopped at {reached} ps at a "
                                      "controller's request, but no controller asked")  # fmt: skip
            for c in asking:
                c.epoch_end(reached)
        elif status == EPOCH_END:
            if reached >= watch:
                progress = model.progress()
                quiet = quiet + 1 if progress == last_progress else 0
                last_progress = progress
                if quiet >= stall_epochs:
                    raise SimulationError(model.stuck(reached))
                watch += epoch_ps
            for c in everyone:
                if c.next_ps is not None and c.next_ps <= reached:
                    c.epoch_end(reached)
        else:
            raise SimulationError(f"{type(model).__name__} returned unknown status {status}")
        if pause is not None and pause.due:
            pause.due = False
            yield max(reached, start_ps)
