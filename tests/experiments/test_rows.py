"""A run's counters as columns: a path to a value, a table expanded leaf by leaf, a counter
missing from the results an error naming the closest one unless it is marked optional."""

from __future__ import annotations

import pytest

from ndpsim.errors import ConfigError
from ndpsim.experiments.rows import counter_columns

RESULTS = {
    "time_ps": 1000,
    "summary": {"ipc": 1.5, "links": {"tx": {"gbps": 2.0, "bytes": 64}}, "parts": [1, 2]},
    "energy_nj": {"dram": 1.0, "total": 3.0},
}


def test_a_table_is_kept_leaf_by_leaf_and_lists_as_json():
    columns = counter_columns(RESULTS, ["time_ps", "summary"], "gpu")
    assert columns == {
        "time_ps": 1000,
        "summary.ipc": 1.5,
        "summary.links.tx.gbps": 2.0,
        "summary.links.tx.bytes": 64,
        "summary.parts": "[1, 2]",
    }


def test_a_missing_counter_names_the_closest_one():
    with pytest.raises(ConfigError, match=r"counter 'summary.ipcc': no 'ipcc' in 'summary' in "
                       r"the results of system 'gpu' \(did you mean 'ipc'\?\)"):  # fmt: skip
        counter_columns(RESULTS, ["summary.ipcc"], "gpu")
    with pytest.raises(ConfigError, match=r"'time_ps' is a value .*not a table"):
        counter_columns(RESULTS, ["time_ps.x"], "gpu")


def test_an_optional_counter_a_system_lacks_is_left_out():
    columns = counter_columns(RESULTS, ["summary.offload?", "energy_nj.total?"], "gpu")
    assert columns == {"energy_nj.total": 3.0}
