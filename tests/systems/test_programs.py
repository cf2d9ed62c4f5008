"""Several programs at once on one system: each on its own SMs and in its own address space,
its launches in order, its statistics apart; one program run so is the program alone."""

from __future__ import annotations

import json

import numpy as np
import pytest
from typer.testing import CliRunner

from ndpsim import api
from ndpsim.cli.main import app
from ndpsim.engine.timeline import Timeline
from ndpsim.errors import ConfigError
from ndpsim.systems import load_system, run_programs_on
from ndpsim.systems.skeleton.program import Program
from ndpsim.workloads import kernel_module, run_workload


@pytest.fixture(scope="module")
def programs():
    out = {}
    for name in ("bfs", "spmv", "vadd"):
        run = run_workload(name, "tiny", 0)
        out[name] = Program(name, run.traces, kernel_module(run.workload.module_name),
                            run.memory)  # fmt: skip
    return out


def _document(result) -> dict:
    document = json.loads(json.dumps(result.as_dict()))
    document.pop("wall_seconds")
    return document


@pytest.mark.parametrize("name", ["bfs", "spmv"])
def test_one_program_run_as_a_mix_is_the_program_alone(programs, name):
    system = load_system("gpu-baseline")
    program = programs[name]
    mixed = _document(system.run_programs([program]))
    alone = _document(system.run(program.traces, program.module, program.memory))
    assert mixed["summary"].pop("programs")[name]["time_us"] == alone["summary"]["time_us"]
    mixed["stats"].pop("programs")
    assert mixed == alone  # every counter: launches end and start as a lone program's do


def test_programs_share_the_gpu_on_their_own_sms_and_report_apart(programs):
    system = load_system("gpu-baseline")
    bfs, spmv = programs["bfs"], programs["spmv"]
    result = system.run_programs([bfs, spmv])
    figures = result.summary["programs"]
    assert list(figures) == ["bfs", "spmv"]
    assert figures["bfs"]["sms"] == figures["spmv"]["sms"] == system.config.sm.count // 2
    for program in (bfs, spmv):
        mine = figures[program.name]
        assert mine["launches"] == len(program.traces)
        assert mine["warp_instructions"] == sum(t.num_warp_instructions for t in program.traces)
        ctas = result.stats["programs"][program.name]["ctas"]
        assert ctas == sum(t.info.num_ctas for t in program.traces)  # every launch ran
        assert 0 < mine["time_us"] <= result.time_ps / 1e6
    per_program = np.array([list(result.stats["programs"][n].values()) for n in figures])
    assert (per_program.sum(axis=0) == list(result.stats["sm"]["total"].values())).all()
    assert result.kernels == len(bfs.traces) + len(spmv.traces)
    assert max(p["time_us"] for p in figures.values()) == result.time_ps / 1e6
    # the same mix again: the same result
    assert _document(system.run_programs([bfs, spmv])) == _document(result)


def test_each_program_has_its_own_address_space(programs):
    """Two copies of one program touch the same virtual addresses; in a mix they are two
    programs, so the DRAM sees twice the distinct lines (none shared through the L2)."""
    system = load_system("gpu-baseline")
    vadd = programs["vadd"]
    alone = system.run(vadd.traces, vadd.module, vadd.memory)
    twice = system.run_programs([vadd, Program("vadd.2", vadd.traces, vadd.module, vadd.memory)])
    assert twice.summary["dram_reads"] == 2 * alone.summary["dram_reads"]


def test_a_mix_can_be_stepped(programs):
    system = load_system("gpu-baseline")
    mix = [programs["bfs"], programs["spmv"]]
    stepped = system.start_programs(mix)
    while not stepped.advance(events=20_000):
        assert stepped.view.counters()["sm"]["warp_instructions"] >= 0
    assert _document(stepped.result) == _document(system.run_programs(mix))


def test_what_cannot_run_several_programs_is_refused(programs):
    mix = [programs["bfs"], programs["spmv"]]
    with pytest.raises(ConfigError, match="without near-data processing"):
        run_programs_on(load_system("tom-ndp"), mix)
    with pytest.raises(ConfigError, match="2 programs need at least as many cores"):
        run_programs_on(load_system("gpu-baseline", {"sm": {"count": 1}}), mix)
    with pytest.raises(ConfigError, match="'bfs_expand' does not fit on an SM"):
        run_programs_on(load_system("gpu-baseline", {"sm": {"warps": 1}}), mix)


def test_run_names_every_program_of_a_mix(tmp_path):
    out = tmp_path / "mix.json"
    done = CliRunner().invoke(app, ["run", "--system", "gpu-baseline", "--workload",
                                    "bfs,spmv,bfs", "--size", "tiny", "--json", str(out)],
                              env={"COLUMNS": "160"})  # fmt: skip
    assert done.exit_code == 0, done.output
    assert "program spmv" in done.output and "program bfs.2" in done.output
    document = json.loads(out.read_text())
    assert document["workload"] == "bfs+spmv+bfs.2"
    assert [p["name"] for p in document["input"]["programs"]] == ["bfs", "spmv", "bfs.2"]
    assert list(document["summary"]["programs"]) == ["bfs", "spmv", "bfs.2"]
    refused = CliRunner().invoke(app, ["run", "--system", "gpu-baseline", "--workload",
                                       "bfs,spmv", "--param", "n=64"])  # fmt: skip
    assert refused.exit_code == 2 and "--param applies to one workload" in refused.output


def test_the_api_runs_a_mix():
    result = api.run("gpu-baseline", workload="vadd,spmv", size="tiny")
    assert list(result.summary["programs"]) == ["vadd", "spmv"]


def test_a_mix_records_a_timeline_whose_totals_are_its_counters(programs):
    timeline = Timeline(100_000)
    result = run_programs_on(load_system("gpu-baseline"), [programs["vadd"], programs["spmv"]],
                             timeline=timeline)  # fmt: skip
    clocks = sum(unit["clocks"] for unit in timeline.totals("SMs").values())
    assert clocks == result.stats["sm"]["total"]["clocks"]
