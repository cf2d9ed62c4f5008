"""``ndpsim analyze --sndp``: SNDP's offload blocks as a table and as JSON."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from ndpsim.cli.main import app
from ndpsim.workloads.base import KERNEL_DIR

runner = CliRunner()


def test_analyze_sndp_prints_the_blocks_of_each_kernel():
    result = runner.invoke(app, ["analyze", "--sndp", str(KERNEL_DIR / "stcl.ptx")], env={
        "COLUMNS": "200"
    })  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "SNDP offload blocks" in result.output and "2 indirect loads" in result.output
    for column in ("pcs", "NSU instr", "live in", "live out", "N_LD", "N_ST", "score"):
        assert column in result.output
    assert "%f48" in result.output and "yes" in result.output  # an accumulator; an indirect load
    assert "basic blocks" not in result.output  # --sndp replaces the usual report


def test_analyze_sndp_json_lists_blocks_with_the_role_of_every_instruction():
    result = runner.invoke(app, ["analyze", "--sndp", "--json", "-", str(KERNEL_DIR / "vadd.ptx")])
    assert result.exit_code == 0, result.output
    (function,) = json.loads(result.output)["functions"]
    assert function["name"] == "vadd" and function["num_instructions"] == 22
    (block,) = function["sndp_blocks"]
    assert {"begin_pc", "end_pc", "nsu_instructions", "live_in", "live_out", "n_ld", "n_st",
            "score", "indirect", "roles", "tag"} <= set(block)  # fmt: skip
    assert len(block["roles"]) == block["end_pc"] - block["begin_pc"] + 1
    assert [r for r in block["roles"] if r != "gpu"] == ["load", "load", "nsu", "store"]
    assert (block["n_ld"], block["n_st"], block["score"], block["indirect"]) == (2, 1, 12, False)
    assert block["nsu_instructions"] == 4


def test_analyze_sndp_says_when_a_kernel_has_no_block():
    result = runner.invoke(app, ["analyze", "--sndp", str(KERNEL_DIR / "hist.ptx")])
    assert result.exit_code == 0, result.output
    assert "0 SNDP offload blocks" in result.output


def test_analyze_refuses_tom_and_sndp_together():
    result = runner.invoke(app, ["analyze", "--tom", "--sndp", str(KERNEL_DIR / "vadd.ptx")])
    assert result.exit_code == 2
    assert "not both" in result.output
