"""Running an experiment's (workload, variant) pairs: each workload is interpreted once and
simulated on every variant, workloads spread over worker processes.

A worker returns plain data (the run summaries and energies), never the traces, so only small
results cross process boundaries. Before the workers share out the workloads, one of them
compiles the timing model (or loads it from numba's on-disk cache): on a machine that has not
compiled it yet, every worker would otherwise compile it at once, each for minutes and with
gigabytes of memory, where one compilation serves them all. The workers raise a shared flag
when they compile, so the caller can say why the warm-up takes minutes.
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from typing import Any

from ndpsim.compilation import (
    CompilationWatcher,
    watch_compilation_for_good,
    watching_compilation,
)
from ndpsim.systems.gpu import GpuSystem, load_system_config
from ndpsim.workloads import kernel_module, run_workload


@dataclass(frozen=True)
class Variant:
    """One system configuration of an experiment: a preset and overrides of its keys."""

    name: str
    preset: str
    overrides: dict[str, Any]


def simulate_workload(workload: str, size: str, seed: int,
                      variants: Sequence[Variant]) -> dict[str, dict[str, Any]]:  # fmt: skip
    """Interpret ``workload`` once and simulate it on every variant: {variant: run summary}."""
    configs = {v.name: load_system_config(v.preset, v.overrides) for v in variants}
    functional = run_workload(workload, size, seed)
    if not functional.check.passed:
        raise RuntimeError(f"{workload} ({size}) differs from its reference: "
                           f"{functional.check.detail}")  # fmt: skip
    module = kernel_module(functional.workload.module_name)
    out = {}
    for variant in variants:
        result = GpuSystem(configs[variant.name]).run(
            functional.traces, module, functional.memory, seed=seed
        )
        out[variant.name] = {
            "time_ps": result.time_ps,
            "summary": result.summary,
            "energy_nj": result.energy,
            "wall_seconds": result.wall_seconds,
        }
    return out


def compile_timing_model(preset: str) -> None:
    """Run a ``tiny`` workload on ``preset``, which compiles every function of the timing model
    (all systems share them) into numba's on-disk cache, or loads them from it."""
    functional = run_workload("vadd", "tiny")
    GpuSystem(load_system_config(preset)).run(
        functional.traces, kernel_module(functional.workload.module_name), functional.memory
    )


def _flag_compilations(flag) -> CompilationWatcher:
    """A worker's setup: raise ``flag`` (a multiprocessing event) when it starts compiling."""
    return watch_compilation_for_good(flag.set)


def run_experiment(workloads: Sequence[str], size: str, seed: int, variants: Sequence[Variant],
                   processes: int | None = None,
                   on_done: Callable[[str], None] | None = None,
                   on_compiling: Callable[[bool], None] | None = None,
                   ) -> dict[str, dict[str, dict[str, Any]]]:  # fmt: skip
    """{workload: {variant: run summary}} for every pair, ``processes`` workloads at a time
    (default: one per CPU core, at most one per workload). ``on_done(workload)`` follows each
    workload; ``on_compiling(True)`` says numba started compiling, ``on_compiling(False)`` that
    it is done."""
    processes = max(1, min(processes or os.cpu_count() or 1, len(workloads)))
    notify = on_compiling or (lambda compiling: None)
    results: dict[str, dict[str, dict[str, Any]]] = {}
    if processes == 1:
        with watching_compilation(lambda: notify(True), lambda: notify(False)):
            for name in workloads:
                results[name] = simulate_workload(name, size, seed, variants)
                if on_done:
                    on_done(name)
        return results
    context = multiprocessing.get_context()
    compiling = context.Event()
    with ProcessPoolExecutor(max_workers=processes, mp_context=context,
                             initializer=_flag_compilations,
                             initargs=(compiling,)) as pool:  # fmt: skip
        warm_up = pool.submit(compile_timing_model, variants[0].preset)
        while not warm_up.done() and not compiling.wait(0.2):
            pass
        compiled = compiling.is_set()
        if compiled:
            notify(True)
        warm_up.result()
        if compiled:
            notify(False)
        futures = {pool.submit(simulate_workload, name, size, seed, list(variants)): name
                   for name in workloads}  # fmt: skip
        for future in as_completed(futures):
            name = futures[future]
            results[name] = future.result()
            if on_done:
                on_done(name)
    return {name: results[name] for name in workloads}


__all__ = ["Variant", "compile_timing_model", "run_experiment", "simulate_workload"]
