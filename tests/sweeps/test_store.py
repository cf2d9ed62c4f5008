"""The result store: a run is one Parquet file, written whole or not at all; DuckDB reads them
all as the view `runs`."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from ndpsim.errors import ConfigError
from ndpsim.sweeps.store import ResultStore

KEY_A, KEY_B = "a" * 64, "b" * 64


def _row(key: str, **columns):
    return {"run_key": key, "study": "s", **columns}


def test_a_written_row_is_its_own_file_and_leaves_no_temporary(tmp_path):
    store = ResultStore(tmp_path)
    store.write(_row(KEY_A, cycles=10), ["cycles"])
    assert sorted(os.listdir(store.runs_dir)) == [f"{KEY_A}.parquet"]
    assert store.keys() == {KEY_A}


def test_a_write_that_fails_stores_nothing(tmp_path, monkeypatch):
    import pyarrow.parquet as pq

    def broken(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(pq, "write_table", broken)
    with pytest.raises(OSError, match="disk full"):
        ResultStore(tmp_path).write(_row(KEY_A, cycles=10), ["cycles"])
    assert os.listdir(tmp_path / "runs") == []


def test_temporary_files_of_dead_writers_are_removed_and_never_read(tmp_path):
    store = ResultStore(tmp_path)
    store.write(_row(KEY_A, cycles=1), ["cycles"])
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True).stdout.strip()  # fmt: skip
    (store.runs_dir / f".{KEY_B}.{dead}.tmp").write_bytes(b"PAR1 half a file")
    (store.runs_dir / f".{KEY_B}.{os.getpid()}.tmp").write_bytes(b"being written")
    assert store.keys() == {KEY_A}
    assert store.remove_leftovers() == 1
    assert sorted(os.listdir(store.runs_dir)) == [
        f".{KEY_B}.{os.getpid()}.tmp", f"{KEY_A}.parquet"
    ]  # fmt: skip


def test_a_run_counts_as_stored_only_with_every_counter_asked_for(tmp_path):
    store = ResultStore(tmp_path)
    store.write(_row(KEY_A, cycles=1), ["cycles"])
    store.write(_row(KEY_B, cycles=1, ipc=2.0), ["cycles", "ipc"])
    assert store.stored([KEY_A, KEY_B], ["cycles"]) == {KEY_A, KEY_B}
    assert store.stored([KEY_A, KEY_B], ["cycles", "ipc"]) == {KEY_B}
    (store.runs_dir / f"{KEY_A}.parquet").write_bytes(b"not parquet")
    assert store.stored([KEY_A, KEY_B], ["cycles"]) == {KEY_B}  # unreadable: run again


def test_the_runs_view_unites_rows_with_different_columns(tmp_path):
    store = ResultStore(tmp_path)
    store.write(_row(KEY_A, **{"sm.count": 16, "ndp.ratio": None, "summary.ipc": 1.5}), [])
    store.write(_row(KEY_B, **{"sm.count": 32, "ndp.ratio": 0.5, "summary.ipc": 2}), [])
    rows = store.query('SELECT "sm.count", "ndp.ratio", "summary.ipc" FROM runs ORDER BY 1')
    assert rows.to_pylist() == [
        {"sm.count": 16, "ndp.ratio": None, "summary.ipc": 1.5},
        {"sm.count": 32, "ndp.ratio": 0.5, "summary.ipc": 2.0},
    ]


def test_bad_sql_and_an_empty_store_are_clear_errors(tmp_path):
    store = ResultStore(tmp_path)
    with pytest.raises(ConfigError, match="no stored runs"):
        store.query("SELECT * FROM runs")
    store.write(_row(KEY_A, **{"summary.ipc": 1.0}), [])
    with pytest.raises(ConfigError, match=r'Referenced table "summary" .*a dotted column is '
                       r'quoted: "summary.ipc"'):  # fmt: skip
        store.query("SELECT summary.ipc FROM runs")
    with pytest.raises(ConfigError, match=r"--query: Parser Error: .*selec"):
        store.query("selec 1")
