"""What ``ndpsim run`` simulates besides the suite: a workload in a .py file (the example of
docs/examples, as CI runs it), a kernel of your own, and a saved trace, which replays to the
result of the run it saved; and ``dram-trace`` on a saved trace."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ndpsim.cli.main import app
from ndpsim.trace.dram_requests import trace_requests
from ndpsim.trace.saved import MANIFEST, read_saved_trace
from ndpsim.workloads import base, execute_workload
from ndpsim.workloads.own_kernel import OwnKernel
from ndpsim.workloads.replay import save_run
from tests.workloads.own_kernels import write_ptx

runner = CliRunner()
EXAMPLES = Path(__file__).resolve().parents[2] / "docs" / "examples"
SAXPY_ARGS = ["--arg", "i32:5000", "--arg", "f32:2.5", "--arg", "buf:f32:5000:uniform(0,1)",
              "--arg", "buf:f32:5000:uniform(0,1)"]  # fmt: skip
#: What differs between two results files of the same simulation run from different inputs.
NOT_RESULTS = ("input", "provenance", "wall_seconds")


@pytest.fixture(autouse=True)
def own_registry(monkeypatch):
    """The example registers saxpy with the suite when it is loaded; forgotten after each test,
    so that the tests after these see the suite alone (its help lists the suite's names)."""
    base.workload_names()
    monkeypatch.setattr(base, "_REGISTRY", dict(base._REGISTRY))


def _run(*args: str, out: Path) -> dict:
    result = runner.invoke(app, ["run", *args, "--json", str(out)], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    return json.loads(out.read_text())


def _one_line_error(*args: str) -> str:
    result = runner.invoke(app, list(args), env={"COLUMNS": "300"})
    assert result.exit_code == 2, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.output
    return lines[0]


def test_the_example_workload_runs_through_the_cli(tmp_path):
    example = EXAMPLES / "saxpy_workload.py"
    document = _run("--system", "gpu-baseline", "--workload", str(example), "--size", "tiny",
                    out=tmp_path / "saxpy.json")  # fmt: skip
    assert document["workload"] == "saxpy" and document["size"] == "tiny"
    assert document["workload_parameters"] == {"n": 5000, "a": 2.5, "block": 256}
    assert document["input"]["kind"] == "file" and document["input"]["path"] == str(example)
    assert document["stats"]["sm"]["total"]["warp_instructions"] > 0
    own = _run("--system", "gpu-baseline", "--ptx", str(EXAMPLES / "saxpy.ptx"), "--grid", "20",
               "--block", "256", *SAXPY_ARGS, out=tmp_path / "own.json")  # fmt: skip
    # the same launch of the same kernel over buffers of the same sizes: the same cycles
    assert own["time_ps"] == document["time_ps"] and own["stats"] == document["stats"]
    assert own["workload"] == "saxpy" and own["size"] == "custom" and own["seed"] == 0
    assert own["workload_parameters"]["args"] == SAXPY_ARGS[1::2]
    assert own["input"]["kind"] == "ptx" and len(own["input"]["sha256"]) == 64
    assert set(own["provenance"]) >= {"ndpsim", "git_revision", "created"}


def test_an_own_kernel_launches_in_three_dimensions_on_a_system(tmp_path):
    ptx = write_ptx(tmp_path, "WHERE3D")
    document = _run("--system", "sndp-ndp", "--ptx", str(ptx), "--grid", "2,3,2", "--block",
                    "4,2,3", "--arg", "buf:u32:288", out=tmp_path / "where.json")  # fmt: skip
    assert document["workload_parameters"]["grid"] == [2, 3, 2]
    assert document["stats"]["sm"]["total"]["warp_instructions"] > 0


def test_own_kernels_with_other_arguments_get_other_default_files(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    ptx = write_ptx(tmp_path, "WHERE3D")
    for count in ("288", "300"):
        args = ["run", "--system", "gpu-baseline", "--ptx", str(ptx), "--grid", "2,3,2",
                "--block", "4,2,3", "--arg", f"buf:u32:{count}"]  # fmt: skip
        assert runner.invoke(app, args).exit_code == 0
    names = sorted(p.name for p in (tmp_path / "results").iterdir())
    assert len(names) == 2 and all(
        n.startswith("run-gpu-baseline-where3d-custom-s0-") for n in names
    )


@pytest.fixture(scope="module")
def saved_bfs(tmp_path_factory):
    out = tmp_path_factory.mktemp("traces")
    result = runner.invoke(app, ["workloads", "run", "--size", "tiny", "--workloads", "bfs",
                                 "--seed", "1", "--save-traces", str(out)])  # fmt: skip
    assert result.exit_code == 0, result.output
    return out / "bfs-tiny"


@pytest.mark.parametrize("system", ["gpu-baseline", "tom-ndp", "sndp-ndp"])
def test_a_saved_trace_replays_to_the_result_of_its_run(tmp_path, saved_bfs, system):
    direct = _run("--system", system, "--workload", "bfs", "--size", "tiny", "--seed", "1",
                  out=tmp_path / "direct.json")  # fmt: skip
    replayed = _run("--system", system, "--trace", str(saved_bfs), out=tmp_path / "replay.json")
    assert {k: v for k, v in replayed.items() if k not in NOT_RESULTS} == {
        k: v for k, v in direct.items() if k not in NOT_RESULTS
    }
    assert replayed["input"]["kind"] == "trace" and replayed["input"]["format_version"] == 1
    assert replayed["input"]["seed"] == 1 and replayed["input"]["directory"] == str(saved_bfs)


def test_a_replay_may_take_another_seed_for_the_system(tmp_path, saved_bfs):
    document = _run("--system", "sndp-ndp", "--trace", str(saved_bfs), "--seed", "5",
                    out=tmp_path / "seed5.json")  # fmt: skip
    assert document["seed"] == 5 and document["input"]["seed"] == 1


def test_dram_trace_reads_the_requests_of_a_saved_trace(tmp_path, saved_bfs):
    out = tmp_path / "dram.json"
    result = runner.invoke(app, ["dram-trace", str(saved_bfs), "--preset", "hbm2", "--json",
                                 str(out)])  # fmt: skip
    assert result.exit_code == 0, result.output
    figures = json.loads(out.read_text())
    expected, _ = trace_requests(read_saved_trace(saved_bfs).load_traces(), 64)
    assert figures["requests"] == len(expected) > 0
    assert figures["row_hits"] + figures["row_misses"] + figures["row_conflicts"] == len(expected)


def test_a_saved_trace_without_requests_is_a_one_line_error(tmp_path):
    run = execute_workload(OwnKernel(write_ptx(tmp_path, "NOTHING"), None, "1", "32", []))
    saved = save_run(run, tmp_path / "nothing")
    line = _one_line_error("dram-trace", str(saved))
    assert "no requests in" in line and "its 1 launches access no memory" in line


def test_a_saved_trace_of_an_unknown_version_is_a_one_line_error(tmp_path, saved_bfs):
    copy = tmp_path / "copy"
    copy.mkdir()
    for file in saved_bfs.iterdir():
        (copy / file.name).write_bytes(file.read_bytes())
    manifest = json.loads((copy / MANIFEST).read_text())
    (copy / MANIFEST).write_text(json.dumps({**manifest, "version": 99}))
    for command in (["run", "--system", "gpu-baseline", "--trace", str(copy)],
                    ["dram-trace", str(copy)]):  # fmt: skip
        line = _one_line_error(*command)
        assert "saved-trace format version 99; this ndpsim reads version 1 only" in line


@pytest.mark.parametrize(("args", "complaint"), [
    ([], "give exactly one of --workload (a suite name or a .py file), --ptx and --trace; got "
         "none"),
    (["--workload", "vadd", "--trace", "x"], "got --workload and --trace"),
    (["--workload", "vadd", "--grid", "4"], "--grid describes the launch of a --ptx kernel"),
    (["--trace", "x", "--size", "tiny"], "--size applies to --workload; --trace keeps the size"),
    (["--ptx", "k.ptx", "--size", "tiny"], "--ptx runs the launch its options describe"),
    (["--ptx", str(EXAMPLES / "saxpy.ptx"), "--grid", "4"], "--ptx needs --block (X[,Y,Z])"),
    (["--ptx", str(EXAMPLES / "saxpy.ptx"), "--grid", "4", "--block", "32", "--arg", "i32:1"],
     "kernel 'saxpy' of"),
    (["--workload", "nope.py"], "nope.py: no such workload file"),
    (["--workload", "nope"], "unknown workload 'nope'"),
    (["--trace", "nowhere"], "nowhere: not a saved-trace directory"),
])  # fmt: skip
def test_run_takes_exactly_one_input_with_its_own_options(args, complaint, monkeypatch):
    def interpret(*args, **kwargs):
        raise AssertionError("the input was interpreted before its options were checked")

    monkeypatch.setattr("ndpsim.experiments.inputs.execute_workload", interpret)
    line = _one_line_error("run", "--system", "gpu-baseline", *args)
    assert complaint in line
