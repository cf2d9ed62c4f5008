"""The local backend: workers give the rows one process gives, and a worker that dies stops
the sweep with a clear error, keeping what was stored."""

from __future__ import annotations

import os

import pytest

from ndpsim.errors import ConfigError, SimulationError
from ndpsim.sweeps import local
from ndpsim.sweeps.sweep import prepare

STUDY = {
    "name": "local",
    "systems": ["tom-baseline"],
    "workloads": ["vadd", "rd"],
    "sizes": ["tiny"],
    "counters": ["core_cycles", "energy_nj.total"],
    "grid": {"sm.count": [32, 64]},
}


def _rows(store) -> dict[str, dict]:
    rows = store.query("SELECT * FROM runs").to_pylist()
    return {r["run_key"]: {k: v for k, v in r.items() if k not in ("finished", "wall_seconds")}
            for r in rows}  # fmt: skip


def test_two_workers_store_the_rows_one_process_does(tmp_path):
    alone, pooled = prepare(STUDY, tmp_path / "one"), prepare(STUDY, tmp_path / "two")
    assert alone.run(jobs=1) == [] and pooled.run(jobs=2) == []
    assert len(_rows(pooled.store)) == 4 and _rows(pooled.store) == _rows(alone.store)


def _die(run, task):
    os._exit(9)  # a worker killed mid-run (the kernel's OOM killer, say)


def test_a_worker_that_dies_stops_the_sweep_with_a_clear_error(tmp_path, monkeypatch):
    monkeypatch.setattr(local, "execute", _die)
    with pytest.raises(SimulationError, match=r"a worker process died .*run the sweep again"):
        prepare(STUDY, tmp_path).run(jobs=2)


def test_a_sweep_runs_a_mix_and_stores_it_under_its_programs(tmp_path):
    study = {
        "name": "mix",
        "systems": ["gpu-baseline"],
        "workloads": ["vadd", "vadd,rd"],
        "sizes": ["tiny"],
        "counters": ["core_cycles"],
        "grid": {"sm.count": [16]},
    }
    sweep = prepare(study, tmp_path)
    assert sweep.run(jobs=1) == []
    rows = sweep.store.query("SELECT workload, core_cycles FROM runs ORDER BY workload")
    workloads = rows.column("workload").to_pylist()
    assert workloads == ["vadd", "vadd,rd"]  # the mix's row names both programs
    alone, mixed = rows.column("core_cycles").to_pylist()
    assert mixed >= alone > 0  # the mix runs RD as well, on half the SMs


def test_a_study_refuses_a_mix_of_an_unknown_workload(tmp_path):
    study = {**STUDY, "workloads": ["vadd,nope"]}
    with pytest.raises(ConfigError, match="unknown workload 'nope'"):
        prepare(study, tmp_path)
