"""``--backend ray``: the same runs as the local backend, run for run, as Ray tasks on a local
instance; without Ray installed, a clear error saying how to get it."""

from __future__ import annotations

import sys

import pytest

from ndpsim.errors import ConfigError
from ndpsim.sweeps.api import sweep

STUDY = {
    "name": "ray-equality",
    "systems": ["tom-baseline", "tom-ndp"],
    "workloads": ["vadd", "rd"],
    "sizes": ["tiny"],
    "seeds": [0, 1],
    "counters": ["time_ps", "summary", "energy_nj"],
    "grid": {"links.host_to_cube_gbps": [20.0, 40.0]},
}
TIMING = ("finished", "wall_seconds")


def _rows(store) -> dict[str, dict]:
    rows = store.query("SELECT * FROM runs").to_pylist()
    return {r["run_key"]: {k: v for k, v in r.items() if k not in TIMING} for r in rows}


def test_ray_tasks_store_the_rows_the_local_backend_does(tmp_path):
    pytest.importorskip("ray")
    local = sweep(STUDY, out=tmp_path / "local")
    done = []
    on_ray = sweep(STUDY, out=tmp_path / "ray", backend="ray", jobs=2,
                   on_done=lambda run, outcome: done.append(outcome))  # fmt: skip
    assert len(done) == 16 and all(o.error is None for o in done)
    assert _rows(on_ray) == _rows(local)


def test_without_ray_the_backend_says_how_to_install_it(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)  # what an absent package imports as
    with pytest.raises(ConfigError, match=r"--backend ray needs Ray, which is not installed "
                       r"\(pip install 'ndpsim\[ray\]'\)"):  # fmt: skip
        sweep(STUDY, out=tmp_path / "ray", backend="ray")
