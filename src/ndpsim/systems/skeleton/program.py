"""A program's run on a system kind: the hardware of one run built, then the program's kernel
launches one after another, each on the engine's loop, with the hardware's state (caches, DRAM,
links, the page table) carried from one launch to the next.

A kind supplies a :class:`Machine`: per launch its compiled model and its own controllers, what
it checks and adds up when the launch ends, and the result at the end. :func:`program_steps`
does the rest the same way for every kind: the wall clock, the ``on_epoch`` hook, the
timeline's sampling, the pauses of a stepped run (:mod:`ndpsim.systems.stepping`) and the
bookkeeping of its view. It is a generator (first the view, then the time reached at every
pause; it returns the result), so a run and a stepped run are the same code.
"""

from __future__ import annotations

import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Generator, Sequence
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

from ndpsim.engine import events as ev
from ndpsim.engine import loop
from ndpsim.engine.clock import NEVER
from ndpsim.engine.reference import references
from ndpsim.engine.timeline import Timeline
from ndpsim.errors import ConfigError
from ndpsim.hw import requests as rq
from ndpsim.systems.stepping import SteppedRun


@dataclass(frozen=True)
class Program:
    """One program of a run of several at once: its kernel launches (their traces, in order),
    the PTX module they come from, its device memory after the run, and its name in the
    results."""

    name: str
    traces: Sequence[Any]
    module: Any
    memory: Any


@dataclass(frozen=True)
class ProgramMix:
    """Several programs run at once, as the skeleton's one launch: named by its programs."""

    programs: tuple[Program, ...]

    @property
    def name(self) -> str:
        return "+".join(p.name for p in self.programs)

    @property
    def info(self) -> SimpleNamespace:  # what checks and messages read of a launch
        return SimpleNamespace(kernel=self.name, num_ctas=sum(
            t.info.num_ctas for p in self.programs for t in p.traces))  # fmt: skip

    @property
    def num_warp_instructions(self) -> int:
        return sum(t.num_warp_instructions for p in self.programs for t in p.traces)

    @property
    def num_thread_instructions(self) -> int:
        return sum(t.num_thread_instructions for p in self.programs for t in p.traces)


class LaunchView:
    """What every kind's view of a stepped run knows: the launch in flight (``kernel``, -1
    before the first), its model (whose ``state`` holds the compiled arrays, an event queue
    named ``events`` among them), and whether it is still running. A kind's view adds its
    counters and occupancies."""

    kernel: int = -1
    launch: loop.Model | None = None  # the last one started
    in_flight: bool = False  # whether it is still running

    @property
    def state(self) -> Any:
        """The compiled state of the launch in flight (None before the first starts)."""
        return None if self.launch is None else self.launch.state

    def events_handled(self) -> int:
        """Over the whole run: the launches hand their event queue on to the next."""
        state = self.state
        return 0 if state is None else ev.handled(state.events)


class AssembledLaunch(loop.Model):
    """One launch on a system's compiled loop (:func:`ndpsim.engine.assemble.assemble`): its
    ``state`` (a named tuple of components, an event queue ``events`` and a request pool
    ``pool`` among them) is handed to ``advance`` by reference; both grow when the loop stops
    short of ``room`` free entries. ``progress(state)`` changes whenever work is done (for the
    watchdog) and ``diagnose(pool, now_ps)`` says where a stuck launch's work is."""

    def __init__(self, advance: Callable, state: Any, room: int,
                 progress: Callable[[Any], Any], diagnose: Callable[[Any, int], str]):  # fmt: skip
        self._advance, self.room = advance, room
        self._progress, self.diagnose = progress, diagnose
        self.state = state

    @property
    def state(self) -> Any:
        return self._state

    @state.setter
    def state(self, state: Any) -> None:
        self._state = state
        self._arguments = references(state)  # what advance() takes: components by reference

    def advance(self, until_ps: int, until_events: int = NEVER) -> tuple[int, int]:
        return self._advance(*self._arguments, until_ps, until_events)

    def events_handled(self) -> int:
        return ev.handled(self.state.events)

    def grow(self) -> None:
        if self.state.events.meta[2] < self.room:
            self.state = self.state._replace(events=ev.grown(self.state.events))
        if self.state.pool.meta[0] < self.room:
            self.state = self.state._replace(pool=rq.grown(self.state.pool))

    def progress(self) -> Any:
        return self._progress(self.state)

    def stuck(self, now_ps: int) -> str:
        return self.diagnose(self.state.pool, now_ps)


@dataclass
class Launched:
    """One launch, ready to run: its compiled model (a :class:`~ndpsim.engine.loop.Model` with
    a ``state``) and the kind's controllers, run in this order between epochs."""

    model: loop.Model
    controllers: list[loop.Controller] = field(default_factory=list)


