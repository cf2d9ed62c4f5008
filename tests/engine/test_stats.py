"""The statistics registry: counter groups compiled code increments in place, the nested dump
(totals per group, per-instance values when there are several), histograms, adopted arrays, and
refusing a group registered twice."""

from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from ndpsim.engine.stats import StatsRegistry
from ndpsim.errors import SimulationError


def test_counters_returns_the_zeroed_array_the_dump_reads():
    reg = StatsRegistry()
    values = reg.counters("l1", ["hits", "misses"], count=3)
    assert values.shape == (3, 2)
    assert values.dtype == np.int64
    assert not values.any()
    values[0, 0] += 5
    values[2, 0] += 1
    values[1, 1] += 7
    assert reg.total("l1", "hits") == 6
    assert reg.totals("l1") == {"hits": 6, "misses": 7}
    assert reg.as_dict()["l1"]["total"] == {"hits": 6, "misses": 7}


def test_dump_nests_by_dotted_path_with_instances_only_when_several():
    reg = StatsRegistry()
    l2 = reg.counters("gpu.mem.l2", ["hits"], count=2, instance_names=["a", "b"])
    xbar = reg.counters("gpu.xbar", ["flits"])
    l2[:, 0] = [3, 4]
    xbar[0, 0] = 9
    out = reg.as_dict()
    assert out == {
        "gpu": {
            "mem": {
                "l2": {
                    "total": {"hits": 7},
                    "instances": {"a": {"hits": 3}, "b": {"hits": 4}},
                }
            },
            "xbar": {"total": {"flits": 9}},
        }
    }
    assert "instances" not in reg.as_dict(per_instance=False)["gpu"]["mem"]["l2"]


def test_instances_are_labelled_by_index_by_default():
    reg = StatsRegistry()
    reg.counters("sm", ["issued"], count=3)[:, 0] = [1, 2, 3]
    assert reg.as_dict()["sm"]["instances"] == {
        "0": {"issued": 1},
        "1": {"issued": 2},
        "2": {"issued": 3},
    }


def test_registering_a_group_twice_raises_value_error():
    reg = StatsRegistry()
    reg.counters("dram", ["reads"])
    with pytest.raises(ValueError, match="dram"):
        reg.counters("dram", ["writes"])


def test_histogram_is_zeroed_and_dumped_at_its_path():
    reg = StatsRegistry()
    counts = reg.histogram("link.latency", bins=4, bin_width=100)
    assert counts.tolist() == [0, 0, 0, 0]
    counts[1] += 2
    counts[3] += 1
    reg.counters("link", ["packets"])
    out = reg.as_dict()
    assert out["link"]["latency"] == {"bin_width": 100, "counts": [0, 2, 0, 1]}
    assert out["link"]["total"] == {"packets": 0}


def test_adopted_array_is_read_live_not_copied():
    reg = StatsRegistry()
    owned = np.zeros((2, 3), dtype=np.int64)
    reg.adopt("dram.channel", ["act", "rd", "wr"], owned, instance_names=["c0", "c1"])
    owned[1, 1] = 12
    owned[0, 2] = 5
    out = reg.as_dict()["dram"]["channel"]
    assert out["total"] == {"act": 0, "rd": 12, "wr": 5}
    assert out["instances"]["c1"] == {"act": 0, "rd": 12, "wr": 0}


def test_float_counters_total_as_floats():
    reg = StatsRegistry()
    energy = reg.counters("energy", ["pj"], count=2, dtype=np.float64)
    energy[:, 0] = [0.5, 1.25]
    assert reg.totals("energy") == {"pj": 1.75}


@given(st.lists(st.lists(st.integers(0, 10**9), min_size=3, max_size=3), min_size=1, max_size=8))
def test_group_total_is_the_sum_over_instances(rows):
    reg = StatsRegistry()
    values = reg.counters("g", ["a", "b", "c"], count=len(rows))
    values[:] = rows
    totals = reg.as_dict()["g"]["total"]
    assert totals == {n: sum(r[i] for r in rows) for i, n in enumerate("abc")}
    if len(rows) > 1:
        instances = reg.as_dict()["g"]["instances"]
        assert [list(instances[str(i)].values()) for i in range(len(rows))] == rows


@pytest.mark.parametrize(("register", "complaint"), [
    (lambda r: r.counters("a..b", ["x"]), "dotted non-empty names"),
    (lambda r: r.counters("l2", ["hits", "hits"]), "distinct and non-empty"),
    (lambda r: r.counters("l2", ["hits", ""]), "distinct and non-empty"),
    (lambda r: r.counters("l2", ["hits"], count=2, instance_names=["a"]), "1 instance names"),
    (lambda r: r.counters("l2", ["hits"], count=2, instance_names=["a", "a"]), "used twice"),
    (lambda r: r.adopt("l2", ["hits"], np.zeros((2, 3))), "shape (2, 3)"),
    (lambda r: r.adopt("l2", ["hits"], np.zeros(3)), "shape (3,)"),
    (lambda r: r.counters("gpu.total", ["x"]), "name the dump's parts"),
    (lambda r: r.histogram("gpu.instances.l2", 4, 1), "name the dump's parts"),
])  # fmt: skip
def test_a_group_the_dump_could_not_show_faithfully_is_refused(register, complaint):
    with pytest.raises(ValueError, match=re.escape(complaint)):
        register(StatsRegistry())


def test_the_check_refuses_a_negative_count():
    reg = StatsRegistry()
    values = reg.counters("dram", ["reads"], count=2, instance_names=["ch0", "ch1"])
    reg.histogram("latency", 4, 10)
    reg.check()
    values[1, 0] = -3
    with pytest.raises(SimulationError, match=r"statistic dram\.ch1\.reads is -3"):
        reg.check()
