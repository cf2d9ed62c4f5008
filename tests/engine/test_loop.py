"""The engine's epoch loop, on a toy model: what it does with each status, the watchdog, and
controllers getting control at their times and at their requests."""

from __future__ import annotations

import numpy as np
import pytest

from ndpsim.engine import loop
from ndpsim.errors import SimulationError
from ndpsim.hw.dram.spec import load_dram_preset
from ndpsim.systems.dram_trace import run_dram_trace


class Toy(loop.Model):
    """Work items done at given times (ps); ``script``: statuses to return before any work."""

    def __init__(self, done_at, script=()):
        self.left = list(done_at)
        self.now = 0
        self.script = list(script)
        self.untils: list[int] = []
        self.grown = 0

    def advance(self, until_ps, until_events=loop.NEVER):
        self.untils.append(until_ps)
        if self.script:
            return self.script.pop(0)
        while self.left and self.left[0] <= until_ps:
            self.now = self.left.pop(0)
        if not self.left:
            return loop.FINISHED, self.now
        return loop.EPOCH_END, until_ps

    def progress(self):
        return len(self.left)

    def stuck(self, now_ps):
        return f"toy stuck at {now_ps} ps with {len(self.left)} items left"


class Growing(Toy):
    def grow(self):
        self.grown += 1


class Every(loop.Controller):
    """Takes control every ``period_ps``, from ``period_ps``; asks for a stop when told to."""

    def __init__(self, period_ps, log, name, asks=False):
        self.period_ps, self.log, self.name, self.asks = period_ps, log, name, asks
        self.next_ps = period_ps

    def stop_requested(self):
        return self.asks

    def epoch_end(self, now_ps):
        self.log.append((self.name, now_ps))
        self.asks = False
        if self.next_ps is not None and self.next_ps <= now_ps:
            self.next_ps = now_ps + self.period_ps


def test_a_model_runs_epoch_by_epoch_until_it_finishes():
    toy = Toy([5, 30, 70])
    assert loop.run(toy, 0, epoch_ps=20) == 70
    assert toy.untils == [20, 40, 60, 80]


def test_the_end_is_never_before_the_start():
    assert loop.run(Toy([5]), 100, epoch_ps=20) == 100


def test_the_watchdog_stops_a_run_without_progress_naming_where_it_is_stuck():
    toy = Toy([5, 10_000])
    with pytest.raises(SimulationError, match=r"toy stuck at 40 ps with 1 items left"):
        loop.run(toy, 0, epoch_ps=10, stall_epochs=3)


def test_a_stuck_model_stops_the_run_at_once():
    with pytest.raises(SimulationError, match=r"toy stuck at 3 ps"):
        loop.run(Toy([5], script=[(loop.STUCK, 3)]), 0)


def test_a_model_short_of_room_grows_and_goes_on():
    toy = Growing([5], script=[(loop.GROW, 0), (loop.GROW, 0)])
    assert loop.run(toy, 0, epoch_ps=20) == 5
    assert toy.grown == 2 and toy.untils == [20, 20, 20]


def test_a_model_that_cannot_grow_says_so():
    with pytest.raises(SimulationError, match=r"Toy asked for room and has no way to grow"):
        loop.run(Toy([5], script=[(loop.GROW, 0)]), 0)


def test_an_unknown_status_is_an_error():
    with pytest.raises(SimulationError, match=r"unknown status 99"):
        loop.run(Toy([5], script=[(99, 0)]), 0)


def test_controllers_get_control_at_their_own_times_in_the_order_given():
    log: list[tuple[str, int]] = []
    toy = Toy([100])
    controllers = [Every(15, log, "a"), Every(30, log, "b")]
    assert loop.run(toy, 0, controllers, epoch_ps=20) == 100
    assert log == [("a", 15), ("a", 30), ("b", 30), ("a", 45), ("a", 60), ("b", 60),
                   ("a", 75), ("a", 90), ("b", 90)]  # fmt: skip
    # the run stopped at every watchdog epoch and at every controller's time
    assert toy.untils == [15, 20, 30, 40, 45, 60, 75, 80, 90, 100]


def test_a_stop_requested_by_a_controller_hands_control_to_it_alone():
    log: list[tuple[str, int]] = []
    asking = Every(1000, log, "asking", asks=True)
    other = Every(1000, log, "other")
    toy = Toy([50], script=[(loop.REQUESTED, 7)])
    assert loop.run(toy, 0, [other, asking], epoch_ps=20) == 50
    assert log == [("asking", 7)]


def test_a_stop_nobody_asked_for_is_an_error():
    with pytest.raises(SimulationError, match=r"stopped at 7 ps at a controller's request, but"):
        loop.run(Toy([5], script=[(loop.REQUESTED, 7)]), 0, [Every(10, [], "quiet")])


def test_a_compiled_model_stopped_every_few_cycles_gives_the_same_result(monkeypatch):
    # the DRAM trace runner resumes from its arrays: cutting it into epochs of under three DRAM
    # cycles changes no count
    rng = np.random.default_rng(0)
    addresses = rng.integers(0, 1 << 30, 4000) & ~63
    writes = (rng.random(4000) < 0.3).astype(np.uint8)
    preset = load_dram_preset("hbm2-anchor")
    whole = run_dram_trace(preset, addresses, writes)
    assert whole.cycles * preset.timing.tCK_ps > 500 * 2_777  # over 500 epochs below
    stops = []
    run = loop.run

    def short_epochs(model, start_ps, controllers=()):
        stops.append(model)
        return run(model, start_ps, controllers, epoch_ps=2_777, stall_epochs=10**9)

    monkeypatch.setattr(loop, "run", short_epochs)
    cut = run_dram_trace(preset, addresses, writes)
    assert stops and (cut.cycles, cut.inject_cycles, cut.stats) == (
        whole.cycles, whole.inject_cycles, whole.stats)  # fmt: skip


def test_a_stepped_run_yields_where_its_pause_says_and_ends_as_a_whole_run():
    pause = loop.Pause()
    toy = Toy([5, 30, 70])
    stepping = loop.steps(toy, 0, pause=pause, epoch_ps=20)
    pause.next_ps = 25
    assert next(stepping) == 25
    assert toy.left == [30, 70]  # nothing past the pause was done
    pause.next_ps = 31
    assert next(stepping) == 31
    assert loop.to_the_end(stepping) == 70
    assert loop.run(Toy([5, 30, 70]), 0, epoch_ps=20) == 70


def test_a_stop_after_a_number_of_events_needs_a_pause_that_asked_for_it():
    pause = loop.Pause()
    toy = Toy([5, 30], script=[(loop.EVENTS, 3)])
    stepping = loop.steps(toy, 0, pause=pause, epoch_ps=20)
    assert next(stepping) == 3
    with pytest.raises(SimulationError, match="no pause asked for it"):
        loop.run(Toy([5], script=[(loop.EVENTS, 3)]), 0)
