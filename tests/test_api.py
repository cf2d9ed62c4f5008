"""``ndpsim.run``, ``ndpsim.analyze``, ``ndpsim.reproduce``, ``ndpsim.sweep`` and
``ndpsim.results``: the examples of docs/api.md and the README executed as written, each verb
giving what its command gives, refusing what its command refuses before any work, and the
package importing the API only when it is used."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

import ndpsim
from ndpsim import sweeps
from ndpsim.cli.main import app
from ndpsim.errors import ConfigError, PTXError, WorkloadError
from ndpsim.workloads.base import KERNEL_DIR
from tests.platform.test_extending import BLOCK

ROOT = Path(__file__).resolve().parents[1]
runner = CliRunner()


def _python_blocks(path: Path) -> list[str]:
    return [code for language, code in BLOCK.findall(path.read_text()) if language == "python"]


def test_the_api_document_runs_as_written(monkeypatch):
    monkeypatch.chdir(ROOT)
    namespace: dict = {}
    blocks = _python_blocks(ROOT / "docs" / "api.md")
    assert len(blocks) == 7
    for code in blocks:
        exec(compile(code, str(ROOT / "docs" / "api.md"), "exec"), namespace)
    assert namespace["result"].time_ps > 0 and namespace["counters"]["summary"]
    assert "presets with [ndp]: sndp-ndp, tom-ndp" in namespace["refusal"]
    assert namespace["loops"] and namespace["blocks"]
    assert namespace["own"].time_ps > 0
    assert namespace["stepped"].finished and namespace["final"].time_ps > 0
    assert namespace["issued"] > 0
    assert set(namespace["apart"]) == {"bfs", "spmv"} and all(namespace["apart"].values())
    assert namespace["speedup"] > 0 and namespace["averages"]["speedup"] > 0


def test_the_readme_uses_the_verbs_as_written(monkeypatch):
    monkeypatch.chdir(ROOT)
    (code,) = [c for c in _python_blocks(ROOT / "README.md") if "ndpsim.run(" in c]
    namespace: dict = {}
    exec(compile(code, str(ROOT / "README.md"), "exec"), namespace)
    assert namespace["result"].time_ps > 0
    assert namespace["report"]["functions"][0]["sndp_blocks"]
    assert namespace["doc"]["meta"]["workloads"] == ["vadd"]


def test_run_gives_the_counters_the_command_writes(tmp_path):
    out = tmp_path / "run.json"
    args = ["run", "--system", "sndp-ndp", "-w", "vadd", "-s", "tiny", "--seed", "2",
            "--set", "sm.count=16", "--json", str(out)]  # fmt: skip
    assert runner.invoke(app, args).exit_code == 0
    result = ndpsim.run("sndp-ndp", "vadd", size="tiny", seed=2, overrides={"sm": {"count": 16}})
    written = json.loads(out.read_text())
    mine = json.loads(json.dumps(result.as_dict()))
    assert mine["stats"] == written["stats"] and mine["summary"] == written["summary"]


def test_run_takes_a_kernel_of_your_own_and_a_saved_trace_as_the_command_does(tmp_path):
    ptx = ROOT / "docs" / "examples" / "saxpy.ptx"
    launch = {"grid": "2", "block": "128",
              "args": ["i32:256", "f32:2.5", "buf:f32:256:range", "buf:f32:256:zeros"]}  # fmt: skip
    own = ndpsim.run("gpu-baseline", ptx=ptx, **launch)
    out = tmp_path / "own.json"
    assert runner.invoke(app, ["run", "--system", "gpu-baseline", "--ptx", str(ptx), "--grid",
                               "2", "--block", "128", *(f"--arg={a}" for a in launch["args"]),
                               "--json", str(out)]).exit_code == 0  # fmt: skip
    assert json.loads(json.dumps(own.as_dict()))["stats"] == json.loads(out.read_text())["stats"]
    saved = tmp_path / "traces"
    assert runner.invoke(app, ["workloads", "run", "-s", "tiny", "-w", "vadd", "--seed", "3",
                               "--save-traces", str(saved)]).exit_code == 0  # fmt: skip
    replayed = ndpsim.run("tom-ndp", trace=saved / "vadd-tiny")  # the trace's own seed, 3
    direct = ndpsim.run("tom-ndp", "vadd", size="tiny", seed=3)
    assert replayed.as_dict()["stats"] == direct.as_dict()["stats"]
    with pytest.raises(ConfigError, match="exactly one of"):
        ndpsim.run("gpu-baseline", "vadd", trace=saved / "vadd-tiny")


def test_run_refuses_a_bad_request_before_interpreting(monkeypatch):
    def interpret(*args, **kwargs):
        raise AssertionError("the workload was interpreted")

    monkeypatch.setattr("ndpsim.experiments.inputs.execute_workload", interpret)
    with pytest.raises(ConfigError, match="size must be one of tiny, small, paper, got 'huge'"):
        ndpsim.run("gpu-baseline", "vadd", size="huge")
    with pytest.raises(ConfigError, match="seed must be at least 0"):
        ndpsim.run("gpu-baseline", "vadd", seed=-1)
    with pytest.raises(WorkloadError, match="unknown workload 'nope'"):
        ndpsim.run("gpu-baseline", "nope")
    with pytest.raises(ConfigError, match=r"'sm\.count'"):
        ndpsim.run("gpu-baseline", "vadd", overrides={"sm.count": 0})
    with pytest.raises(ConfigError, match=r"'sm\.count' gives 'sm\.count' a second time"):
        ndpsim.run("gpu-baseline", "vadd", overrides={"sm": {"count": 8}, "sm.count": 16})


def test_analyze_gives_what_the_command_prints():
    lib = KERNEL_DIR / "lib.ptx"
    printed = runner.invoke(app, ["analyze", str(lib), "--json", "-"])
    assert ndpsim.analyze(lib) == json.loads(printed.stdout)
    printed = runner.invoke(
        app, ["analyze", "--tom", "--blocks", "maximal", str(lib), "--json", "-"]
    )
    assert ndpsim.analyze(str(lib), offload_pass="tom-maximal") == json.loads(printed.stdout)
    (function,) = ndpsim.analyze(lib, kernel="lib_path_portfolio", instructions=False)["functions"]
    assert "instructions" not in function and function["loops"]


def test_analyze_refuses_what_the_command_refuses(tmp_path):
    with pytest.raises(PTXError, match="defines: vadd"):
        ndpsim.analyze(KERNEL_DIR / "vadd.ptx", kernel="nope")
    with pytest.raises(ConfigError, match="nope"):
        ndpsim.analyze(KERNEL_DIR / "vadd.ptx", offload_pass="nope")


def test_reproduce_gives_the_document_the_command_writes(tmp_path):
    runs = tmp_path / "runs"
    doc = ndpsim.reproduce("tom", size="tiny", workloads=["vadd"], systems=["ctrl-tmap"],
                           overrides={"ndp.pcie_latency_ns": 20000}, jobs=1, runs=runs)  # fmt: skip
    stored = ndpsim.results(runs).query("SELECT system FROM runs ORDER BY system").to_pylist()
    assert stored == [{"system": "baseline"}, {"system": "ctrl-tmap"}]  # both runs, stored
    out = tmp_path / "tom.json"
    args = ["reproduce", "tom", "-s", "tiny", "-w", "vadd", "--systems", "ctrl-tmap", "-j", "1",
            "--set", "ndp.pcie_latency_ns=20000", "--runs", str(runs), "--out",
            str(tmp_path / "out"), "--json", str(out)]  # fmt: skip
    result = runner.invoke(app, args, env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    written = json.loads(out.read_text())
    assert written["meta"]["reused"] == {"vadd": ["baseline", "ctrl-tmap"]}  # nothing re-run
    for key in ("baseline", "ctrl-tmap", "average", "mapping", "candidates"):
        assert doc[key] == written[key]
    assert doc["meta"]["switches"] == written["meta"]["switches"]


def test_reproduce_runs_a_study_alone_and_refuses_an_unknown_switch():
    doc = ndpsim.reproduce("sndp", figure5=True, seed=2)
    assert doc["meta"] == {"experiment": "sndp-figure5", "seed": 2}
    assert doc["figure5"]["seed"] == 2
    with pytest.raises(ConfigError, match="sndp has no switch nsu_ghz; it takes nsu_mhz, target"):
        ndpsim.reproduce("sndp", nsu_ghz=1)
    with pytest.raises(ConfigError, match="unknown TOM variant"):
        ndpsim.reproduce("tom", systems=["ctrl-xmap"])
    with pytest.raises(ConfigError, match="seeds must be at least 1"):
        ndpsim.reproduce("tom", seeds=0)


def test_sweep_and_results_are_verbs_of_the_package(tmp_path):
    assert ndpsim.sweep is sweeps.sweep and ndpsim.results is sweeps.results
    with pytest.raises(ConfigError, match=r"neither a result directory .* nor a study file"):
        ndpsim.results(tmp_path / "nowhere")


def test_the_package_imports_the_api_only_when_a_verb_is_used():
    code = ("import sys, ndpsim; assert 'ndpsim.api' not in sys.modules; ndpsim.reproduce; "
            "assert 'ndpsim.api' in sys.modules; print(ndpsim.run.__module__)")  # fmt: skip
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ndpsim.api"
    with pytest.raises(AttributeError, match="no attribute 'walk'"):
        ndpsim.walk  # noqa: B018
