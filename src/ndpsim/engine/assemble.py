"""One compiled loop per system kind, assembled from what the system contributes.

A system's compiled state is a ``NamedTuple`` of its components, an ``events`` queue among them.
The system gives the engine:

* its event handlers (:class:`ndpsim.engine.kinds.Handlers`);
* its clocked components, in priority order: each a :class:`Clock`, a pair of compiled
  functions ``next_ps`` (the earliest time any of its units wants to run, kept by the component
  rather than an event per unit and cycle, which would cost more than the work) and ``tick``
  (run every unit due at ``now`` and keep its earliest time up to date);
* three compiled questions: ``short_of_room`` (a queue or pool is nearly full), ``finished``
  (``(True, end time)`` once all work is done) and ``requested`` (a condition a controller set
  up holds: asked after every event and every round of ticks, so the loop stops where the
  condition became true even when nothing is clocked then).

Every one of these functions names the components it needs by their field names in the state
(and the time as ``now``); the loop passes each exactly those. :func:`assemble` returns
``advance(*state, until, until_events)`` for :mod:`ndpsim.engine.loop`. At one time, events
come first, then the clocks in the order given: data arriving at ``t`` can be used by a unit
that runs at ``t``.

The loop is written out as the source of one flat function (the components as its parameters, a
chain of ``if kind == k`` over the registered kinds, one branch per handler, the clocks
unrolled) for the system to compile with :func:`ndpsim.numba_cache.compiled`. It calls every
handler and clock as a function of its own, compiled and cached on its own: the system's run
passes its components by reference (:func:`ndpsim.engine.reference.references`), so a call
passes a pointer per component rather than every array of every component (which is what made
a call per event 8x slower when the state was passed as tuples), and an edit to a handler
recompiles that handler and this loop, in seconds, instead of everything.
"""

from __future__ import annotations

import inspect
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import NamedTuple

from ndpsim.engine import events as ev
from ndpsim.engine import kinds, loop
from ndpsim.engine.clock import NEVER
from ndpsim.errors import ConfigError, SimulationError


class Clock(NamedTuple):
    """A clocked component of a system: compiled ``next_ps`` and ``tick`` (see the module)."""

    next_ps: Callable
    tick: Callable


_LOOP = """
def advance({fields}, until, until_events):
    now = 0
    while True:
        if short_of_room({short_of_room}):
            return GROW, now
        done, end = finished({finished})
        if done:
            return FINISHED, end
        t_event = peek_time(events)
        if t_event < 0:
            t_event = NEVER
        now = t_event
{clock_times}
        if now >= NEVER:
            return STUCK, now
        if now > until:
            return EPOCH_END, until
        if t_event == now:
            t, kind, a0, a1 = pop(events)
            events.meta[3] += 1
{dispatch}
            else:
                raise SimulationError(UNHANDLED)
            if events.meta[3] >= until_events:
                return EVENTS, now
            if requested({requested}):
                return REQUESTED, now
            continue
{ticks}
        if requested({requested}):
            return REQUESTED, now
"""
#: The loop's own variables, which no component may be named after.
_LOOP_NAMES = frozenset({"until", "until_events", "now", "done", "end", "t_event", "t", "kind",
                         "a0", "a1"})  # fmt: skip


