"""Averaging per-workload metrics: speedups geometrically, the rest arithmetically."""

from __future__ import annotations

import pytest

from ndpsim.experiments.averages import averages, geomean, mean_of, which_mean


def test_a_geometric_mean_of_equal_values_is_that_value():
    # exp(mean(log x)) rounds to 0.5109999999999999 here without the bound
    assert geomean([0.511] * 3) == 0.511


def test_speedups_are_averaged_geometrically_and_other_metrics_arithmetically():
    assert mean_of("speedup", [1.0, 4.0]) == pytest.approx(2.0)
    assert mean_of("energy", [1.0, 4.0]) == pytest.approx(2.5)
    avg = averages({"dyn": {"a": {"speedup": 1.0, "energy": 1.0},
                            "b": {"speedup": 4.0, "energy": 4.0}}})  # fmt: skip
    assert avg["dyn"] == {"energy": pytest.approx(2.5), "speedup": pytest.approx(2.0)}


def test_a_document_says_the_mean_each_metric_takes():
    assert which_mean("workloads", geometric={"speedup"}) == {
        "speedup": "geometric mean over workloads",
        "other metrics": "arithmetic mean over workloads",
    }
