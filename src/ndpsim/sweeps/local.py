"""Running a sweep's runs on this machine: in this process for one job, else in a pool of
worker processes.

Runs are handed out one at a time in the plan's order (input by input), so each worker
interprets an input once and simulates every run of it that reaches it. Before the pool
starts, this process compiles the timing model of every system kind the runs use, or loads it
from numba's cache (:func:`ndpsim.experiments.runner.compile_timing_model`): every worker
compiling at once would repeat one compilation in each, and forked workers inherit the loaded
code instead of each loading it again.
"""

from __future__ import annotations

import multiprocessing
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool

from ndpsim.compilation import watch_compilation_for_good, watching_compilation
from ndpsim.errors import SimulationError
from ndpsim.experiments.rows import Run
from ndpsim.experiments.runner import compile_timing_model
from ndpsim.processes import die_with_parent, stop_pool
from ndpsim.sweeps.worker import Outcome, Task, execute

#: ``on_done(run, outcome)`` after each run; ``on_compiling(True)`` when numba starts
#: compiling the simulator, ``on_compiling(False)`` when it is done.
OnDone = Callable[[Run, Outcome], None]
OnCompiling = Callable[[bool], None]


def _flag_compilations(flag) -> None:
    """A worker's setup: end with this process (:func:`ndpsim.processes.die_with_parent`),
    and raise ``flag`` (a multiprocessing event) when it starts compiling."""
    die_with_parent()
    watch_compilation_for_good(flag.set)


def run_local(runs: Sequence[Run], task: Task, jobs: int, on_done: OnDone,
              on_compiling: OnCompiling) -> None:  # fmt: skip
    """Every run of ``runs``, ``jobs`` at a time."""
    if not runs:
        return
    jobs = max(1, min(jobs, len(runs)))
    with watching_compilation(lambda: on_compiling(True), lambda: on_compiling(False)):
        if jobs == 1:
            for run in runs:
                on_done(run, execute(run, task))
            return
        compile_timing_model([run.config for run in runs])  # once: forked workers inherit it
    context = multiprocessing.get_context()
    compiling = context.Event()
    pool = ProcessPoolExecutor(max_workers=jobs, mp_context=context,
                               initializer=_flag_compilations,
                               initargs=(compiling,))  # fmt: skip
    try:
        pending = {pool.submit(execute, run, task): run for run in runs}
        noticed = False  # a worker compiling what the warm-up did not (a kind of its own)
        while pending:
            done, _ = wait(pending, timeout=0.5, return_when=FIRST_COMPLETED)
            if compiling.is_set() and not noticed:
                noticed = True
                on_compiling(True)
            for future in done:
                run = pending.pop(future)
                try:
                    outcome = future.result()
                except BrokenProcessPool:
                    raise SimulationError(
                        "a worker process died (out of memory, or killed) with runs in "
                        "flight; the runs stored so far are kept: run the sweep again to "
                        "resume it"
                    ) from None
                on_done(run, outcome)
        if noticed:
            on_compiling(False)
    except BaseException:  # stopped (Ctrl-C, SIGTERM) or failed: the workers end now
        stop_pool(pool)
        raise
    pool.shutdown()


__all__ = ["OnCompiling", "OnDone", "run_local"]
