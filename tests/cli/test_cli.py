"""The ndpsim command: output, JSON, and one-line errors with exit status 2."""

from __future__ import annotations

import io
import json
import os
import struct
import subprocess
import sys
import zipfile

import numpy as np
import pytest
from typer.testing import CliRunner

from ndpsim.cli.main import app
from ndpsim.systems.gpu.summary import offload_rows
from ndpsim.trace.saved import read_saved_trace
from ndpsim.workloads import run_workload
from ndpsim.workloads.base import KERNEL_DIR
from tests.trace_events import problems

runner = CliRunner()


@pytest.mark.parametrize("ptx", sorted(KERNEL_DIR.glob("*.ptx")), ids=lambda p: p.stem)
def test_analyze_succeeds_on_every_committed_kernel(ptx):
    result = runner.invoke(app, ["analyze", str(ptx)])
    assert result.exit_code == 0, result.output
    assert "basic blocks" in result.output and "instruction classes" in result.output


def test_analyze_json_describes_blocks_loops_and_liveness():
    result = runner.invoke(app, ["analyze", str(KERNEL_DIR / "lib.ptx"), "--json", "-"])
    assert result.exit_code == 0
    report = json.loads(result.output)
    (function,) = report["functions"]
    assert function["name"] == "lib_path_portfolio"
    assert {"blocks", "loops", "instructions", "instruction_mix"} <= set(function)
    assert any(loop["trip_count"] == "entry" for loop in function["loops"])
    first = function["instructions"][0]
    assert {"pc", "text", "class", "live_in", "live_out"} <= set(first)


def test_errors_are_one_line_with_exit_status_2(tmp_path):
    bad = tmp_path / "bad.ptx"
    bad.write_text(".version 9.0\n.target sm_75\n.visible .entry k()\n{\nmov.u32 %r1 1;\n}\n")
    result = runner.invoke(app, ["analyze", str(bad)])
    assert result.exit_code == 2
    assert "bad.ptx:5:" in result.output and "Traceback" not in result.output
    missing = runner.invoke(app, ["analyze", str(KERNEL_DIR / "vadd.ptx"), "-k", "nope"])
    assert missing.exit_code == 2 and "defines: vadd" in missing.output
    unknown = runner.invoke(app, ["workloads", "run", "--workloads", "nope"])
    assert unknown.exit_code == 2 and "unknown workload 'nope'" in unknown.output


