"""ndpsim from Python: the command line's verbs as functions returning data, reachable as
``ndpsim.run``, ``ndpsim.analyze``, ``ndpsim.reproduce``, ``ndpsim.sweep`` and
``ndpsim.results`` (the last two are :mod:`ndpsim.sweeps`'s, gathered here so that one module
holds every verb).

Each takes its command's options under the same names (``size``, ``seed``, ``workloads``,
``systems``, ``overrides`` for ``--set``) and refuses what the command refuses with the same
message, as an :class:`~ndpsim.errors.NdpsimError`; nothing is printed and no file is written
(a reproduction stores its finished runs in ``runs`` when given one). ``overrides`` take nested
tables (``{"sm": {"count": 32}}``) or dotted keys (``{"sm.count": 32}``).
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ndpsim.analysis.passes import OFFLOAD_PASSES
from ndpsim.analysis.report import function_report
from ndpsim.engine.timeline import Timeline
from ndpsim.errors import ConfigError, PTXError
from ndpsim.experiments import seeds as seed_study
from ndpsim.experiments.inputs import choose_input
from ndpsim.experiments.overrides import nested
from ndpsim.experiments.reproduction import plan
from ndpsim.experiments.store import ResultStore
from ndpsim.frontend.ir import Function
from ndpsim.frontend.parser import parse_ptx_file
from ndpsim.simt.limits import Limits
from ndpsim.sweeps.api import results, sweep
from ndpsim.systems import (
    RunResult,
    build_system,
    check_records_timeline,
    load_system_config,
    run_programs_on,
)
from ndpsim.workloads import SIZES


def run(system: str, workload: str | None = None, *, ptx: str | Path | None = None,
        kernel: str | None = None, grid: str | None = None, block: str | None = None,
        args: Sequence[str] = (), trace: str | Path | None = None, size: str | None = None,
        seed: int | None = None, param: Mapping[str, Any] | None = None,
        overrides: Mapping[str, Any] | None = None, limits: Limits | None = None,
        timeline: Timeline | None = None) -> RunResult:  # fmt: skip
    """Simulate, on the system preset ``system`` (a name, or a ``.toml`` path) with
    ``overrides`` of its keys, what ``ndpsim run`` would: a ``workload`` (of the suite, or a
    ``.py`` file defining one) at ``size`` (default ``small``), a kernel of your own (``ptx``
    with ``kernel``, ``grid``, ``block`` and ``args`` as the options ``--kernel``, ``--grid``,
    ``--block`` and ``--arg`` take them), or a saved ``trace`` directory; exactly one of the
    three. ``param`` gives parameters of the workload values of their own instead of its
    size's, as ``--param`` does (``{"n": 4096}``, or strings as the command line takes them).
    ``seed`` defaults to 0 (a saved trace's own seed for a trace). A ``timeline``
    (:class:`ndpsim.engine.timeline.Timeline`) is filled with the run's counters window by
    window; its ``write(path)`` saves it for Perfetto UI. The system and the input are checked
    before anything is interpreted; an input whose output differs from its reference still
    runs, with a :class:`RuntimeWarning`."""
    if size is not None and size not in SIZES:
        raise ConfigError(f"size must be one of {', '.join(SIZES)}, got {size!r}")
    if seed is not None and seed < 0:
        raise ConfigError(f"seed must be at least 0, got {seed}")
    hardware = build_system(load_system_config(system, nested(overrides)))
    if timeline is not None:
        check_records_timeline(hardware)
    source = choose_input(workload=workload, ptx=None if ptx is None else Path(ptx),
                          kernel=kernel, grid=grid, block=block, args=list(args),
                          trace=None if trace is None else Path(trace), size=size,
                          seed=seed, params=param)  # fmt: skip
    functional = source.interpret(limits or Limits())
    if functional.problem is not None:
        warnings.warn(f"{source.name} differs from its reference: {functional.problem}",
                      RuntimeWarning, stacklevel=2)  # fmt: skip
    return run_programs_on(hardware, functional.programs(source.name), seed=source.seed,
                           timeline=timeline)  # fmt: skip


def analyze(ptx: str | Path, *, kernel: str | None = None, offload_pass: str | None = None,
            instructions: bool = True) -> dict[str, Any]:  # fmt: skip
    """What the static analyses see in the PTX file ``ptx`` (only its function ``kernel`` when
    given), as ``ndpsim analyze --json`` prints it: ``{"module", "functions": [...]}`` with each
    function's blocks, loops, liveness and instruction classes (each instruction's too unless
    ``instructions`` is false), or, with ``offload_pass`` (a registered pass: ``tom-loops``,
    ``tom-maximal``, ``sndp``, ...), the blocks that pass finds instead."""
    functions = ptx_functions(ptx, kernel)
    if offload_pass is None:
        reports = [function_report(f, instructions=instructions) for f in functions]
    else:
        found = OFFLOAD_PASSES.get(offload_pass)
        reports = [
            {"name": f.name, "kernel": f.is_kernel, "num_instructions": len(f.instructions),
             **found.facts(f), found.json_key: [block.as_dict() for block in found(f)]}
            for f in functions
        ]  # fmt: skip
    return {"module": str(ptx), "functions": reports}


def ptx_functions(ptx: str | Path, kernel: str | None = None) -> list[Function]:
    """The functions of the PTX file ``ptx`` (only ``kernel`` when given), parsed and checked:
    what :func:`analyze` looks at."""
    module = parse_ptx_file(Path(ptx))
    functions = list(module.functions.values()) if kernel is None else [module.function(kernel)]
    if not functions:
        raise PTXError(f"{ptx}: defines no function")
    return functions


def reproduce(paper: str, *, size: str = "small", seed: int = 0, seeds: int = 1,
              workloads: Sequence[str] | None = None, systems: Sequence[str] | None = None,
              overrides: Mapping[str, Any] | None = None, param: Mapping[str, Any] | None = None,
              jobs: int | None = None, runs: str | Path | None = None, fresh: bool = False,
              **options: Any) -> dict[str, Any]:  # fmt: skip
    """Run ``paper``'s experiment (``tom``, ``sndp``, ...) as ``ndpsim reproduce PAPER`` does
    and return its results document (the one ``--json`` writes): ``workloads`` (default: the
    paper's) on ``systems`` (default: all; the baseline always runs), ``jobs`` worker
    processes, ``seeds`` seeds from ``seed`` on (more than one: the comparison across seeds).
    ``param``: values of the workloads' parameters, as ``--param`` gives them (each to every
    workload that has the parameter).
    ``options`` are the paper's switches by name (``stack_warps=2``) or ``True`` for a study
    to run alone (``figure5=True``). ``runs``: a result store of finished runs to reuse and
    add to, as a sweep's (``ndpsim.results(runs)`` queries it; ``fresh``: simulate them again
    anyway); none by default."""
    if seeds < 1:
        raise ConfigError(f"seeds must be at least 1, got {seeds}")
    if seed < 0:
        raise ConfigError(f"seed must be at least 0, got {seed}")
    reproduction = plan(paper, size=size, workloads=workloads, systems=systems,
                        overrides=overrides, options=options, params=param)  # fmt: skip
    if reproduction.studies:
        results = {s.key: s.run(seed) for s in reproduction.studies}
        return reproduction.studies_document(results, seed)
    store = ResultStore(runs) if runs is not None else None
    if seeds > 1:
        docs = {s: reproduction.document(reproduction.run(s, jobs, store, reuse=not fresh), s)
                for s in range(seed, seed + seeds)}  # fmt: skip
        return seed_study.document(docs, reproduction.paper.name)
    studies = {s.key: s.run(seed) for s in reproduction.paper.studies}
    runs_of_seed = reproduction.run(seed, jobs, store, reuse=not fresh)
    return {**reproduction.document(runs_of_seed, seed), **studies}


__all__ = ["analyze", "ptx_functions", "reproduce", "results", "run", "sweep"]
