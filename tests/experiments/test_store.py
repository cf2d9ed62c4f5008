"""Finished runs kept on disk: reused exactly, missed whenever what they depend on changes."""

from __future__ import annotations

import json

import pytest

from ndpsim.config import preset_path
from ndpsim.experiments import runner, store
from ndpsim.experiments.runner import Variant, run_experiment
from ndpsim.experiments.store import RunStore, run_identity, run_key
from ndpsim.systems import load_system_config

BASELINE = Variant("baseline", "tom-baseline", {})
NDP = Variant("ctrl-bmap", "tom-ndp", {})


@pytest.fixture
def counted(monkeypatch):
    """The workloads interpreted and the systems simulated, in order."""
    calls: list[str] = []
    interpret, build = runner.run_workload, runner.build_system

    def run_workload(name, *args):
        calls.append(f"interpret {name}")
        return interpret(name, *args)

    def build_system(config):
        system = build(config)
        run = system.run

        def counted_run(*args, **kwargs):
            calls.append(f"simulate {config.name}")
            return run(*args, **kwargs)

        system.run = counted_run
        return system

    monkeypatch.setattr(runner, "run_workload", run_workload)
    monkeypatch.setattr(runner, "build_system", build_system)
    return calls


def _run(tmp_path, variants, reuse=True):
    return run_experiment(["vadd"], "tiny", 0, variants, processes=1,
                          store=RunStore(tmp_path / "runs", reuse))  # fmt: skip


def _without_reuse_flags(runs):
    return {w: {v: {k: x for k, x in r.items() if k != "reused"} for v, r in by.items()}
            for w, by in runs.items()}  # fmt: skip


def test_a_stored_run_is_taken_as_it_was_without_interpreting_again(tmp_path, counted):
    first = _run(tmp_path, [BASELINE, NDP])
    assert counted == ["interpret vadd", "simulate tom-baseline", "simulate tom-ndp"]
    assert not any(r["reused"] for r in first["vadd"].values())
    counted.clear()
    second = _run(tmp_path, [BASELINE, NDP])
    assert counted == []
    assert all(r["reused"] for r in second["vadd"].values())
    assert _without_reuse_flags(second) == _without_reuse_flags(first)


def test_only_the_runs_not_stored_are_simulated(tmp_path, counted):
    _run(tmp_path, [BASELINE])
    counted.clear()
    runs = _run(tmp_path, [BASELINE, NDP])
    assert counted == ["interpret vadd", "simulate tom-ndp"]
    assert runs["vadd"]["baseline"]["reused"] and not runs["vadd"]["ctrl-bmap"]["reused"]


def test_a_changed_key_seed_or_simulator_misses_the_store(tmp_path, counted, monkeypatch):
    _run(tmp_path, [NDP])
    counted.clear()
    _run(tmp_path, [Variant("ctrl-bmap", "tom-ndp", {"ndp": {"pcie_latency_ns": 500}})])
    assert counted == ["interpret vadd", "simulate tom-ndp"]
    counted.clear()
    run_experiment(["vadd"], "tiny", 1, [NDP], processes=1, store=RunStore(tmp_path / "runs"))
    assert counted == ["interpret vadd", "simulate tom-ndp"]
    counted.clear()
    monkeypatch.setattr(store, "code_fingerprint", lambda: "an edited simulator")
    _run(tmp_path, [NDP])
    assert counted == ["interpret vadd", "simulate tom-ndp"]


def test_the_name_of_a_variant_does_not_matter_its_configuration_does(tmp_path, counted):
    _run(tmp_path, [NDP])
    counted.clear()
    _run(tmp_path, [Variant("renamed", "tom-ndp", {})])
    assert counted == []


def test_fresh_simulates_everything_again_and_stores_it(tmp_path, counted):
    _run(tmp_path, [BASELINE])
    counted.clear()
    runs = _run(tmp_path, [BASELINE], reuse=False)
    assert counted == ["interpret vadd", "simulate tom-baseline"]
    assert not runs["vadd"]["baseline"]["reused"]


def test_a_damaged_entry_is_simulated_again_with_a_warning(tmp_path, counted):
    _run(tmp_path, [BASELINE])
    (entry,) = (tmp_path / "runs").glob("*.json")
    entry.write_text(entry.read_text()[:100])
    counted.clear()
    with pytest.warns(UserWarning, match="stored run unreadable"):
        runs = _run(tmp_path, [BASELINE])
    assert counted == ["interpret vadd", "simulate tom-baseline"]
    assert json.loads(entry.read_text())["run"] == {
        k: v for k, v in runs["vadd"]["baseline"].items() if k != "reused"
    }


def test_an_entry_whose_identity_differs_from_its_key_is_not_trusted(tmp_path):
    runs = RunStore(tmp_path)
    identity = run_identity("vadd", "tiny", 0, load_system_config("tom-baseline"))
    runs.save({**identity, "seed": 7}, {"time_ps": 1})
    (tmp_path / f"{run_key({**identity, 'seed': 7})}.json").rename(
        tmp_path / f"{run_key(identity)}.json"
    )
    with pytest.warns(UserWarning, match="identity differs"):
        assert runs.load(identity) is None


def test_a_user_dram_preset_is_part_of_the_identity(tmp_path):
    """A preset of the user's own lies outside the package: its contents must count."""
    source = load_system_config("tom-baseline").memory.dram
    mine = tmp_path / "mine.toml"
    mine.write_text(preset_path("dram", source).read_text())
    config = load_system_config("tom-baseline", {"memory": {"dram": str(mine)}})
    before = run_identity("vadd", "tiny", 0, config)
    assert "\nCL = 11\n" in mine.read_text()
    mine.write_text(mine.read_text().replace("\nCL = 11\n", "\nCL = 12\n"))
    after = run_identity("vadd", "tiny", 0, config)
    assert run_key(before) != run_key(after)


def test_workloads_whose_runs_are_all_stored_need_no_worker(tmp_path, counted, monkeypatch):
    _run(tmp_path, [BASELINE])

    def no_pool(*args, **kwargs):
        raise AssertionError("a worker pool was started for stored runs")

    monkeypatch.setattr(runner, "ProcessPoolExecutor", no_pool)
    counted.clear()
    runs = run_experiment(["vadd"], "tiny", 0, [BASELINE], processes=2,
                          store=RunStore(tmp_path / "runs"))  # fmt: skip
    assert counted == [] and runs["vadd"]["baseline"]["reused"]
