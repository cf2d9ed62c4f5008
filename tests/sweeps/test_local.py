"""The local backend: workers give the rows one process gives, and a worker that dies stops
the sweep with a clear error, keeping what was stored."""

from __future__ import annotations

import os

import pytest

from ndpsim.errors import SimulationError
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
