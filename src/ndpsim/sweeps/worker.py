"""One run of a sweep, as a worker does it: interpret the workload, or each workload of a mix
(or take what it interpreted last), simulate, and turn the result into its row.

A local worker stores the row itself (:func:`execute`), not the process that hands out the
runs, so that a run counts as finished only once its row is on disk: a sweep whose coordinator
is killed loses at most the runs in flight. A run that fails is reported and not stored, so
the next sweep tries it again; it never stops the others.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ndpsim.errors import NdpsimError, WorkloadError
from ndpsim.experiments.rows import Params, Run, row_of
from ndpsim.experiments.store import ResultStore
from ndpsim.systems import build_system, run_programs_on
from ndpsim.systems.skeleton.program import Program
from ndpsim.workloads import kernel_module, mix_parts, run_workload


@dataclass(frozen=True)
class Task:
    """What every run of a sweep shares: where rows go and what they keep."""

    study: str
    counters: tuple[str, ...]
    store_root: Path
    provenance: dict[str, Any]  # code_provenance(), taken once by the coordinator


@dataclass(frozen=True)
class Outcome:
    """How a run ended: stored, or failed with a one-line reason."""

    key: str
    error: str | None
    seconds: float  # the worker's time for it, interpretation (when it did it) included


_last: tuple[tuple[Any, ...], list[Program] | NdpsimError] | None = None


def interpret(workload: str, size: str, seed: int, params: Params = ()) -> list[Program]:
    """The workload interpreted (``params``: its parameters given values of their own), its
    output checked against its reference: its program, or a mix's (``bfs,spmv``: each part
    at its size's parameters), to run at once."""
    programs = []
    for name in mix_parts(workload):
        functional = run_workload(name, size, seed, params=dict(params))
        if not functional.check.passed:
            raise WorkloadError(f"{name} ({size}, seed {seed}) differs from its reference: "
                                f"{functional.check.detail}")  # fmt: skip
        programs.append(Program(name, functional.traces,
                                kernel_module(functional.workload.module_name),
                                functional.memory))  # fmt: skip
    return programs


def interpreted(workload: str, size: str, seed: int, params: Params = ()) -> list[Program]:
    """:func:`interpret`, keeping the last one (or the error it gave): runs come input by
    input, so a worker interprets each input once, not once per run."""
    global _last
    if _last is None or _last[0] != (workload, size, seed, params):
        _last = None  # free the previous trace before making the next
        try:
            functional: list[Program] | NdpsimError = interpret(workload, size, seed, params)
        except NdpsimError as error:
            functional = error
        _last = ((workload, size, seed, params), functional)
    if isinstance(_last[1], NdpsimError):
        raise _last[1]
    return _last[1]


def measure(run: Run, task: Task,
            functional: list[Program] | NdpsimError | None = None,
            ) -> tuple[Outcome, dict[str, Any] | None]:  # fmt: skip
    """Simulate ``run``: its row (not stored), or why it failed. ``functional`` is its
    interpreted workload (or the error interpreting it gave) when the caller has it, else it
    is interpreted here."""
    start = time.perf_counter()
    try:
        if isinstance(functional, NdpsimError):
            raise functional
        programs = functional or interpreted(*run.input)
        result = run_programs_on(build_system(run.config), programs, seed=run.seed)
        row = row_of(run, task.study, result.as_dict(), result.wall_seconds, task.counters,
                     task.provenance)  # fmt: skip
        return Outcome(run.key, None, time.perf_counter() - start), row
    except NdpsimError as failure:
        error = str(failure)
    except Exception as failure:  # a bug; reported with the run, the other runs go on
        error = f"{type(failure).__name__}: {failure}"
    return Outcome(run.key, error, time.perf_counter() - start), None


def store(outcome: Outcome, row: dict[str, Any] | None, task: Task) -> Outcome:
    """Store a measured run's row; the outcome, failed if the row could not be written."""
    if row is None:
        return outcome
    try:
        ResultStore(task.store_root).write(row, task.counters)
    except OSError as error:
        return Outcome(outcome.key, f"storing its row: {error}", outcome.seconds)
    return outcome


def execute(run: Run, task: Task) -> Outcome:
    """Simulate ``run`` and store its row, here: what a local worker does."""
    return store(*measure(run, task), task)


__all__ = ["Outcome", "Task", "execute", "interpret", "interpreted", "measure", "store"]
