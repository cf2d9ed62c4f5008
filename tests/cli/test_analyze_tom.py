"""``ndpsim analyze --tom``: TOM's offload candidates as a table and as JSON."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from ndpsim.cli.main import app
from ndpsim.workloads.base import KERNEL_DIR

runner = CliRunner()


def test_analyze_tom_prints_the_candidates_of_each_kernel():
    result = runner.invoke(app, ["analyze", "--tom", str(KERNEL_DIR / "lib.ptx")], env={
        "COLUMNS": "200"
    })  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "TOM offload candidates" in result.output
    assert "%r56 >= 4" in result.output and "RX" in result.output
    assert "basic blocks" not in result.output  # --tom replaces the usual report


def test_analyze_tom_json_lists_candidates_machine_readably():
    result = runner.invoke(app, ["analyze", "--tom", "--json", "-", str(KERNEL_DIR / "vadd.ptx")])
    assert result.exit_code == 0, result.output
    (function,) = json.loads(result.output)["functions"]
    assert function["name"] == "vadd"
    (candidate,) = function["tom_candidates"]
    assert {"begin_pc", "end_pc", "live_in", "live_out", "n_ld", "n_st", "bw_tx", "bw_rx",
            "tag", "threshold", "condition", "loop_kind"} <= set(candidate)  # fmt: skip
    assert (candidate["n_ld"], candidate["n_st"], candidate["tag_text"]) == (2, 1, "TX+RX")


def test_analyze_tom_says_when_a_kernel_has_no_candidate():
    result = runner.invoke(app, ["analyze", "--tom", str(KERNEL_DIR / "hist.ptx")])
    assert result.exit_code == 0, result.output
    assert "0 TOM offload candidates" in result.output


def test_analyze_tom_blocks_chooses_the_rule_and_reports_live_registers():
    cfd = str(KERNEL_DIR / "cfd.ptx")

    def flux(rule):
        result = runner.invoke(app, ["analyze", "--tom", "--json", "-", "--blocks", rule, cfd])
        assert result.exit_code == 0, result.output
        functions = {f["name"]: f for f in json.loads(result.output)["functions"]}
        return functions["cfd_flux"]

    loops, maximal = flux("loops"), flux("maximal")
    assert (loops["blocks"], maximal["blocks"]) == ("loops", "maximal")
    # the maximal rule takes the whole thread with its neighbour loop; the loops rule the loop
    # and its set-up, without the element's own loads before it and the stores after it
    (whole,) = maximal["tom_candidates"]
    assert whole["live_registers"] == maximal["thread_live_registers"] == 58
    (loop,) = loops["tom_candidates"]
    assert whole["begin_pc"] < loop["begin_pc"] and loop["end_pc"] < whole["end_pc"]
    assert (loop["n_st"], whole["n_st"]) == (0, 5)
    refused = runner.invoke(app, ["analyze", "--tom", "--blocks", "largest", cfd])
    assert refused.exit_code != 0 and "loops, maximal" in refused.output


def test_analyze_shows_any_registered_pass_by_name():
    by_flag = runner.invoke(app, ["analyze", "--tom", "--blocks", "maximal", "--json", "-",
                                  str(KERNEL_DIR / "lib.ptx")])  # fmt: skip
    by_name = runner.invoke(app, ["analyze", "--pass", "tom-maximal", "--json", "-",
                                  str(KERNEL_DIR / "lib.ptx")])  # fmt: skip
    assert by_name.exit_code == 0, by_name.output
    assert json.loads(by_name.output) == json.loads(by_flag.output)
    unknown = runner.invoke(app, ["analyze", "--pass", "nope", str(KERNEL_DIR / "lib.ptx")])
    assert unknown.exit_code == 2
    assert (
        "unknown offload pass 'nope'; registered: alp-segments, mpu-locations, sndp, tom-loops, "
        "tom-maximal" in unknown.output
    )
