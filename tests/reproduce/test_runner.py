from concurrent.futures import Future

from ndpsim.reproduce import runner
from ndpsim.reproduce.runner import Variant, compile_timing_model, run_experiment
from ndpsim.systems.gpu import model


class InlineExecutor:
    """Stands in for the process pool: runs each task when it is submitted, in order."""

    def __init__(self, max_workers: int) -> None:
        self.max_workers = max_workers

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        return None

    def submit(self, fn, *args) -> Future:
        future: Future = Future()
        future.set_result(fn(*args))
        return future


def test_one_worker_compiles_the_timing_model_before_the_workloads_are_shared_out(monkeypatch):
    calls = []
    monkeypatch.setattr(runner, "ProcessPoolExecutor", InlineExecutor)
    monkeypatch.setattr(runner, "compile_timing_model", lambda preset: calls.append(preset))

    def simulate(workload, size, seed, variants):
        calls.append(workload)
        return {v.name: {"workload": workload} for v in variants}

    monkeypatch.setattr(runner, "simulate_workload", simulate)
    variants = [Variant("baseline", "tom-baseline", {}), Variant("ndp", "tom-ndp", {})]
    results = run_experiment(["bfs", "vadd", "hist"], "tiny", 0, variants, processes=2)
    assert calls == ["tom-baseline", "bfs", "vadd", "hist"]
    assert list(results) == ["bfs", "vadd", "hist"]
    assert results["vadd"]["ndp"] == {"workload": "vadd"}


def test_a_single_process_runs_without_a_separate_compilation(monkeypatch):
    calls = []
    monkeypatch.setattr(runner, "compile_timing_model", lambda preset: calls.append(preset))
    monkeypatch.setattr(runner, "simulate_workload", lambda w, *_: calls.append(w) or {})
    run_experiment(["bfs", "vadd"], "tiny", 0, [Variant("b", "tom-baseline", {})], processes=1)
    assert calls == ["bfs", "vadd"]


def test_one_warm_up_serves_every_preset():
    """The warm-up compiles for one preset; the others must reuse that compilation."""
    for preset in ("tom-baseline", "tom-ndp", "sndp-baseline", "sndp-ndp"):
        compile_timing_model(preset)
    assert len(model.advance.signatures) == 1