def test_workloads_run_checks_saves_traces_and_writes_json(tmp_path):
    out = tmp_path / "table.json"
    result = runner.invoke(
        app,
        ["workloads", "run", "--size", "tiny", "--workloads", "vadd,bfs", "--json", str(out),
         "--save-traces", str(tmp_path / "traces")],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    rows = json.loads(out.read_text())["workloads"]
    assert [r["workload"] for r in rows] == ["vadd", "bfs"]
    assert all(r["check"] == "ok" for r in rows)
    traces = read_saved_trace(tmp_path / "traces" / "bfs-tiny").load_traces()
    assert sum(t.num_warp_instructions for t in traces) == rows[1]["warp_instructions"]
    assert rows[0]["touched_bytes"] == run_workload("vadd", "tiny").touched_bytes(128)


@pytest.mark.parametrize(
    ("option", "message"),
    [
        ("--max-launches=2", "budget of 2 launches"),
        ("--max-instructions=1000", "budget of 1,000 warp-instructions per launch"),
        ("--max-trace-gb=0.0001", "--max-trace-gb"),
        ("--max-device-gb=0.0001", "--max-device-gb"),
    ],
)
def test_a_runaway_bound_stops_the_run_in_one_line(option, message):
    result = runner.invoke(app, ["workloads", "run", "--size", "tiny", "--workloads", "km", option])
    assert result.exit_code == 2, result.output
    assert message in result.output and "Traceback" not in result.output


def test_workloads_list_and_version():
    listing = runner.invoke(app, ["workloads", "list"])
    assert listing.exit_code == 0 and "vadd" in listing.output and "lib" in listing.output
    version = runner.invoke(app, ["--version"])
    assert version.exit_code == 0 and version.output.startswith("ndpsim ")


def test_python_m_ndpsim_is_the_command_with_every_command_registered():
    done = subprocess.run([sys.executable, "-m", "ndpsim", "--help"], capture_output=True,
                          text=True, env={**os.environ, "COLUMNS": "200"})  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "Usage: ndpsim " in done.stdout
    listed = {line.split()[1] for line in done.stdout.splitlines() if line.startswith("│ ")}
    assert {"run", "reproduce", "sweep", "results", "workloads"} <= listed


def test_run_prints_a_summary_and_writes_every_counter_as_json(tmp_path):
    out = tmp_path / "[bold]" / "vadd.json"  # brackets a style tag would swallow
    result = runner.invoke(
        app,
        ["run", "--system", "gpu-baseline", "--workload", "vadd", "--size", "tiny",
         "--set", "sm.count=16", "--json", str(out)],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    for row in ("core cycles", "IPC", "GPU -> memory", "memory -> GPU", "row-buffer hit rate",
                "L1 hit rate", "L2 hit rate"):  # fmt: skip
        assert row in result.output
    document = json.loads(out.read_text())
    assert document["workload"] == "vadd" and document["system"] == "gpu-baseline"
    assert document["stats"]["sm"]["total"]["warp_instructions"] > 0
    assert len(document["stats"]["sm"]["instances"]) == 16  # the override took effect
    assert document["energy_nj"]["total"] > 0
    assert f"full statistics: {out}" in "".join(result.output.split("\n"))
    assert document["overrides"] == {"sm": {"count": 16}}
    assert document["configuration"]["system"]["sm"]["count"] == 16
    assert document["configuration"]["dram"]["name"] == "ddr3-1600"
    assert document["workload_parameters"] == {"n": 5000, "block": 256}
    assert set(document["provenance"]) >= {"ndpsim", "git_revision", "numpy", "created"}


def test_runs_of_different_configurations_get_different_default_files(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for extra in ([], ["--set", "sm.count=16"], ["--seed", "1"]):
        result = runner.invoke(app, ["run", "--system", "gpu-baseline", "--workload", "vadd",
                                     "--size", "tiny", *extra])  # fmt: skip
        assert result.exit_code == 0, result.output
    names = sorted(p.name for p in (tmp_path / "results").iterdir())
    assert len(names) == 3
    assert all(n.startswith("run-gpu-baseline-vadd-tiny-s") for n in names), names


def test_run_summarizes_what_a_near_data_system_offloaded(tmp_path):
    out = tmp_path / "sndp.json"
    result = runner.invoke(
        app, ["run", "--system", "sndp-ndp", "--workload", "vadd", "--size", "tiny", "--json",
              str(out)],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    offload = json.loads(out.read_text())["summary"]["offload"]
    assert offload["offloaded"] == offload["instances"] > 0  # the preset offloads every one
    assert offload["ratio_mean"] == 1.0
    for row in ("scheduler cycles without issue", "offloaded instances",
                f"{offload['instances']:,} of {offload['instances']:,} (100.0%)",
                "read-and-forward packets", "offload ratio"):  # fmt: skip
        assert row in result.output
    assert "kept on the GPU" not in result.output and "data mapping" not in result.output


def test_offload_rows_say_why_instances_stayed_on_the_gpu():
    tom = {"instances": 100, "offloaded": 60, "candidate_blocks": 3,
           "offloaded_instruction_fraction": 0.25, "declined_condition": 5,
           "declined_pending": 20, "declined_busy": 0, "declined_ratio": 0, "declined_cache": 0,
           "learning_us": 1.5, "colocation": 0.5,
           "mapping": {"bits": "9:8", "learning_instances": 2, "colocation_baseline": 0.25,
                       "colocation_learned": 0.75},
           "candidates": {"rule": "loops", "blocks": 3, "instructions_max": 40,
                          "live_registers_max": 12, "thread_live_registers_max": 20},
           "redundant_instructions": 300, "stack_l1_flushes": 60}  # fmt: skip
    rows = dict(offload_rows(tom, 10.0))
    assert rows["candidate blocks"] == (
        "3 (loops rule), up to 40 instructions and 12 live registers (a thread: 20)"
    )
    assert rows["offloading costs"] == (
        "300 warp instructions run on the GPU before a block's first access, 60 stack-SM L1 flushes"
    )
    assert rows["offloaded instances"] == "60 of 100 (60.0%), 3 candidate blocks"
    assert rows["thread instructions near memory"] == "25.0%"
    assert rows["kept on the GPU by"] == (
        "trip count below threshold 5, stack SM full 20, learning phase or no memory access 15"
    )
    assert rows["data mapping"].startswith("stack bits 9:8 learned from 2 instances in 1.50 us")
    assert rows["data mapping"].endswith("co-location 0.25 -> 0.75")
    assert "offload ratio" not in rows
    assert offload_rows(None, 10.0) == []


def test_run_rejects_a_bad_override_naming_the_key():
    result = runner.invoke(
        app, ["run", "--system", "gpu-baseline", "--workload", "vadd", "--set", "sm.count=0"]
    )
    assert result.exit_code == 2
    assert "sm.count" in result.output and "Traceback" not in result.output
    unknown = runner.invoke(app, ["run", "--system", "nope", "--workload", "vadd"])
    assert unknown.exit_code == 2 and "tom-baseline" in unknown.output


def test_an_error_quoting_brackets_is_printed_as_written():
    """Rich would read ``[l1]`` as a style tag and print nothing of it."""
    result = runner.invoke(
        app, ["run", "--system", "gpu-baseline", "--workload", "vadd", "--set", "l1.frob=1"]
    )
    assert result.exit_code == 2
    assert "unknown key 'l1.frob' ([l1] takes size_bytes, ways" in " ".join(result.output.split())


def _commands_writing_to(a_file, a_dir):
    """Each command that writes results, asked to write where it cannot: the path of a file
    under an existing file, a directory given as a file, a file given as a directory."""
    blocked = str(a_file / "x.json")
    run = ["run", "--system", "gpu-baseline", "--workload", "vadd", "--size", "tiny"]
    tom = ["reproduce", "tom", "--size", "tiny", "--workloads", "vadd", "--systems", "ctrl-tmap"]
    sndp = ["reproduce", "sndp", "--size", "tiny", "--workloads", "vadd", "--systems", "naive"]
    suite = ["workloads", "run", "--size", "tiny", "--workloads", "vadd"]
    return [
        ([*run, "--json", blocked], "--json", "cannot write there"),
        ([*run, "--json", str(a_dir)], "--json", "is a directory"),
        ([*run, "--json", "-", "--timeline", blocked], "--timeline", "cannot write there"),
        ([*run, "--json", "-", "--timeline", str(a_dir)], "--timeline", "is a directory"),
        ([*tom, "--out", str(a_file)], "--out", "is a file"),
        ([*tom, "--out", str(a_dir), "--json", blocked], "--json", "cannot write there"),
        ([*sndp, "--figure5", "--out", str(a_dir), "--json", blocked], "--json", "cannot write"),
        ([*suite, "--save-traces", str(a_file)], "--save-traces", "is a file"),
        ([*suite, "--json", blocked], "--json", "cannot write there"),
        (["dram-trace", str(a_file), "--json", blocked], "--json", "cannot write there"),
    ]  # fmt: skip


def test_a_command_that_could_not_write_its_results_fails_before_doing_the_work(tmp_path):
    a_file, a_dir = tmp_path / "afile", tmp_path / "adir"
    a_file.write_text("LD 0x40\n")
    a_dir.mkdir()
    for args, option, reason in _commands_writing_to(a_file, a_dir):
        result = runner.invoke(app, args, env={"COLUMNS": "200"})
        assert result.exit_code == 2, (args, result.output)
        assert option in result.output and reason in result.output, result.output
        assert "Traceback" not in result.output
        # nothing ran: no summary, no table, no results named
        assert "results:" not in result.output and "full statistics" not in result.output
    assert list(a_dir.iterdir()) == [] and a_file.read_text() == "LD 0x40\n"


@pytest.mark.parametrize("setting,complaint", [
    ("memory.cubes=3", "memory.cubes must be a power of two"),
    ("l1.line_bytes=64", "l1.line_bytes and l2.line_bytes must be 128"),
    ("l1.mshrs=8", "l1.mshrs is 8"),
])  # fmt: skip
def test_a_system_the_model_cannot_build_is_refused_before_interpreting(
    monkeypatch, setting, complaint
):
    def interpret(*args, **kwargs):
        raise AssertionError("the workload was interpreted before the system was checked")

    monkeypatch.setattr("ndpsim.experiments.inputs.execute_workload", interpret)
    args = ["run", "--system", "tom-ndp", "--workload", "vadd", "--size", "tiny", "--set", setting]
    result = runner.invoke(app, args, env={"COLUMNS": "200"})
    assert result.exit_code == 2 and complaint in result.output, result.output


@pytest.mark.parametrize("command", [
    ["run", "--system", "gpu-baseline", "--workload", "vadd"],
    ["workloads", "run", "--workloads", "vadd"],
    ["reproduce", "tom"],
    ["reproduce", "sndp"],
])  # fmt: skip
def test_a_negative_seed_is_refused_before_anything_runs(command):
    result = runner.invoke(app, [*command, "--size", "tiny", "--seed", "-1"])
    assert result.exit_code == 2 and "--seed" in result.output
    assert "Traceback" not in result.output


def test_systems_lists_the_presets():
    result = runner.invoke(app, ["systems"])
    assert result.exit_code == 0
    assert "gpu-baseline" in result.output and "sndp-baseline" in result.output


def test_the_listed_descriptions_are_those_the_presets_load_with():
    # the listing reads the files without validating them; a loaded preset has the same
    from ndpsim.systems import load_system_config
    from ndpsim.systems.kinds import system_preset_descriptions

    for name, description in system_preset_descriptions():
        assert description == load_system_config(name).description, name


def test_systems_shows_every_key_of_a_preset_and_what_set_it():
    result = runner.invoke(
        app, ["systems", "tom-ndp", "--set", "sm.count=32"], env={"COLUMNS": "200"}
    )
    assert result.exit_code == 0, result.output
    rows = {line.split("│")[1].strip(): line for line in result.output.splitlines() if "│" in line}
    assert "32" in rows["sm.count"] and "--set" in rows["sm.count"]
    assert (
        "tom-baseline.toml:" in rows["sm.clock_ghz"] and "[sm] TOM Table 1" in rows["sm.clock_ghz"]
    )
    assert "default" in rows["sm.latency_alu"]
    bad = runner.invoke(app, ["systems", "tom-ndp", "--set", "sm.cuont=1"])
    assert bad.exit_code == 2 and "did you mean 'count'?" in bad.output


def test_dram_trace_reports_cycles_row_outcomes_and_latency(tmp_path):
    trace = tmp_path / "t.ldst"
    lines = [f"LD {64 * i:#x}" for i in range(256)] + [
        f"ST {1 << 20 | 64 * i:#x}" for i in range(8)
    ]
    trace.write_text("\n".join(lines) + "\n")
    out = tmp_path / "figures.json"
    args = ["dram-trace", str(trace), "--preset", "hbm2-anchor", "--inject-per-cycle", "1"]
    result = runner.invoke(app, [*args, "--json", str(out)])
    assert result.exit_code == 0, result.output
    assert "DRAM cycles" in result.output and "row hits" in result.output
    figures = json.loads(out.read_text())
    assert figures["requests"] == 264
    assert figures["cycles"] >= 264  # one request offered per cycle
    assert figures["row_hits"] + figures["row_misses"] + figures["row_conflicts"] == 264
    assert figures["average_read_latency_cycles"] > 0
    bad = tmp_path / "bad.ldst"
    bad.write_text("LD 0x40\nXX 0x80\n")
    failed = runner.invoke(app, ["dram-trace", str(bad)])
    assert failed.exit_code == 2 and "bad.ldst:2:" in failed.output


def _one_line_error(result) -> str:
    """The error a command printed: exit status 2, one line, no traceback."""
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.output
    return lines[0]


def _huge_npz(path):
    header = b"{'descr': '<u8', 'fortran_order': False, 'shape': (1099511627776,), }\n"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("addr.npy", b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header))
                         + header + b"\0" * 8)  # fmt: skip
        archive.writestr("is_write.npy", b"")


@pytest.mark.parametrize("name,write,complaint", [
    ("arabic.trace", lambda p: p.write_text("LD 0x\u0663\n"), ":1: '0x\u0663' is not an address"),
    ("plus.trace", lambda p: p.write_text("LD 0x40\nST 0x+10\n"), ":2: '0x+10' is not an address"),
    ("empty.trace", lambda p: p.write_text("# nothing\n\n"), "no requests in "),
    ("empty.npz", lambda p: np.savez(p, addr=np.zeros(0, np.uint64), is_write=np.zeros(0)),
     "no requests in "),
    ("npy.npz", lambda p: p.write_bytes(_saved_npy(np.arange(3))),
     "a single .npy array, not an .npz archive"),
    ("huge.npz", _huge_npz, "member 'addr.npy': its header claims (1099511627776,) elements"),
    ("texts.npz", lambda p: zipfile.ZipFile(p, "w").close(), "expected arrays 'addr' and"),
])  # fmt: skip
def test_dram_trace_refuses_a_bad_trace_with_one_line(tmp_path, name, write, complaint):
    path = tmp_path / name
    write(path)
    line = _one_line_error(runner.invoke(app, ["dram-trace", str(path)], env={"COLUMNS": "80"}))
    assert complaint in line and name in line


def _saved_npy(array) -> bytes:
    buffer = io.BytesIO()
    np.save(buffer, array)
    return buffer.getvalue()


@pytest.mark.parametrize("setting,complaint", [
    ("sm.count=true", "'sm.count': Input should be a valid integer (got True)"),
    ("sm.count=9223372036854775808", "'sm.count': Input should be less than or equal to 4096"),
    ("memory.cubes=1000000000", "'memory.cubes': Input should be less than or equal to 64"),
    ("l1.mshrs=10000000000", "'l1.mshrs': Input should be less than or equal to 4096"),
    ("sm.count=" + "-" * 9_000 + "1", "override of 'sm.count': the value is nested too deeply"),
    ("sm.count=" + "[" * 100_000, "characters long; at most 10000 are read"),
    ("sm.count=1if", "'sm.count': Input should be a valid integer (got '1if')"),
])  # fmt: skip
def test_a_bad_set_value_is_refused_before_interpreting(monkeypatch, setting, complaint):
    def interpret(*args, **kwargs):
        raise AssertionError("the workload was interpreted before the config was checked")

    monkeypatch.setattr("ndpsim.experiments.inputs.execute_workload", interpret)
    args = ["run", "--system", "tom-ndp", "--workload", "vadd", "--size", "tiny", "--set", setting]
    line = _one_line_error(runner.invoke(app, args, env={"COLUMNS": "80"}))
    assert complaint in line


def test_a_system_too_big_for_memory_is_refused_before_interpreting(monkeypatch):
    def interpret(*args, **kwargs):
        raise AssertionError("the workload was interpreted before the memory was checked")

    monkeypatch.setattr("ndpsim.experiments.inputs.execute_workload", interpret)
    monkeypatch.setattr("ndpsim.hostmemory.available_bytes", lambda: 1 << 30)
    args = ["run", "--system", "gpu-baseline", "--workload", "vadd", "--size", "tiny",
            "--set", "sm.count=4096", "--set", "l1.size_bytes=1073741824"]  # fmt: skip
    line = _one_line_error(runner.invoke(app, args, env={"COLUMNS": "80"}))
    assert "system 'gpu-baseline' needs about" in line and "more than the 1.0 GiB" in line
    assert "L1s (sm.count x l1.size_bytes, l1.mshrs)" in line


def test_a_dram_too_big_for_memory_is_refused_before_reading_the_trace(tmp_path, monkeypatch):
    monkeypatch.setattr("ndpsim.hostmemory.available_bytes", lambda: 1 << 30)
    monkeypatch.setattr("ndpsim.cli.dram.read_requests", lambda *args: pytest.fail("trace read"))
    args = ["dram-trace", str(tmp_path / "never-read.trace"), "--set", "organization.banks=256",
            "--set", "organization.subarrays=1024"]  # fmt: skip
    line = _one_line_error(runner.invoke(app, args, env={"COLUMNS": "80"}))
    assert "DRAM preset 'hbm2' needs about" in line and "organization.*" in line


def test_run_writes_a_timeline_perfetto_loads(tmp_path):
    out = tmp_path / "timeline.json"
    result = runner.invoke(app, ["run", "--system", "sndp-ndp", "-w", "vadd", "-s", "tiny",
                                 "--json", str(tmp_path / "run.json"), "--timeline", str(out),
                                 "--timeline-window-ns", "20"], env={"COLUMNS": "200"})  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "timeline (20 ns windows)" in result.output
    document = json.loads(out.read_text())
    assert not problems(document)
    assert document["otherData"]["system"] == "sndp-ndp"
    assert document["otherData"]["workload"] == "vadd"
    processes = {e["args"]["name"] for e in document["traceEvents"] if e["name"] == "process_name"}
    assert processes == {"SMs", "links", "DRAM channels", "offloading", "offload policy"}
