"""A sweep: a study's plan against its result store, what is stored and what is left, and
running what is left on a backend.

The command line and the Python API both go through :func:`prepare` and :meth:`Sweep.run`;
only how they show progress differs.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ndpsim.errors import ConfigError
from ndpsim.experiments.rows import Run
from ndpsim.experiments.store import ResultStore
from ndpsim.provenance import code_provenance
from ndpsim.sweeps.expansion import Plan, expand
from ndpsim.sweeps.local import OnCompiling, OnDone, run_local
from ndpsim.sweeps.study import Study, load_study
from ndpsim.sweeps.worker import Outcome, Task

#: Where a study's results go unless told otherwise: ``results/sweep-NAME``.
RESULTS_ROOT = Path("results")
#: Where runs are executed: this machine's processes, or Ray tasks (the ``ray`` extra).
BACKENDS = ("local", "ray")


def default_out(study: Study) -> Path:
    return RESULTS_ROOT / f"sweep-{study.name}"


@dataclass
class Sweep:
    """A study's runs, those its store already holds, and the others."""

    plan: Plan
    store: ResultStore
    pending: tuple[Run, ...]
    failures: list[tuple[Run, Outcome]] = field(default_factory=list)

    @property
    def stored(self) -> int:
        return len(self.plan.runs) - len(self.pending)

    def run(self, jobs: int = 1, backend: str = "local", ray_address: str | None = None,
            on_done: OnDone | None = None,
            on_compiling: OnCompiling | None = None) -> list[tuple[Run, Outcome]]:  # fmt: skip
        """Run every pending run, ``jobs`` at a time, storing each as it ends; the runs that
        failed, with why (they are not stored: the next sweep tries them again). ``backend``
        "ray" runs them as Ray tasks, on a local instance of ``jobs`` CPUs or on the cluster
        at ``ray_address`` (default: ``RAY_ADDRESS``)."""
        if backend not in BACKENDS:
            raise ConfigError(f"--backend {backend!r}: expected one of {', '.join(BACKENDS)}")
        if jobs < 1:
            raise ConfigError(f"--jobs {jobs}: expected at least 1")
        study = self.plan.study
        task = Task(study.name, study.counters, self.store.root, code_provenance())
        self.failures = []

        def done(run: Run, outcome: Outcome) -> None:
            if outcome.error is not None:
                self.failures.append((run, outcome))
            if on_done is not None:
                on_done(run, outcome)

        compiling = on_compiling or _ignore
        if backend == "ray":
            from ndpsim.sweeps.ray_tasks import run_ray  # Ray is imported only when used

            run_ray(self.pending, task, jobs, ray_address, done, compiling)
        else:
            run_local(self.pending, task, jobs, done, compiling)
        failed = {run.key for run, _ in self.failures}
        self.pending = tuple(run for run in self.pending if run.key in failed)
        return self.failures


def _ignore(_: Any) -> None:
    pass


def prepare(study: Study | Path | str | dict[str, Any], out: Path | str | None = None) -> Sweep:
    """A study (loaded, or a file or dict to load) expanded and matched against its store
    (``out``, default ``results/sweep-NAME``)."""
    if not isinstance(study, Study):
        study = load_study(study)
    plan = expand(study)
    store = ResultStore(Path(out) if out is not None else default_out(study))
    store.remove_leftovers()
    stored = store.stored((run.key for run in plan.runs), study.counters)
    pending = tuple(run for run in plan.runs if run.key not in stored)
    return Sweep(plan, store, pending)


__all__ = ["BACKENDS", "RESULTS_ROOT", "Sweep", "default_out", "prepare"]
