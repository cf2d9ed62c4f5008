"""The result store of finished runs: a run is one Parquet file, written whole or not at all,
which DuckDB reads with the others as the view `runs`; a reproduction's runs are taken back
from it exactly, and missed whenever what they depend on changes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

import ndpsim
from ndpsim.config import preset_path
from ndpsim.errors import ConfigError
from ndpsim.experiments import runner, store
from ndpsim.experiments.rows import RUN_COLUMN
from ndpsim.experiments.runner import Variant, run_experiment
from ndpsim.experiments.store import ResultStore, run_identity, run_key
from ndpsim.systems import load_system_config

KEY_A, KEY_B = "a" * 64, "b" * 64
BASELINE = Variant("baseline", "tom-baseline", {})
NDP = Variant("ctrl-bmap", "tom-ndp", {})


def _row(key: str, **columns):
    return {"run_key": key, "study": "s", **columns}


def _dead_pid() -> str:
    """The id of a process that has ended."""
    return subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True).stdout.strip()  # fmt: skip


# The store: files, atomic writes, the view `runs`


def test_a_written_row_is_its_own_file_and_leaves_no_temporary(tmp_path):
    results = ResultStore(tmp_path)
    results.write(_row(KEY_A, cycles=10), ["cycles"])
    assert sorted(os.listdir(results.runs_dir)) == [f"{KEY_A}.parquet"]
    assert results.keys() == {KEY_A}
    assert results.read(KEY_A) == _row(KEY_A, cycles=10) and results.read(KEY_B) is None


def test_a_write_that_fails_stores_nothing(tmp_path, monkeypatch):
    import pyarrow.parquet as pq

    def broken(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(pq, "write_table", broken)
    with pytest.raises(OSError, match="disk full"):
        ResultStore(tmp_path).write(_row(KEY_A, cycles=10), ["cycles"])
    assert os.listdir(tmp_path / "runs") == []


def test_temporary_files_of_dead_writers_are_removed_and_never_read(tmp_path):
    results = ResultStore(tmp_path)
    results.write(_row(KEY_A, cycles=1), ["cycles"])
    (results.runs_dir / f".{KEY_B}.{_dead_pid()}.tmp").write_bytes(b"PAR1 half a file")
    (results.runs_dir / f".{KEY_B}.{os.getpid()}.tmp").write_bytes(b"being written")
    assert results.keys() == {KEY_A}
    assert results.remove_leftovers() == 1
    assert sorted(os.listdir(results.runs_dir)) == [
        f".{KEY_B}.{os.getpid()}.tmp", f"{KEY_A}.parquet"
    ]  # fmt: skip


@pytest.mark.skipif(not os.path.isdir("/proc"), reason="zombies are told from /proc")
def test_the_temporary_file_of_a_writer_ended_but_not_yet_reaped_is_removed(tmp_path):
    results = ResultStore(tmp_path)
    results.runs_dir.mkdir()
    ended = subprocess.Popen([sys.executable, "-c", "pass"])
    stat = Path(f"/proc/{ended.pid}/stat")
    while stat.read_text().rpartition(")")[2].split()[0] != "Z":
        time.sleep(0.01)  # until it has ended; not waited for, it stays a zombie
    (results.runs_dir / f".{KEY_A}.{ended.pid}.tmp").write_bytes(b"PAR1 half a file")
    assert results.remove_leftovers() == 1
    ended.wait()


def test_a_run_counts_as_stored_only_with_every_counter_asked_for(tmp_path):
    results = ResultStore(tmp_path)
    results.write(_row(KEY_A, cycles=1), ["cycles"])
    results.write(_row(KEY_B, cycles=1, ipc=2.0), ["cycles", "ipc"])
    assert results.stored([KEY_A, KEY_B], ["cycles"]) == {KEY_A, KEY_B}
    assert results.stored([KEY_A, KEY_B], ["cycles", "ipc"]) == {KEY_B}
    (results.runs_dir / f"{KEY_A}.parquet").write_bytes(b"not parquet")
    assert results.stored([KEY_A, KEY_B], ["cycles"]) == {KEY_B}  # unreadable: run again


def test_the_runs_view_unites_rows_with_different_columns(tmp_path):
    results = ResultStore(tmp_path)
    results.write(_row(KEY_A, **{"sm.count": 16, "ndp.ratio": None, "summary.ipc": 1.5}), [])
    results.write(_row(KEY_B, **{"sm.count": 32, "ndp.ratio": 0.5, "summary.ipc": 2}), [])
    rows = results.query('SELECT "sm.count", "ndp.ratio", "summary.ipc" FROM runs ORDER BY 1')
    assert rows.to_pylist() == [
        {"sm.count": 16, "ndp.ratio": None, "summary.ipc": 1.5},
        {"sm.count": 32, "ndp.ratio": 0.5, "summary.ipc": 2.0},
    ]


def test_bad_sql_and_an_empty_store_are_clear_errors(tmp_path):
    results = ResultStore(tmp_path)
    with pytest.raises(ConfigError, match="no stored runs"):
        results.query("SELECT * FROM runs")
    results.write(_row(KEY_A, **{"summary.ipc": 1.0}), [])
    with pytest.raises(ConfigError, match=r'Referenced table "summary" .*a dotted column is '
                       r'quoted: "summary.ipc"'):  # fmt: skip
        results.query("SELECT summary.ipc FROM runs")
    with pytest.raises(ConfigError, match=r"--query: Parser Error: .*selec"):
        results.query("selec 1")


# A reproduction's runs in the store


@pytest.fixture
def counted(monkeypatch):
    """The workloads interpreted and the systems simulated, in order."""
    calls: list[str] = []
    interpret, build = runner.run_workload, runner.build_system

    def run_workload(name, *args, **kwargs):
        calls.append(f"interpret {name}")
        return interpret(name, *args, **kwargs)

    def build_system(config):
        system = build(config)
        run = system.run

        def counted_run(*args, **kwargs):
            calls.append(f"simulate {config.name}")
            return run(*args, **kwargs)

        system.run = counted_run
        return system

    monkeypatch.setattr(runner, "run_workload", run_workload)
    monkeypatch.setattr(runner, "build_system", build_system)
    return calls


def _run(tmp_path, variants, reuse=True, seed=0):
    return run_experiment(["vadd"], "tiny", seed, variants, processes=1,
                          store=ResultStore(tmp_path), reuse=reuse, study="tom")  # fmt: skip


def _without_reuse_flags(runs):
    return {w: {v: {k: x for k, x in r.items() if k != "reused"} for v, r in by.items()}
            for w, by in runs.items()}  # fmt: skip


def _stored_file(tmp_path, variant=BASELINE):
    config = load_system_config(variant.preset, variant.overrides)
    return ResultStore(tmp_path).path(run_key(run_identity("vadd", "tiny", 0, config)))


def test_a_reproduction_run_twice_simulates_nothing_the_second_time(tmp_path, counted):
    first = _run(tmp_path, [BASELINE, NDP])
    assert counted == ["interpret vadd", "simulate tom-baseline", "simulate tom-ndp"]
    assert not any(r["reused"] for r in first["vadd"].values())
    counted.clear()
    second = _run(tmp_path, [BASELINE, NDP])
    assert counted == []
    assert all(r["reused"] for r in second["vadd"].values())
    assert _without_reuse_flags(second) == _without_reuse_flags(first)


def test_a_reproductions_rows_are_queried_as_a_sweeps_are(tmp_path, counted):
    runs = _run(tmp_path, [BASELINE, NDP])
    table = ndpsim.results(tmp_path).query(
        'SELECT study, system, preset, workload, size, seed, time_ps, "summary.ipc", '
        '"energy_nj.total", wall_seconds, ndpsim_version, git_revision, config_hash, '
        f"{RUN_COLUMN} FROM runs ORDER BY system"
    )
    rows = table.to_pylist()
    assert [(r["study"], r["system"], r["preset"]) for r in rows] == [
        ("tom", "baseline", "tom-baseline"), ("tom", "ctrl-bmap", "tom-ndp")
    ]  # fmt: skip
    for row in rows:
        run = runs["vadd"][row["system"]]
        assert (row["workload"], row["size"], row["seed"]) == ("vadd", "tiny", 0)
        assert row["time_ps"] == run["time_ps"] and row["summary.ipc"] == run["summary"]["ipc"]
        assert row["energy_nj.total"] == run["energy_nj"]["total"]
        assert row["wall_seconds"] == run["wall_seconds"] and row["ndpsim_version"]
        assert len(row["config_hash"]) == 16
        assert json.loads(row[RUN_COLUMN]) == {k: v for k, v in run.items() if k != "reused"}


def test_only_the_runs_not_stored_are_simulated(tmp_path, counted):
    _run(tmp_path, [BASELINE])
    counted.clear()
    runs = _run(tmp_path, [BASELINE, NDP])
    assert counted == ["interpret vadd", "simulate tom-ndp"]
    assert runs["vadd"]["baseline"]["reused"] and not runs["vadd"]["ctrl-bmap"]["reused"]


def test_a_changed_key_seed_or_simulator_misses_the_store(tmp_path, counted, monkeypatch):
    _run(tmp_path, [NDP])
    counted.clear()
    _run(tmp_path, [Variant("ctrl-bmap", "tom-ndp", {"ndp": {"pcie_latency_ns": 500}})])
    assert counted == ["interpret vadd", "simulate tom-ndp"]
    counted.clear()
    _run(tmp_path, [NDP], seed=1)
    assert counted == ["interpret vadd", "simulate tom-ndp"]
    counted.clear()
    monkeypatch.setattr(store, "code_fingerprint", lambda: "an edited simulator")
    _run(tmp_path, [NDP])
    assert counted == ["interpret vadd", "simulate tom-ndp"]


def test_the_name_of_a_variant_does_not_matter_its_configuration_does(tmp_path, counted):
    _run(tmp_path, [NDP])
    counted.clear()
    _run(tmp_path, [Variant("renamed", "tom-ndp", {})])
    assert counted == []


def test_fresh_simulates_everything_again_and_stores_it(tmp_path, counted):
    _run(tmp_path, [BASELINE])
    counted.clear()
    runs = _run(tmp_path, [BASELINE], reuse=False)
    assert counted == ["interpret vadd", "simulate tom-baseline"]
    assert not runs["vadd"]["baseline"]["reused"]


def test_a_damaged_file_is_simulated_again_with_a_warning_and_replaced(tmp_path, counted):
    _run(tmp_path, [BASELINE])
    stored = _stored_file(tmp_path)
    stored.write_bytes(stored.read_bytes()[:100])
    counted.clear()
    with pytest.warns(UserWarning, match="stored run unreadable"):
        runs = _run(tmp_path, [BASELINE])
    assert counted == ["interpret vadd", "simulate tom-baseline"]
    row = ResultStore(tmp_path).read(stored.stem)
    assert json.loads(row[RUN_COLUMN]) == {
        k: v for k, v in runs["vadd"]["baseline"].items() if k != "reused"
    }


def test_a_file_named_for_another_run_is_not_trusted(tmp_path, counted):
    _run(tmp_path, [BASELINE], seed=7)
    seven = ResultStore(tmp_path).keys()
    (tmp_path / "runs" / f"{seven.pop()}.parquet").rename(_stored_file(tmp_path))
    counted.clear()
    with pytest.warns(UserWarning, match="run_key differs from its file's name"):
        _run(tmp_path, [BASELINE])
    assert counted == ["interpret vadd", "simulate tom-baseline"]


def test_a_run_killed_mid_write_is_simulated_again_and_its_leftover_removed(tmp_path, counted):
    _run(tmp_path, [BASELINE])
    stored = _stored_file(tmp_path)
    leftover = stored.with_name(f".{stored.stem}.{_dead_pid()}.tmp")
    stored.rename(leftover)
    leftover.write_bytes(leftover.read_bytes()[:100])  # what a writer killed mid-write leaves
    counted.clear()
    runs = _run(tmp_path, [BASELINE])  # no warning: the leftover is not a stored run
    assert counted == ["interpret vadd", "simulate tom-baseline"]
    assert not runs["vadd"]["baseline"]["reused"]
    assert sorted(os.listdir(tmp_path / "runs")) == [stored.name]


def test_a_user_dram_preset_is_part_of_the_identity(tmp_path):
    """A preset of the user's own lies outside the package: its contents must count."""
    source = load_system_config("tom-baseline").memory.dram
    mine = tmp_path / "mine.toml"
    mine.write_text(preset_path("dram", source).read_text())
    config = load_system_config("tom-baseline", {"memory": {"dram": str(mine)}})
    before = run_identity("vadd", "tiny", 0, config)
    assert "\nCL = 11\n" in mine.read_text()
    mine.write_text(mine.read_text().replace("\nCL = 11\n", "\nCL = 12\n"))
    after = run_identity("vadd", "tiny", 0, config)
    assert run_key(before) != run_key(after)


def test_workloads_whose_runs_are_all_stored_need_no_worker(tmp_path, counted, monkeypatch):
    _run(tmp_path, [BASELINE])

    def no_pool(*args, **kwargs):
        raise AssertionError("a worker pool was started for stored runs")

    monkeypatch.setattr(runner, "ProcessPoolExecutor", no_pool)
    counted.clear()
    runs = run_experiment(["vadd"], "tiny", 0, [BASELINE], processes=2,
                          store=ResultStore(tmp_path))  # fmt: skip
    assert counted == [] and runs["vadd"]["baseline"]["reused"]