class Machine(ABC):
    """The hardware of one run of a system kind, as :func:`program_steps` drives it. A kind
    whose runs take an ``on_epoch`` hook also defines ``epoch(index, now_ps)`` (what the hook
    is handed during launch ``index``), and one that records timelines ``sampler(timeline)``
    (a :class:`~ndpsim.systems.skeleton.timeline.RunTimeline`); a run asking either of a
    machine without it is refused before anything is simulated."""

    view: LaunchView

    @abstractmethod
    def launch(self, index: int, trace: Any, now_ps: int) -> Launched:
        """Launch ``index`` (its ``trace``) starts at ``now_ps``: its work lowered, its
        per-launch state built and its CTAs dispatched."""

    @abstractmethod
    def launch_end(self, index: int, trace: Any, launched: Launched, end_ps: int) -> None:
        """The launch ended at ``end_ps``: check it left nothing behind and conserved what it
        moved, and add its counters to the run's."""

    @abstractmethod
    def result(self, time_ps: int, launches: int, wall_seconds: float) -> Any:
        """The run ended at ``time_ps``: check it as a whole and return its result."""


class EpochHook(loop.Controller):
    """Hands ``on_epoch`` what ``observe(now_ps)`` returns every ``loop.EPOCH_PS`` of a launch."""

    def __init__(self, on_epoch: Callable[[Any], None], start_ps: int,
                 observe: Callable[[int], Any]):  # fmt: skip
        self.on_epoch, self.observe = on_epoch, observe
        self.next_ps = start_ps + loop.EPOCH_PS

    def epoch_end(self, now_ps: int) -> None:
        self.on_epoch(self.observe(now_ps))
        self.next_ps = now_ps + loop.EPOCH_PS


def program_steps(build: Callable[[], Machine], traces: Sequence[Any], pause: loop.Pause,
                  on_epoch: Callable[[Any], None] | None = None,
                  timeline: Timeline | None = None) -> Generator[Any, None, Any]:  # fmt: skip
    """Run the launches ``traces`` on the machine ``build`` makes: yields its view once built
    (nothing simulated yet), then the time reached whenever ``pause`` is due; returns the
    machine's result. The wall time reported includes building the machine."""
    start_wall = time.perf_counter()
    machine = build()
    for asked, method, what in ((on_epoch, "epoch", "hands nothing to on_epoch"),
                                (timeline, "sampler", "records no timeline")):  # fmt: skip
        if asked is not None and not hasattr(machine, method):
            raise ConfigError(f"{type(machine).__name__} {what}: it defines no {method}()")
    view = machine.view
    sampler = None if timeline is None else machine.sampler(timeline)
    yield view
    now = 0
    for index, trace in enumerate(traces):
        launched = machine.launch(index, trace, now)
        controllers = list(launched.controllers)
        if on_epoch is not None:
            controllers.append(EpochHook(on_epoch, now, lambda t, i=index: machine.epoch(i, t)))
        model = launched.model
        if sampler is not None:
            sampler.launch(model.state, index, trace.info.kernel, now)
            controllers.append(sampler)
        view.kernel, view.launch, view.in_flight = index, model, True
        now = yield from loop.steps(model, now, controllers, pause)
        if sampler is not None:
            sampler.launch_end(model.state, now)
        machine.launch_end(index, trace, launched, now)
        view.in_flight = False
    return machine.result(now, len(traces), time.perf_counter() - start_wall)


def start_program(build: Callable[[], Machine], traces: Sequence[Any],
                  on_epoch: Callable[[Any], None] | None = None,
                  timeline: Timeline | None = None) -> SteppedRun:  # fmt: skip
    """:func:`program_steps` as a run its caller advances (a system's ``start``); nothing is
    simulated until the first step, and ``finish()`` is a system's ``run``."""
    pause = loop.Pause()
    steps = program_steps(build, traces, pause, on_epoch, timeline)
    view = next(steps)  # the hardware built, nothing simulated yet
    return SteppedRun(steps, pause, view)


class ProgramSystem(ABC):
    """A system whose run of one program is a :class:`Machine`'s on the skeleton: ``run`` and
    ``start`` (the stepped run) the same for every such kind, which says only how its machine
    is built."""

    config: Any  # the kind's config model, with a ``seed``

    @abstractmethod
    def machine(self, module: Any, memory: Any, seed: int) -> Machine:
        """The hardware of one run of a program of PTX ``module`` whose device memory is
        ``memory``, random choices drawn from ``seed``."""

    def run(self, traces, module, memory, seed=None, on_epoch=None,
            timeline: Timeline | None = None):  # fmt: skip
        """Simulate the kernel launches ``traces`` of one program; fill ``timeline``, if given,
        with the run's components window by window."""
        return self.start(traces, module, memory, seed, on_epoch, timeline).finish()

    def start(self, traces, module, memory, seed=None, on_epoch=None,
              timeline: Timeline | None = None) -> SteppedRun:  # fmt: skip
        """The run of :meth:`run`, for its caller to advance step by step."""
        seed = self.config.seed if seed is None else seed
        return start_program(lambda: self.machine(module, memory, seed), traces, on_epoch,
                             timeline)  # fmt: skip
