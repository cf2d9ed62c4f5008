"""The engine's assembled loop, on a toy system: a clocked counter and a ping event."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import pytest
from numba import njit

from ndpsim.engine import events as ev
from ndpsim.engine import kinds, loop
from ndpsim.engine.assemble import Clock, assemble
from ndpsim.engine.clock import NEVER
from ndpsim.engine.reference import references
from ndpsim.errors import ConfigError, SimulationError

PING, PONG, ORPHAN = kinds.declare(__name__, "PING", "PONG", "ORPHAN")
# scratch: [0] next tick, [1] ticks, [2] pings handled, [3] pongs, [4] ticks wanted,
# [5] the tick after which a controller wants control (or -1)
NEXT, TICKS, PINGS, PONGS, WANTED, ASK_AT = range(6)


class Toy(NamedTuple):
    events: ev.EventQueue
    scratch: np.ndarray


HANDLERS = kinds.Handlers("the toy system")


@HANDLERS.on(PING)
def _on_ping(scratch, events, count, now):
    scratch[PINGS] += count
    ev.push(events, now + 5, PONG, 0, 0)


@HANDLERS.on(PONG)
def _on_pong(scratch):
    scratch[PONGS] += 1


@njit
def _next(scratch):
    return scratch[NEXT]


@njit
def _tick(scratch, events, now):
    scratch[TICKS] += 1
    if scratch[TICKS] % 3 == 0:
        ev.push(events, now, PING, 2, 0)
    scratch[NEXT] = now + 10 if scratch[TICKS] < scratch[WANTED] else NEVER


@njit
def _short(events):
    return events.meta[2] < 4


@njit
def _finished(scratch, events):
    return scratch[TICKS] == scratch[WANTED] and ev.peek_time(events) < 0, 0


@njit
def _requested(scratch):
    return scratch[ASK_AT] == scratch[TICKS]


_loop = njit(assemble(Toy, HANDLERS, (Clock(_next, _tick),), short_of_room=_short,
                      finished=_finished, requested=_requested, home=__name__))  # fmt: skip


def advance(st: Toy, until: int, until_events: int = NEVER) -> tuple[int, int]:
    return _loop(*references(st), until, until_events)


def _toy(ticks: int, ask_at: int = -1) -> Toy:
    return Toy(ev.event_queue(64), np.array([0, 0, 0, 0, ticks, ask_at], dtype=np.int64))


def test_events_come_before_clocks_and_the_loop_finishes():
    st = _toy(9)
    status, _ = advance(st, NEVER - 1)
    assert status == loop.FINISHED
    assert st.scratch[TICKS] == 9
    assert st.scratch[PINGS] == 6 and st.scratch[PONGS] == 3  # a ping every third tick


def test_an_epoch_ends_before_the_next_thing_after_until():
    st = _toy(9)
    assert advance(st, 25) == (loop.EPOCH_END, 25)
    assert st.scratch[TICKS] == 3  # ticks at 0, 10, 20


def test_a_controllers_condition_stops_the_loop_after_the_clock_that_made_it_true():
    st = _toy(9, ask_at=4)
    assert advance(st, NEVER - 1) == (loop.REQUESTED, 30)


def test_nothing_left_to_happen_is_stuck():
    st = _toy(9)
    st.scratch[NEXT] = NEVER
    assert advance(st, NEVER - 1)[0] == loop.STUCK


def test_an_event_without_a_handler_is_an_error_not_lost():
    st = _toy(9)
    ev.push(st.events, 0, ORPHAN, 0, 0)
    with pytest.raises(SimulationError, match="without a handler"):
        advance(st, NEVER - 1)


def test_a_kind_gets_one_handler_and_nothing_registers_after_assembling():
    twice = kinds.Handlers("twice")
    twice.on(PING)(_on_ping)
    with pytest.raises(ConfigError, match="two handlers"):
        twice.on(PING)(_on_pong)
    with pytest.raises(ConfigError, match="after the loop was assembled"):
        HANDLERS.on(ORPHAN)(lambda scratch: None)


def test_a_function_may_only_ask_for_components_the_time_and_the_event():
    handlers = kinds.Handlers("strict")
    handlers.on(PING)(_on_ping)
    with pytest.raises(ConfigError, match=r"takes 'memory'.*components are events, scratch"):
        assemble(Toy, handlers, (Clock(_next, njit(lambda memory, now: None)),),
                 short_of_room=_short, finished=_finished, requested=_requested,
                 home=__name__)  # fmt: skip
    with pytest.raises(ConfigError, match="takes 'extra'"):
        handlers = kinds.Handlers("three arguments")
        handlers.on(PING)(lambda scratch, first, second, extra: None)
        assemble(Toy, handlers, (Clock(_next, _tick),), short_of_room=_short,
                 finished=_finished, requested=_requested, home=__name__)  # fmt: skip


def test_a_ping_passes_its_argument_by_position_and_its_time():
    st = _toy(3)
    ev.push(st.events, 7, PING, 40, 0)
    advance(st, NEVER - 1)
    assert st.scratch[PINGS] == 42  # its own 40, and the 2 of the third tick
