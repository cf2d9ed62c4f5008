"""Running a sweep's runs as Ray tasks: on a local Ray instance started for the sweep, or on a
cluster (``--ray-address`` or ``RAY_ADDRESS``). Ray is the optional extra ``ndpsim[ray]``.

Each input (workload, size, seed, chosen parameters) is interpreted once, by a task of its own,
into Ray's object store; every run of that input reads it from there (on its node, without
copying the arrays) instead of interpreting it again. A few inputs are in flight at once
(``window``), and an input is released once its runs are done, so the object store holds a few
traces, not the study's.
The tasks return rows and this process stores them as they arrive: the nodes of a cluster need
not share a file system with it. A run is therefore stored once its row reaches this process,
and a sweep killed before that runs it again when resumed.

On a cluster, every node needs ndpsim installed (the same version: a row records it), and
compiles the timing model on its first run unless its numba cache already holds it.
"""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Sequence
from typing import Any

from ndpsim.compilation import watching_compilation
from ndpsim.errors import ConfigError, NdpsimError
from ndpsim.experiments.rows import Params, Run
from ndpsim.experiments.runner import compile_timing_model
from ndpsim.sweeps.local import OnCompiling, OnDone
from ndpsim.sweeps.worker import Outcome, Task, interpret, measure, store
from ndpsim.systems.skeleton.program import Program

INSTALL = "pip install 'ndpsim[ray]'"
#: How long the driver waits for a task at a time, in seconds: a signal is handled between two
#: waits (Python runs signal handlers only between its own instructions).
_WAIT_S = 0.5


def _ray():
    try:
        import ray
    except ImportError:
        raise ConfigError(f"--backend ray needs Ray, which is not installed ({INSTALL}); "
                          "--backend local runs the same runs here") from None  # fmt: skip
    return ray


def _interpret(workload: str, size: str, seed: int,
               params: Params) -> list[Program] | NdpsimError:  # fmt: skip
    """A task: the input interpreted, or the error that gave (each of its runs reports it)."""
    try:
        return interpret(workload, size, seed, params)
    except NdpsimError as error:
        return error


def _measure(run: Run, task: Task, functional: list[Program] | NdpsimError,
             ) -> tuple[Outcome, dict[str, Any] | None]:  # fmt: skip
    """A task: one run simulated on its input, as Ray hands it over from its object store."""
    return measure(run, task, functional)


def _connect(ray, jobs: int, address: str | None) -> bool:
    """Connect to the cluster at ``address`` (else ``RAY_ADDRESS``), or start a local instance
    of ``jobs`` CPUs; whether this sweep started it (and stops it). A Ray the caller already
    started is used as it is."""
    if ray.is_initialized():
        return False
    address = address or os.environ.get("RAY_ADDRESS")
    settings = {"log_to_driver": False, "configure_logging": False}
    on_sigterm = signal.getsignal(signal.SIGTERM)
    if address:
        ray.init(address=address, **settings)
    else:
        ray.init(num_cpus=jobs, include_dashboard=False, **settings)
    if threading.current_thread() is threading.main_thread():
        # ray.init makes SIGTERM exit at once; the command's own handling (stop the runs, shut
        # Ray down, say what is stored) comes first
        signal.signal(signal.SIGTERM, on_sigterm)
    return True


def run_ray(runs: Sequence[Run], task: Task, jobs: int, address: str | None,
            on_done: OnDone, on_compiling: OnCompiling) -> None:  # fmt: skip
    """Every run of ``runs`` as a Ray task, ``max(2, jobs)`` inputs in flight at once."""
    ray = _ray()
    if not runs:
        return
    local = not (address or os.environ.get("RAY_ADDRESS") or ray.is_initialized())
    if local:  # compile once, here, rather than in every worker at once
        with watching_compilation(lambda: on_compiling(True), lambda: on_compiling(False)):
            compile_timing_model([run.config for run in runs])
    started = _connect(ray, jobs, address)
    try:
        _run(ray, runs, task, max(2, jobs), on_done)
    finally:
        if started:
            ray.shutdown()


def _run(ray, runs: Sequence[Run], task: Task, window: int, on_done: OnDone) -> None:
    interpret_task = ray.remote(num_cpus=1)(_interpret)
    measure_task = ray.remote(num_cpus=1)(_measure)
    inputs: dict[tuple[str, str, int, Params], list[Run]] = {}
    for run in runs:
        inputs.setdefault(run.input, []).append(run)
    waiting = list(inputs)
    left: dict[tuple[str, str, int], int] = {}  # runs not done, per input in flight
    pending: dict[Any, Run] = {}  # a run's task -> the run

    def start_next() -> None:
        given = waiting.pop(0)
        trace = interpret_task.remote(*given)
        left[given] = len(inputs[given])
        for run in inputs[given]:
            pending[measure_task.remote(run, task, trace)] = run
        # ``trace`` goes out of scope here: Ray frees it once its runs are done

    while waiting and len(left) < window:
        start_next()
    while pending:
        # a bounded wait, so that Ctrl-C and SIGTERM stop the sweep (and Ray) between two
        ready_list, _ = ray.wait(list(pending), num_returns=1, timeout=_WAIT_S)
        if not ready_list:
            continue
        (ready,) = ready_list
        run = pending.pop(ready)
        try:
            outcome = store(*ray.get(ready), task)
        except ray.exceptions.RayError as error:  # the task died (a node lost, out of memory)
            outcome = Outcome(run.key, f"Ray: {str(error).splitlines()[0]}", 0.0)
        on_done(run, outcome)
        left[run.input] -= 1
        if not left[run.input]:
            del left[run.input]
            if waiting:
                start_next()


__all__ = ["INSTALL", "run_ray"]
