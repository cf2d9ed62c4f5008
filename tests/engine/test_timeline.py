"""The timeline: windows of cumulative counters, bounded by coarsening, as trace events."""

from __future__ import annotations

import json

import numpy as np
import pytest

from ndpsim.engine.timeline import MIN_WINDOWS, Timeline
from ndpsim.errors import ConfigError, SimulationError
from tests.trace_events import problems


def _counts(deltas, gauges, window_ps):
    return {"moved": deltas[:, 0], "level": gauges[:, 0]}


def _timeline(**settings) -> Timeline:
    timeline = Timeline(**settings)
    timeline.group("parts", ["a", "b"], ["count"], ["level"], _counts)
    return timeline


def _rows(a: int, b: int, level: float = 0.0):
    return {"parts": (np.array([[a], [b]]), np.full((2, 1), level))}


def test_a_window_shows_what_its_counters_moved_and_the_gauge_at_its_end():
    t = _timeline(window_ps=1000)
    t.sample(0, _rows(0, 0), boundary=True)
    t.sample(1000, _rows(5, 0, level=2))
    t.sample(2000, _rows(7, 3, level=1), boundary=True)
    counters = [e for e in t.events() if e["ph"] == "C"]
    a = [(e["ts"], e["args"]) for e in counters if e["name"] == "a"]
    assert a == [(0.0, {"moved": 5, "level": 2}), (0.001, {"moved": 2, "level": 1}),
                 (0.002, {"moved": 0, "level": 0})]  # fmt: skip
    assert t.totals("parts") == {"a": {"count": 7}, "b": {"count": 3}}
    assert not problems(t.document())


def test_a_value_equal_to_the_one_before_is_not_repeated():
    t = _timeline(window_ps=10)
    for k in range(6):
        t.sample(10 * k, _rows(k, 0))
    b = [e for e in t.events() if e["ph"] == "C" and e["name"] == "b"]
    assert len(b) == 1  # zero throughout: one event, and no end event


def test_samples_at_one_time_make_one_window():
    t = _timeline(window_ps=10)
    t.sample(0, _rows(0, 0), boundary=True)
    t.sample(10, _rows(4, 0), boundary=True)  # a launch ends ...
    t.sample(10, _rows(5, 0), boundary=True)  # ... and the next starts
    t.sample(20, _rows(6, 0))
    a = [e["args"]["moved"] for e in t.events() if e["ph"] == "C" and e["name"] == "a"]
    assert a == [4, 2, 0]  # the moves at time 10 go to the window after it, none is lost


def test_what_the_first_sample_holds_belongs_to_the_first_window():
    t = _timeline(window_ps=10)
    t.sample(0, _rows(3, 0))  # charged as the run started
    t.sample(10, _rows(4, 0))
    a = [e["args"]["moved"] for e in t.events() if e["ph"] == "C" and e["name"] == "a"]
    assert a == [4, 0]
    assert t.totals("parts")["a"] == {"count": 4}


def test_a_long_run_coarsens_its_windows_within_the_bound_and_keeps_boundaries():
    t = _timeline(window_ps=10, max_events=100)
    now, k = 0, 0
    while now < 100_000:  # sampled as a system does: at each window end, and at a boundary
        t.sample(now, _rows(k * k, k), boundary=now == 0)
        now, k = t.next_sample_ps(now), k + 1
        if now > 5003 and 5003 not in t.times_ps:
            t.sample(5003, _rows(k * k, k), boundary=True)
            k += 1
    assert (len(t.times_ps) - 1) * 2 <= 100
    assert t.window_ps > 10 and t.window_ps % 10 == 0
    assert 0 in t.times_ps and 5003 in t.times_ps
    assert t.totals("parts") == {"a": {"count": (k - 1) ** 2}, "b": {"count": k - 1}}
    counters = [e for e in t.events() if e["ph"] == "C"]
    assert len(counters) <= 100 + 2  # the bound, and an end event per track
    assert not problems(t.document())


def test_coarsening_stops_at_the_fewest_windows():
    t = _timeline(window_ps=10, max_events=1)
    now = 0
    for k in range(200):
        t.sample(now, _rows(k, k))
        now = t.next_sample_ps(now)
    assert len(t.times_ps) - 1 >= MIN_WINDOWS
    assert len(t.times_ps) - 1 <= 2 * MIN_WINDOWS


def test_marks_are_instant_events_of_their_group():
    t = _timeline()
    t.mark(2_500_000, "decisions", "ratio moved", {"ratio": 0.25})
    t.sample(0, _rows(0, 0))
    t.sample(5_000_000, _rows(1, 1))
    events = t.events()
    instant = next(e for e in events if e["ph"] == "i")
    assert instant["ts"] == 2.5 and instant["args"] == {"ratio": 0.25}
    names = {e["pid"]: e["args"]["name"] for e in events if e["name"] == "process_name"}
    assert names[instant["pid"]] == "decisions"
    assert not problems(t.document())


def test_the_file_is_json_with_its_metadata(tmp_path):
    t = _timeline(window_ps=1000)
    t.sample(0, _rows(0, 0))
    t.sample(1000, _rows(1, 0))
    t.write(tmp_path / "t.json", {"system": "x"})
    document = json.loads((tmp_path / "t.json").read_text())
    assert document["otherData"] == {"system": "x", "window_ns": 1.0}
    assert not problems(document)


def test_a_counter_going_down_stops_the_run():
    t = _timeline()
    t.sample(0, _rows(3, 0))
    with pytest.raises(SimulationError, match="'count' of a went down at 10 ps, from 3 to 2"):
        t.sample(10, _rows(2, 0))


@pytest.mark.parametrize("settings", [{"window_ps": 0}, {"max_events": 0}])
def test_bad_settings_are_refused(settings):
    with pytest.raises(ConfigError):
        Timeline(**settings)


def test_a_group_is_declared_once_and_before_sampling():
    t = _timeline()
    with pytest.raises(ConfigError, match="declared twice"):
        t.group("parts", ["a"], ["count"], [], _counts)
    t.sample(0, _rows(0, 0))
    with pytest.raises(ConfigError, match="after the first sample"):
        t.group("late", ["a"], ["count"], [], _counts)


def test_the_checker_finds_what_breaks_the_format():
    bad = {"traceEvents": [{"name": "x", "ph": "C", "ts": -1, "pid": 1, "tid": 0,
                            "args": {"v": "high"}},
                           {"name": "y", "ph": "Q", "pid": 1, "tid": 0}]}  # fmt: skip
    found = problems(bad)
    assert any("ts -1" in p for p in found) and any("phase 'Q'" in p for p in found)
    ok = {"traceEvents": [{"name": "x", "ph": "C", "ts": 0, "pid": 1, "tid": 0,
                           "args": {"v": "high"}}]}  # fmt: skip
    assert any("not a number" in p for p in problems(ok))
    assert any("no process_name" in p for p in problems(ok))
