from concurrent.futures import Future
from types import SimpleNamespace

import pytest
from numba import njit

from ndpsim.experiments import runner
from ndpsim.experiments.runner import Variant, compile_timing_model, run_experiment
from ndpsim.systems.gpu import model


class InlineExecutor:
    """Stands in for the process pool: runs each task when it is submitted, in order."""

    def __init__(self, max_workers: int, mp_context=None, initializer=None, initargs=()) -> None:
        self.max_workers = max_workers
        if initializer is not None:
            initializer(*initargs)

    def shutdown(self, wait: bool = True, cancel_futures: bool = False) -> None:
        return None

    def submit(self, fn, *args) -> Future:
        future: Future = Future()
        future.set_result(fn(*args))
        return future


def _recording(calls):
    """Stands in for ``simulate_workload``: notes the workload, returns an empty run per
    variant."""

    def simulate(workload, size, seed, variants, store, study, params):
        calls.append(workload)
        return {v.name: {} for v in variants}

    return simulate


@pytest.fixture
def inline_pool(monkeypatch):
    """The process pool replaced by :class:`InlineExecutor`, its workers' setup by nothing."""
    monkeypatch.setattr(runner, "ProcessPoolExecutor", InlineExecutor)
    monkeypatch.setattr(runner, "_flag_compilations", lambda flag: None)


def test_one_worker_compiles_the_timing_model_before_the_workloads_are_shared_out(
    monkeypatch, inline_pool
):
    calls = []
    monkeypatch.setattr(runner, "compile_timing_model", lambda preset: calls.append(preset))

    def simulate(workload, size, seed, variants, store, study, params):
        calls.append(workload)
        return {v.name: {"workload": workload} for v in variants}

    monkeypatch.setattr(runner, "simulate_workload", simulate)
    variants = [Variant("baseline", "tom-baseline", {}), Variant("ndp", "tom-ndp", {})]
    results = run_experiment(["bfs", "vadd", "hist"], "tiny", 0, variants, processes=2)
    assert calls == [["tom-baseline", "tom-ndp"], "bfs", "vadd", "hist"]
    assert list(results) == ["bfs", "vadd", "hist"]
    assert results["vadd"]["ndp"] == {"workload": "vadd"}


def test_a_single_process_runs_without_a_separate_compilation(monkeypatch):
    calls = []
    monkeypatch.setattr(runner, "compile_timing_model", lambda preset: calls.append(preset))
    monkeypatch.setattr(runner, "simulate_workload", _recording(calls))
    run_experiment(["bfs", "vadd"], "tiny", 0, [Variant("b", "tom-baseline", {})], processes=1)
    assert calls == ["bfs", "vadd"]


def test_one_warm_up_serves_every_preset_of_a_kind():
    """The warm-up compiles on one preset of a kind; the others must reuse that compilation."""
    for preset in ("tom-baseline", "tom-ndp", "sndp-baseline", "sndp-ndp"):
        compile_timing_model([preset])
    assert len(model.advance.signatures) == 1


def test_the_warm_up_runs_one_system_of_each_kind_it_is_given(monkeypatch):
    built = []

    class Built:
        def run(self, traces, module, memory):
            pass

    monkeypatch.setattr(runner, "build_system", lambda config: built.append(config.kind) or Built())
    kinds = [SimpleNamespace(kind=k) for k in ("gpu", "cpu", "gpu", "mpu", "cpu")]
    compile_timing_model(kinds)
    assert built == ["gpu", "cpu", "mpu"]


def test_the_caller_hears_when_the_warm_up_compiles(monkeypatch, inline_pool):
    """Workers raise a shared flag when they compile; the caller is told before and after."""
    calls = []
    flags = []
    monkeypatch.setattr(runner, "_flag_compilations", flags.append)
    monkeypatch.setattr(runner, "compile_timing_model", lambda preset: flags[0].set())
    monkeypatch.setattr(runner, "simulate_workload", _recording(calls))
    run_experiment(["bfs", "vadd"], "tiny", 0, [Variant("b", "tom-baseline", {})], processes=2,
                   on_compiling=calls.append)  # fmt: skip
    assert calls == [True, False, "bfs", "vadd"]


def test_a_warm_up_that_loads_from_the_cache_says_nothing(monkeypatch, inline_pool):
    calls = []
    monkeypatch.setattr(runner, "compile_timing_model", lambda preset: None)
    monkeypatch.setattr(runner, "simulate_workload", _recording(calls))
    run_experiment(["bfs", "vadd"], "tiny", 0, [Variant("b", "tom-baseline", {})], processes=2,
                   on_compiling=calls.append)  # fmt: skip
    assert calls == ["bfs", "vadd"]


def test_a_single_process_says_when_it_compiles(monkeypatch):
    calls = []

    def simulate(workload, size, seed, variants, store, study, params):
        @njit
        def fresh(x):
            return x + 1

        fresh(1)  # compiled on the first call
        calls.append(workload)
        return {v.name: {} for v in variants}

    monkeypatch.setattr(runner, "simulate_workload", simulate)
    run_experiment(["bfs", "vadd"], "tiny", 0, [Variant("b", "tom-baseline", {})], processes=1,
                   on_compiling=calls.append)  # fmt: skip
    assert calls == [True, False, "bfs", True, False, "vadd"]
