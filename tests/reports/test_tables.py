"""Tables of results documents: the seed comparison's columns, and how values are shown and
written."""

from __future__ import annotations

import csv
import math

import pytest
from rich.console import Console

from ndpsim.experiments.seeds import across_seeds
from ndpsim.reports.tables import rich_table, seed_rows, write_csv


def _doc(seed: int, speedup: float) -> dict:
    by_workload = {"a": {"speedup": speedup}, "b": {"speedup": speedup}}
    return {"dyn": by_workload, "average": {"dyn": {"speedup": speedup}},
            "meta": {"size": "tiny", "seed": seed, "workloads": ["a", "b"]}}  # fmt: skip


def test_the_seed_table_has_a_column_per_seed_then_the_spread_and_the_paper():
    columns, rows = seed_rows(across_seeds({3: _doc(3, 1.0), 4: _doc(4, 2.0)}), "speedup",
                              {"dyn": 1.149})  # fmt: skip
    assert columns == ["seed 3", "seed 4", "mean", "min", "max", "paper"]
    assert rows[0][0] == "dyn"
    assert rows[0][1] == [1.0, 2.0, pytest.approx(math.sqrt(2.0)), 1.0, 2.0, 1.149]


def test_numbers_are_rounded_text_kept_and_missing_values_dashed(tmp_path):
    rows = [("bfs", [1.234567, "8:7", None]), ("paper (average)", [0.5, "-", 2.0])]
    console = Console(width=120, record=True)
    console.print(rich_table("t", ["x", "bits", "y"], rows))
    shown = console.export_text()
    assert "1.235" in shown and "8:7" in shown and "│     - │" in shown
    write_csv(tmp_path / "t.csv", ["x", "bits", "y"], rows)
    written = list(csv.reader((tmp_path / "t.csv").open()))
    assert written == [["workload", "x", "bits", "y"], ["bfs", "1.23457", "8:7", ""],
                       ["paper (average)", "0.5", "-", "2"]]  # fmt: skip
