"""Stopping a sweep or a reproduction leaves nothing running: a real ``ndpsim sweep --jobs 2``
and a real ``ndpsim reproduce --jobs 2``, in a process of their own, are sent SIGKILL, SIGTERM or
Ctrl-C's SIGINT once their workers are busy; within 5 s no process of the job remains, and every
run stored is whole."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest

pytestmark = pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads processes in /proc")

#: How long a job may take to start its workers (loading the compiled model, or compiling it
#: on a machine whose cache is empty), and how long its processes may take to end.
START_S, END_S = 600, 5


def _processes(marker: str) -> list[int]:
    """The processes whose command line holds ``marker`` (a job's own output directory; its
    forked workers share its command line)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if marker in command and state != "Z":  # a zombie has ended, awaiting its parent
            found.append(int(entry.name))
    return found


def _interruptible() -> None:
    """In the job's process before it starts: Ctrl-C's default, as in a terminal. A process
    started in the background by a non-interactive shell (as CI may run the suite) inherits
    SIGINT ignored, and Python then leaves it ignored."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _start(arguments: list[str], out: Path, log: Path) -> subprocess.Popen:
    """The job, started once its coordinator and two workers run and a run is stored."""
    job = subprocess.Popen([sys.executable, "-m", "ndpsim", *arguments, "--jobs", "2",
                            "--out", str(out)], stdout=log.open("w"), stderr=subprocess.STDOUT,
                           start_new_session=True, preexec_fn=_interruptible)  # fmt: skip
    deadline = time.monotonic() + START_S
    while time.monotonic() < deadline:
        if job.poll() is not None:
            raise AssertionError(f"the job ended before it was stopped:\n{log.read_text()}")
        stored = list((out / "runs").glob("*.parquet")) if (out / "runs").is_dir() else []
        if len(_processes(str(out))) >= 3 and stored:
            return job
        time.sleep(0.2)
    job.kill()
    raise AssertionError(f"the job did not start its workers in {START_S} s")


def _stop_and_check(job: subprocess.Popen, how: signal.Signals, out: Path, log: Path) -> None:
    if how == signal.SIGINT:  # what a terminal's Ctrl-C does: the whole job gets it
        os.killpg(job.pid, signal.SIGINT)
    else:
        job.send_signal(how)
    deadline = time.monotonic() + END_S
    while _processes(str(out)) and time.monotonic() < deadline:
        time.sleep(0.1)
    left = _processes(str(out))
    for pid in left:  # clean up before failing
        os.kill(pid, signal.SIGKILL)
    assert not left, f"{len(left)} processes of the job outlived it by {END_S} s"
    status = job.wait(1)
    stored = sorted((out / "runs").glob("*.parquet"))
    assert stored and all(pq.read_table(path).num_rows == 1 for path in stored)
    if how == signal.SIGKILL:
        assert status == -signal.SIGKILL
        return
    assert status == 128 + how, log.read_text()
    said = log.read_text()
    assert f"stopped by {how.name}: {len(stored)} runs are stored in" in " ".join(said.split())


STUDY = """\
name = "stopping"
systems = ["tom-baseline", "tom-ndp"]
workloads = ["vadd", "rd", "bfs", "sp"]
sizes = ["tiny"]
[grid]
"sm.count" = [8, 16, 24, 32, 40, 48, 56, 64]
"""


@pytest.mark.parametrize("how", [signal.SIGKILL, signal.SIGTERM, signal.SIGINT],
                         ids=lambda s: s.name)  # fmt: skip
def test_a_stopped_sweep_leaves_no_worker_and_keeps_its_runs(tmp_path, how):
    study = tmp_path / "stopping.toml"
    study.write_text(textwrap.dedent(STUDY))
    out, log = tmp_path / "sweep-out", tmp_path / "sweep.log"
    job = _start(["sweep", str(study)], out, log)
    _stop_and_check(job, how, out, log)


@pytest.mark.parametrize("how", [signal.SIGKILL, signal.SIGTERM, signal.SIGINT],
                         ids=lambda s: s.name)  # fmt: skip
def test_a_stopped_reproduction_leaves_no_worker_and_keeps_its_runs(tmp_path, how):
    out, log = tmp_path / "tom-out", tmp_path / "tom.log"
    job = _start(["reproduce", "tom", "--size", "tiny"], out, log)
    _stop_and_check(job, how, out, log)
