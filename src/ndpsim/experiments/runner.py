"""Running an experiment's (workload, variant) pairs: each workload is interpreted once and
simulated on every variant, workloads spread over worker processes.

A worker returns plain data (the run summaries and energies), never the traces, so only small
results cross process boundaries. Before the workers share out the workloads, one of them
compiles the timing model of every system kind the variants use (or loads it from numba's
on-disk cache): on a machine that has not compiled it yet, every worker would otherwise compile
it at once, where one compilation serves them all. The workers raise a shared flag
when they compile, so the caller can say why the warm-up takes minutes. The caller looks up
the runs a :class:`~ndpsim.experiments.store.ResultStore` already holds and gives the workers
only the others, which store each run as it ends: a row as a sweep's (the default counters as
columns, queried with ``ndpsim results``) that also holds the whole run as JSON text, which is
what is taken back.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from typing import Any

from ndpsim.compilation import (
    CompilationWatcher,
    watch_compilation_for_good,
    watching_compilation,
)
from ndpsim.experiments.rows import DEFAULT_COUNTERS, RUN_COLUMN, Params, Run, row_of
from ndpsim.experiments.store import ResultStore, config_hash, run_identity, run_key
from ndpsim.processes import die_with_parent, stop_pool
from ndpsim.provenance import code_provenance
from ndpsim.systems import build_system, load_system_config
from ndpsim.workloads import kernel_module, run_workload


@dataclass(frozen=True)
class Variant:
    """One system configuration of an experiment: a preset and overrides of its keys."""

    name: str
    preset: str
    overrides: dict[str, Any]


def simulate_workload(workload: str, size: str, seed: int, variants: Sequence[Variant],
                      store: ResultStore | None = None, study: str = "",
                      params: Params = ()) -> dict[str, dict[str, Any]]:  # fmt: skip
    """Interpret ``workload`` (its size's parameters with ``params`` in place) once and
    simulate it on every variant: {variant: run summary}. Each run is added to ``store`` as
    soon as it ends (its row's ``study`` column saying ``study``), after the JSON round trip a
    stored run makes, so a document built from stored runs is the one simulating them again
    would give."""
    functional = run_workload(workload, size, seed, params=dict(params))
    if not functional.check.passed:
        raise RuntimeError(f"{workload} ({size}) differs from its reference: "
                           f"{functional.check.detail}")  # fmt: skip
    module = kernel_module(functional.workload.module_name)
    provenance = code_provenance() if store is not None else {}
    out = {}
    for variant in variants:
        config = load_system_config(variant.preset, variant.overrides)
        result = build_system(config).run(functional.traces, module, functional.memory, seed=seed)
        run = json.loads(json.dumps({
            "time_ps": result.time_ps,
            "summary": result.summary,
            "energy_nj": result.energy,
            "wall_seconds": result.wall_seconds,
        }))  # fmt: skip
        if store is not None:
            stored_as = _stored_as(workload, size, seed, variant, config, params)
            row = row_of(stored_as, study, run, run["wall_seconds"], DEFAULT_COUNTERS, provenance)
            store.write({**row, RUN_COLUMN: json.dumps(run, sort_keys=True)}, DEFAULT_COUNTERS)
        out[variant.name] = {**run, "reused": False}
    return out


def _stored_as(workload: str, size: str, seed: int, variant: Variant, config: Any,
               params: Params) -> Run:  # fmt: skip
    """The run of ``variant`` (configured as ``config``) on the input, as the store files it:
    under everything its result depends on, which the variant's name is not."""
    key = run_key(run_identity(workload, size, seed, config, params))
    return Run(key, variant.name, variant.preset, config, config_hash(config), (), workload, size,
               seed, params)  # fmt: skip


def _stored_runs(workload: str, size: str, seed: int, variants: Sequence[Variant],
                 store: ResultStore | None,
                 params: Params) -> dict[str, dict[str, Any]]:  # fmt: skip
    """{variant: run} for the variants whose run ``store`` holds."""
    out = {}
    if store is not None:
        for v in variants:
            config = load_system_config(v.preset, v.overrides)
            stored = _stored_run(store, _stored_as(workload, size, seed, v, config, params))
            if stored is not None:
                out[v.name] = {**stored, "reused": True}
    return out


def _stored_run(store: ResultStore, run: Run) -> dict[str, Any] | None:
    """The run ``store`` holds under ``run``'s key, or None; a row that cannot be read is
    simulated again and replaced, with a warning."""
    try:
        row = store.read(run.key)
        if row is None:
            return None
        if row.get("run_key") != run.key:
            raise ValueError("its run_key differs from its file's name")
        if not isinstance(row.get(RUN_COLUMN), str):
            raise ValueError(f"it holds no {RUN_COLUMN} (not a reproduction's row)")
        return json.loads(row[RUN_COLUMN])
    except (OSError, ValueError) as err:
        warnings.warn(f"{store.path(run.key)}: stored run unreadable ({err}); simulating it "
                      "again", stacklevel=2)  # fmt: skip
        return None


def compile_timing_model(systems: Iterable[Any]) -> None:
    """Run a ``tiny`` workload on one system of each kind among ``systems`` (preset names or
    validated configs), which compiles each kind's timing model into numba's on-disk cache, or
    loads it from there. Systems of one kind share their compiled code, so the workers that
    follow find every kind they will run compiled, and no two of them compile one at once."""
    functional = run_workload("vadd", "tiny")
    module = kernel_module(functional.workload.module_name)
    kinds: set[str] = set()
    for system in systems:
        config = load_system_config(system) if isinstance(system, str) else system
        if config.kind not in kinds:
            kinds.add(config.kind)
            build_system(config).run(functional.traces, module, functional.memory)


def _flag_compilations(flag) -> CompilationWatcher:
    """A worker's setup: end with this process (:func:`ndpsim.processes.die_with_parent`),
    and raise ``flag`` (a multiprocessing event) when it starts compiling."""
    die_with_parent()
    return watch_compilation_for_good(flag.set)


def run_experiment(workloads: Sequence[str], size: str, seed: int, variants: Sequence[Variant],
                   processes: int | None = None,
                   on_done: Callable[[str], None] | None = None,
                   on_compiling: Callable[[bool], None] | None = None,
                   store: ResultStore | None = None, reuse: bool = True, study: str = "",
                   params: Mapping[str, Params] | None = None,
                   ) -> dict[str, dict[str, dict[str, Any]]]:  # fmt: skip
    """{workload: {variant: run summary}} for every pair, ``processes`` workloads at a time
    (default: one per CPU core, at most one per workload). ``on_done(workload)`` follows each
    workload; ``on_compiling(True)`` says numba started compiling, ``on_compiling(False)`` that
    it is done. ``store``: runs it holds are taken from it (``"reused": True``), and only
    the others are simulated and added to it, their rows' ``study`` column saying ``study``;
    a workload it holds every run of is not even interpreted. ``reuse=False`` simulates every
    run again (and stores it), for when the stored ones are in doubt. ``params``: {workload:
    its parameters given values of their own}, for the workloads that have some."""
    notify = on_compiling or (lambda compiling: None)
    chosen = {name: tuple((params or {}).get(name, ())) for name in workloads}
    if store is not None:
        store.remove_leftovers()
    lookup = store if reuse else None
    stored = {name: _stored_runs(name, size, seed, variants, lookup, chosen[name])
              for name in workloads}  # fmt: skip
    missing = {name: [v for v in variants if v.name not in stored[name]] for name in workloads}
    pending = [name for name in workloads if missing[name]]
    results: dict[str, dict[str, dict[str, Any]]] = {}

    def finished(name: str, simulated: dict[str, dict[str, Any]]) -> None:
        runs = {**stored[name], **simulated}
        results[name] = {v.name: runs[v.name] for v in variants}
        if on_done:
            on_done(name)

    for name in workloads:  # nothing to simulate: no worker, no warm-up
        if not missing[name]:
            finished(name, {})
    processes = max(1, min(processes or os.cpu_count() or 1, len(pending)))
    if processes == 1:
        with watching_compilation(lambda: notify(True), lambda: notify(False)):
            for name in pending:
                finished(name, simulate_workload(name, size, seed, missing[name], store, study,
                                                 chosen[name]))  # fmt: skip
        return {name: results[name] for name in workloads}
    context = multiprocessing.get_context()
    compiling = context.Event()
    pool = ProcessPoolExecutor(max_workers=processes, mp_context=context,
                               initializer=_flag_compilations,
                               initargs=(compiling,))  # fmt: skip
    try:
        warm_up = pool.submit(compile_timing_model, [v.preset for v in variants])
        while not warm_up.done() and not compiling.wait(0.2):
            pass
        compiled = compiling.is_set()
        if compiled:
            notify(True)
        warm_up.result()
        if compiled:
            notify(False)
        futures = {pool.submit(simulate_workload, name, size, seed, missing[name], store,
                               study, chosen[name]): name for name in pending}  # fmt: skip
        for future in as_completed(futures):
            finished(futures[future], future.result())
    except BaseException:  # stopped (Ctrl-C, SIGTERM) or failed: the workers end now
        stop_pool(pool)
        raise
    pool.shutdown()
    return {name: results[name] for name in workloads}


def provenance(runs: dict[str, dict[str, dict[str, Any]]]) -> dict[str, Any]:
    """What a results document says of how its runs were obtained: each run's wall time, as
    measured when it was simulated, and which runs came from the store ({workload: [variant]},
    only workloads that have some)."""
    return {
        "wall_seconds": {w: {v: r["wall_seconds"] for v, r in by.items()}
                         for w, by in runs.items()},
        "reused": {w: [v for v, r in by.items() if r.get("reused")]
                   for w, by in runs.items() if any(r.get("reused") for r in by.values())},
    }  # fmt: skip


__all__ = ["Variant", "compile_timing_model", "provenance", "run_experiment",
           "simulate_workload"]  # fmt: skip
