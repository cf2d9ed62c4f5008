"""``--param KEY=VALUE`` on ``ndpsim run``, ``ndpsim workloads run`` and ``ndpsim reproduce``,
``param=`` in the API, and ``ndpsim workloads show``: the values reach the workload, are recorded
with the run and keep its results apart from the size's own."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

import ndpsim
from ndpsim.cli.main import app
from ndpsim.experiments.store import ResultStore

runner = CliRunner()
ENV = {"COLUMNS": "200"}


def _invoke(*args: str):
    return runner.invoke(app, list(args), env=ENV)


def test_run_records_the_parameters_and_keeps_their_results_apart(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    base = ["run", "--system", "tom-baseline", "-w", "vadd", "--size", "tiny"]
    assert _invoke(*base).exit_code == 0
    result = _invoke(*base, "--param", "n=3000", "--param", "block=128")
    assert result.exit_code == 0, result.output
    assert "vadd (tiny, n=3000 block=128) on tom-baseline" in result.output
    files = sorted((tmp_path / "results").iterdir())
    assert len(files) == 2  # not the size's own file
    chosen = [json.loads(f.read_text()) for f in files if json.loads(f.read_text())["input"].get(
        "params")]  # fmt: skip
    (doc,) = chosen
    assert doc["workload_parameters"] == {"n": 3000, "block": 128}
    assert doc["input"] == {"kind": "suite", "params": {"n": 3000, "block": 128}}
    same = ndpsim.run("tom-baseline", "vadd", size="tiny", param={"n": 3000, "block": "128"})
    assert same.as_dict()["stats"] == doc["stats"]


@pytest.mark.parametrize(
    ("args", "complaint"),
    [
        (["-w", "vadd", "--param", "m=3"],
         "workload 'vadd' has no parameter 'm'; it takes n, block"),
        (["-w", "vadd", "--param", "n=many"], "parameter 'n': expected an integer, got 'many'"),
        (["--ptx", "k.ptx", "--grid", "1", "--block", "32", "--param", "n=3"],
         "--param applies to --workload; --ptx launches what its options say"),
    ],
)  # fmt: skip
def test_run_refuses_a_bad_parameter_in_one_line_with_status_2(args, complaint):
    result = _invoke("run", "--system", "tom-baseline", "--size", "tiny", *args)
    if "--ptx" in args:  # no --size with --ptx
        result = _invoke("run", "--system", "tom-baseline", *args)
    assert result.exit_code == 2
    assert complaint in result.output and "Traceback" not in result.output


def test_workloads_show_lists_each_parameter_at_each_size():
    result = _invoke("workloads", "show", "cfd")
    assert result.exit_code == 0, result.output
    assert "cells" in result.output and "32,16,8" in result.output


def test_workloads_run_gives_each_workload_the_parameters_it_has(tmp_path):
    out = tmp_path / "table.json"
    result = _invoke("workloads", "run", "-w", "vadd,bfs", "--size", "tiny", "--param",
                     "nodes=500", "--json", str(out), "--save-traces",
                     str(tmp_path / "traces"))  # fmt: skip
    assert result.exit_code == 0, result.output
    rows = {r["workload"]: r["param"] for r in json.loads(out.read_text())["workloads"]}
    assert rows == {"vadd": {}, "bfs": {"nodes": 500}}
    saved = sorted(p.name for p in (tmp_path / "traces").iterdir())
    assert saved == ["bfs-tiny-nodes=500", "vadd-tiny"]
    refused = _invoke("workloads", "run", "-w", "vadd,bfs", "--size", "tiny", "--param", "x=1")
    assert refused.exit_code == 2 and "they take block, n, nodes" in refused.output


def test_reproduce_runs_stores_and_records_the_parameters(tmp_path):
    out = tmp_path / "tom"
    result = _invoke("reproduce", "tom", "--size", "tiny", "--workloads", "vadd", "--jobs", "1",
                     "--systems", "ctrl-tmap", "--param", "n=3000", "--out", str(out))  # fmt: skip
    assert result.exit_code == 0, result.output
    doc = json.loads((out / "tom.json").read_text())
    assert doc["meta"]["switches"]["param"] == {"vadd": {"n": 3000}}
    rows = ResultStore(out).query('SELECT system, "param.n" FROM runs ORDER BY system')
    assert rows.to_pylist() == [{"system": "baseline", "param.n": 3000},
                                {"system": "ctrl-tmap", "param.n": 3000}]  # fmt: skip
    plain = ndpsim.reproduce("tom", size="tiny", workloads=["vadd"], systems=["ctrl-tmap"],
                             jobs=1, runs=out)  # fmt: skip
    assert plain["meta"]["reused"] == {}  # the size's own input is another run
    refused = _invoke("reproduce", "tom", "--size", "tiny", "--workloads", "vadd",
                      "--param", "nodes=9")  # fmt: skip
    assert refused.exit_code == 2 and "none of the workloads (vadd)" in refused.output


def test_a_reproductions_default_directory_names_its_parameters(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = _invoke("reproduce", "tom", "--size", "tiny", "--workloads", "vadd", "--jobs", "1",
                     "--systems", "ctrl-tmap", "--param", "n=3000")  # fmt: skip
    assert result.exit_code == 0, result.output
    written = tmp_path / "results" / "tom-tiny-vadd-n=3000-only-baseline-ctrl-tmap" / "tom.json"
    assert written.is_file()
