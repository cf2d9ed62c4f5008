"""A sweep killed with SIGKILL at an arbitrary moment and started again loses no finished run,
runs none twice, and ends with exactly the rows of a sweep never interrupted."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

from ndpsim.experiments.store import ResultStore
from ndpsim.sweeps.api import sweep

STUDY = """\
name = "killed"
systems = ["tom-baseline", "tom-ndp"]
workloads = ["vadd", "rd", "hist", "sp"]
sizes = ["tiny"]
seeds = [0, 1]
counters = ["time_ps", "summary", "energy_nj.total"]
[grid]
"links.host_to_cube_gbps" = [10.0, 20.0, 40.0, 60.0, 80.0]
"""
RUNS = 2 * 4 * 2 * 5
#: Columns that say when and how fast a run went, not what it measured.
TIMING = ("finished", "wall_seconds")


def _sweep_command(study, out) -> list[str]:
    return [sys.executable, "-c", "from ndpsim.cli.main import app; app()", "sweep",
            str(study), "--out", str(out), "--jobs", "2"]  # fmt: skip


def _rows(out) -> dict[str, dict]:
    rows = ResultStore(out).query("SELECT * FROM runs").to_pylist()
    return {r["run_key"]: {k: v for k, v in r.items() if k not in TIMING} for r in rows}


def test_a_sweep_killed_mid_run_resumes_without_losing_or_repeating_a_run(tmp_path):
    study = tmp_path / "study.toml"
    study.write_text(STUDY)
    out = tmp_path / "killed"
    runs = out / "runs"
    log = (tmp_path / "first.log").open("w")
    first = subprocess.Popen(_sweep_command(study, out), stdout=log, stderr=subprocess.STDOUT,
                             start_new_session=True)  # fmt: skip
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and first.poll() is None:
        if runs.is_dir() and sum(n.endswith(".parquet") for n in os.listdir(runs)) >= 8:
            break
        time.sleep(0.005)
    assert first.poll() is None, "the sweep ended before it could be killed"
    os.killpg(first.pid, signal.SIGKILL)  # the coordinator and its workers, mid-run
    first.wait()
    stored = ResultStore(out).keys()
    assert 8 <= len(stored) < RUNS

    second = subprocess.run(_sweep_command(study, out), capture_output=True, text=True,
                            timeout=300, check=False)  # fmt: skip
    assert second.returncode == 0, second.stdout + second.stderr
    left = RUNS - len(stored)
    assert f"{len(stored)} stored in {out}, {left} to run" in second.stdout
    assert f"{left} runs stored in" in second.stdout  # only those ran
    assert stored <= ResultStore(out).keys()
    assert not [n for n in os.listdir(runs) if not n.endswith(".parquet")]  # no leftovers

    reference = sweep(study, out=tmp_path / "uninterrupted")
    assert len(reference.keys()) == RUNS
    assert _rows(out) == _rows(reference.root)
