"""Stepped runs: started, advanced to a time or by a number of events, looked at and changed
between steps, then finished; left unchanged, they end as an uninterrupted run does."""

from __future__ import annotations

import pytest

from ndpsim.errors import SimulationError
from ndpsim.hw.gpu import offload as ofl
from ndpsim.systems import load_system
from ndpsim.workloads import kernel_module, run_workload


def _document(result) -> dict:
    document = result.as_dict()
    document.pop("wall_seconds")
    return document


@pytest.fixture(scope="module")
def bfs():
    """A program of several launches (the steps cross launch boundaries)."""
    run = run_workload("bfs", "tiny", seed=0)
    return run.traces, kernel_module(run.workload.module_name), run.memory


def _start(preset: str, program, overrides: dict | None = None):
    traces, module, memory = program
    return load_system(preset, overrides).start(traces, module, memory, seed=0)


@pytest.mark.parametrize("preset", ["tom-ndp", "sndp-ndp"])
def test_a_stepped_run_left_unchanged_ends_as_an_uninterrupted_one(bfs, preset):
    traces, module, memory = bfs
    whole = load_system(preset).run(traces, module, memory, seed=0)
    stepped = _start(preset, bfs)
    assert stepped.view.kernel == -1 and stepped.now_ps == 0  # nothing simulated yet
    times = []
    step = 0
    while (
        not stepped.advance(stepped.now_ps + 150_000)
        if step % 2
        else not stepped.advance(events=997)
    ):
        times.append(stepped.now_ps)
        step += 1
    assert len(times) > 10 and times == sorted(times)
    assert stepped.view.kernel == len(traces) - 1
    assert _document(stepped.result) == _document(whole)


def test_a_step_by_events_handles_that_many(bfs):
    stepped = _start("tom-baseline", bfs)
    stepped.advance(events=500)
    assert stepped.view.events_handled() == 500
    stepped.advance(events=1)
    assert stepped.view.events_handled() == 501


def test_the_view_shows_counters_and_occupancy_between_steps(bfs):
    stepped = _start("tom-baseline", bfs)
    assert stepped.view.occupancy()["warps_resident"] == 0
    busy = []
    issued = []
    while not stepped.advance(stepped.now_ps + 50_000):
        busy.append(stepped.view.occupancy())
        issued.append(stepped.view.counters()["sm"]["warp_instructions"])
    assert any(o["warps_resident"] > 0 and o["requests_in_flight"] > 0 for o in busy)
    assert issued == sorted(issued) and issued[-1] > 0  # counts accumulate over launches
    final = stepped.view.counters()
    assert final["sm"]["warp_instructions"] == stepped.result.summary["warp_instructions"]
    assert final["dram"]["reads_done"] > 0 and final["links"]["busy_ps"] > 0


def test_moving_a_page_between_steps_changes_where_its_accesses_go(bfs):
    traces, module, memory = bfs
    whole = load_system("tom-baseline").run(traces, module, memory, seed=0)
    stepped = _start("tom-baseline", bfs)
    stepped.advance(events=100)
    table = stepped.view.page_table
    for page in range(len(table.table)):  # every page to the frames of one cube, in turn
        address = (table.vpn_base + page) << table.shift
        table.migrate(address, (page * 4) % table.frames)
    moved = stepped.finish()
    assert _document(moved) != _document(whole)


def test_a_policy_switched_between_steps_holds_for_the_launch(bfs):
    # SNDP offloading a random half of its blocks; switched to none after the first step, it
    # offloads fewer than the same run left alone
    overrides = {"ndp": {"decision": "ratio", "ratio": 0.5}}
    offloaded = []
    for switch in (False, True):
        stepped = _start("sndp-ndp", bfs, overrides)
        stepped.advance(events=50)
        if switch:
            stepped.view.state.off.control[ofl.C_RATIO_PERMILLE] = 0
        stepped.finish()
        offloaded.append(stepped.view.counters()["offload"]["offloaded"])
    assert offloaded[1] < offloaded[0]


def test_a_step_must_move_forward(bfs):
    stepped = _start("tom-baseline", bfs)
    stepped.advance(100_000)
    with pytest.raises(SimulationError, match="later time"):
        stepped.advance(100_000)
    with pytest.raises(SimulationError, match="at least one event"):
        stepped.advance(events=0)
    with pytest.raises(SimulationError, match=r"a time .* or by a number of events"):
        stepped.advance()
    stepped.finish()
    with pytest.raises(SimulationError, match="has finished"):
        stepped.advance(events=1)
