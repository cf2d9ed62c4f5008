"""Sweeps from Python: ``sweep(study)`` runs what its store lacks and returns the store,
``results(path).query(sql)`` reads any store (a sweep's or a reproduction's). What ``ndpsim
sweep`` and ``ndpsim results`` do, without the printing."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ndpsim.errors import ConfigError, SimulationError
from ndpsim.experiments.rows import Run
from ndpsim.experiments.store import ResultStore
from ndpsim.sweeps.study import load_study
from ndpsim.sweeps.sweep import default_out, prepare
from ndpsim.sweeps.worker import Outcome


def sweep(study: Path | str | dict[str, Any], *, jobs: int = 1, out: Path | str | None = None,
          backend: str = "local", ray_address: str | None = None,
          on_done=None) -> ResultStore:  # fmt: skip
    """Run every run of ``study`` (a TOML file, or a dict of its keys) that its result store
    (``out``, default ``results/sweep-NAME``) lacks, ``jobs`` at a time, and return the store.
    ``backend="ray"`` runs them as Ray tasks (a local instance, or the cluster at
    ``ray_address`` or ``RAY_ADDRESS``). ``on_done(run, outcome)`` follows each run. Runs that
    fail are not stored; once the others ran, a SimulationError names them."""
    work = prepare(study, out)
    failures = work.run(jobs=jobs, backend=backend, ray_address=ray_address, on_done=on_done)
    if failures:
        raise SimulationError(_failed(failures))
    return work.store


def _failed(failures: list[tuple[Run, Outcome]]) -> str:
    first, outcome = failures[0]
    more = f" (and {len(failures) - 1} more)" if len(failures) > 1 else ""
    return f"{len(failures)} runs failed: {first.label()}: {outcome.error}{more}"


def results(path: Path | str) -> ResultStore:
    """A result store: the directory of a sweep or a reproduction, or a study file (whose
    default directory it names)."""
    path = Path(path)
    if path.suffix == ".toml" and path.is_file():
        return ResultStore(default_out(load_study(path)))
    if not path.is_dir():
        raise ConfigError(f"{path}: neither a result directory (a sweep's or a reproduction's) "
                          "nor a study file")  # fmt: skip
    return ResultStore(path)


__all__ = ["results", "sweep"]