def assemble(state_type: type, handlers: kinds.Handlers, clocks: Sequence[Clock], *,
             short_of_room: Callable, finished: Callable, requested: Callable,
             home: str, aliases: Mapping[str, str] | None = None) -> Callable:  # fmt: skip
    """The loop ``advance(*references(state), until, until_events)`` of a system whose state
    is a ``state_type``, as a Python function for the system to compile (``home`` names the
    system's module, under whose name numba's cache keeps it). It runs until the work is done
    (``FINISHED``), the next thing happens after ``until`` (``EPOCH_END``), the event queue has
    had ``until_events`` events taken from it in all (``EVENTS``), it is short of room
    (``GROW``), nothing can happen although work is left (``STUCK``) or a controller's
    condition holds after a clock ran (``REQUESTED``); returns (status, time reached).
    ``handlers`` takes no registration afterwards: the loop holds those it has now.
    ``aliases`` wire a parameter a component names after its own concept to the system's field
    (the SIMT core's ``ext``, its extension, is the GPU's ``off``)."""
    fields = tuple(state_type._fields)
    clash = sorted(_LOOP_NAMES.intersection(fields))
    if "events" not in fields or clash or not clocks:
        raise ConfigError(f"{handlers.what}: a loop needs a state with an 'events' queue, "
                          f"components not named {sorted(_LOOP_NAMES)} (got {clash}) and at "
                          "least one clock")  # fmt: skip
    handlers.frozen = True
    namespace: dict = {
        "peek_time": ev.peek_time, "pop": ev.pop, "NEVER": NEVER,
        "SimulationError": SimulationError, "GROW": loop.GROW, "FINISHED": loop.FINISHED,
        "STUCK": loop.STUCK, "EPOCH_END": loop.EPOCH_END, "REQUESTED": loop.REQUESTED,
        "EVENTS": loop.EVENTS,
        "UNHANDLED": f"{handlers.what}: an event of a kind without a handler was scheduled",
        "short_of_room": short_of_room, "finished": finished, "requested": requested,
        "__name__": home,
    }  # fmt: skip
    wiring = _Wiring(handlers.what, fields, dict(aliases or {}))
    clock_times, ticks = [], []
    for k, clock in enumerate(clocks):
        namespace[f"next_{k}"], namespace[f"tick_{k}"] = clock.next_ps, clock.tick
        clock_times.append(f"        t_{k} = next_{k}({wiring.arguments(clock.next_ps)})\n"
                           f"        now = min(now, t_{k})")  # fmt: skip
        keyword = "if" if k == 0 else "elif"
        ticks.append(f"        {keyword} t_{k} == now:\n"
                     f"            tick_{k}({wiring.arguments(clock.tick)})")  # fmt: skip
    dispatch = []
    for k, (handler, numbers) in enumerate(_kinds_by_handler(handlers).items()):
        namespace[f"handle_{k}"] = handler
        keyword = "if" if k == 0 else "elif"
        test = " or ".join(f"kind == {number}" for number in numbers)
        names = ", ".join(kinds.name_of(number) for number in numbers)
        call = f"handle_{k}({wiring.arguments(handler, event=True)})"
        dispatch.append(f"            {keyword} {test}:  # {names}\n                {call}")
    if not dispatch:
        dispatch.append("            if False:\n                pass")
    source = _LOOP.format(
        fields=", ".join(fields),
        short_of_room=wiring.arguments(short_of_room), finished=wiring.arguments(finished),
        requested=wiring.arguments(requested), clock_times="\n".join(clock_times),
        dispatch="\n".join(dispatch), ticks="\n".join(ticks),
    )  # fmt: skip
    # Compiled as if written in the system's module: numba's cache finds it by that file.
    exec(compile(source, sys.modules[home].__file__, "exec"), namespace)
    return namespace["advance"]


def _kinds_by_handler(handlers: kinds.Handlers) -> dict[Callable, list[int]]:
    """The kinds of each handler: one branch, so one call site, per handler."""
    grouped: dict[Callable, list[int]] = {}
    for number, handler in sorted(handlers.handlers.items()):
        grouped.setdefault(handler, []).append(number)
    return grouped


class _Wiring:
    """How the loop calls a system's function: each parameter named after a component gets it,
    ``now`` the time; an event handler's ``kind`` gets the event's kind and its other
    parameters, in order, the event's two arguments."""

    def __init__(self, what: str, fields: tuple[str, ...], aliases: dict[str, str]):
        self.what, self.fields, self.aliases = what, fields, aliases

    def arguments(self, function: Callable, event: bool = False) -> str:
        python = getattr(function, "py_func", function)
        values, event_arguments = [], ["a0", "a1"]
        for name in inspect.signature(python).parameters:
            field = self.aliases.get(name, name)
            if field in self.fields:
                values.append(field)
            elif name == "now":
                values.append("t" if event else "now")
            elif event and name == "kind":
                values.append("kind")
            elif event and event_arguments:
                values.append(event_arguments.pop(0))
            else:
                expected = "a component, now, kind or an event argument" if event else (
                    "a component or now")  # fmt: skip
                raise ConfigError(f"{self.what}: {python.__qualname__} takes {name!r}; "
                                  f"expected {expected}; the components are "
                                  f"{', '.join(self.fields)}")  # fmt: skip
        return ", ".join(values)
