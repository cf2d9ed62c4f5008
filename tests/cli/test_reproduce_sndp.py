"""``ndpsim reproduce sndp``: the systems on the workloads, tables, JSON, CSV, PDF and PNG
files, and the Figure 5 study on its own."""

from __future__ import annotations

import csv
import json

import pytest
from typer.testing import CliRunner

from ndpsim.cli.main import app
from ndpsim.systems import system_preset_names

runner = CliRunner()
needs_ndp_preset = pytest.mark.skipif(
    "sndp-ndp" not in system_preset_names(), reason="the SNDP NDP system is not built yet"
)


def reproduce(tmp_path, *args):
    out, doc_path = tmp_path / "sndp", tmp_path / "sndp.json"
    result = runner.invoke(app, ["reproduce", "sndp", *args, "--out", str(out),
                                 "--json", str(doc_path)], env={"COLUMNS": "200"})  # fmt: skip
    assert result.exit_code == 0, result.output
    return result, out, json.loads(doc_path.read_text())


@needs_ndp_preset
def test_reproduce_sndp_runs_the_naive_system_against_the_baseline(tmp_path):
    result, out, doc = reproduce(tmp_path, "--size", "tiny", "--workloads", "vadd",
                                 "--systems", "baseline,naive", "--jobs", "1")  # fmt: skip
    assert "Figure 7" in result.output
    # a subset of SNDP's workloads: the paper's averages over all ten are not set beside ours
    assert "average (paper)" not in result.output
    assert "VADD" in result.output and "Figure 5" in result.output
    assert set(doc) >= {"baseline", "naive", "average", "mean", "paper", "meta", "figure5"}
    assert doc["baseline"]["vadd"]["speedup"] == 1.0
    naive = doc["naive"]["vadd"]
    assert naive["speedup"] > 0
    assert naive["offloaded_instance_fraction"] == pytest.approx(1.0)
    assert naive.get("credits_overdrawn", 0) == 0
    assert doc["paper"]["average"] == {}
    for stem in ("fig7_speedup", "fig8_no_issue", "fig10_energy", "fig5_target_nsu"):
        assert (out / f"{stem}.csv").exists() and (out / f"{stem}.png").stat().st_size > 0
        assert (out / f"{stem}.pdf").stat().st_size > 0


def test_reproduce_sndp_runs_the_two_baselines(tmp_path):
    _, out, doc = reproduce(tmp_path, "--size", "tiny", "--workloads", "vadd",
                            "--systems", "baseline-morecore", "--jobs", "1")  # fmt: skip
    assert doc["meta"]["variants"] == ["baseline", "baseline-morecore"]
    assert doc["baseline-morecore"]["vadd"]["speedup"] > 0
    assert "naive" not in doc
    parts = doc["baseline-morecore"]["vadd"]
    no_issue = parts["stall_unit_busy"] + parts["stall_dependency"] + parts["stall_idle"]
    assert no_issue == pytest.approx(parts["stall"])
    assert (out / "fig8_no_issue_stall_idle.csv").exists()


def test_reproduce_sndp_figure5_alone_simulates_nothing(tmp_path):
    result, out, doc = reproduce(tmp_path, "--figure5", "--seed", "2")
    assert "Figure 5" in result.output and "max (paper)" in result.output
    study = doc["figure5"]
    assert study["seed"] == 2 and study["paper_max_ratio"] == 1.15
    for s in study["studies"].values():
        assert all(p["optimal_bytes"] <= p["first_bytes"] for p in s["points"])
    for suffix in ("csv", "pdf", "png"):
        assert (out / f"fig5_target_nsu.{suffix}").exists()


@needs_ndp_preset
def test_reproduce_sndp_compares_the_averages_of_several_seeds(tmp_path):
    result, out, doc = reproduce(tmp_path, "--size", "tiny", "--workloads", "vadd",
                                 "--systems", "naive,dyn", "--seed", "3", "--seeds", "2",
                                 "--jobs", "1")  # fmt: skip
    assert "by seed" in " ".join(result.output.split()) and "seed 4" in result.output
    assert doc["meta"]["seeds"] == [3, 4] and doc["meta"]["experiment"] == "sndp"
    for s in ("3", "4"):
        assert doc["seeds"][s]["meta"]["seed"] == int(s)
    naive = doc["across_seeds"]["naive"]["speedup"]
    for s, value in naive["per_seed"].items():
        assert value == doc["seeds"][s]["average"]["naive"]["speedup"]
    assert naive["min"] <= naive["mean"] <= naive["max"]
    assert set(naive["workloads"]) == {"vadd"}
    for stem in ("seeds_speedup", "seeds_energy"):
        assert (out / f"{stem}.csv").exists() and (out / f"{stem}.png").stat().st_size > 0
        assert (out / f"{stem}.pdf").stat().st_size > 0
    # one of the paper's ten workloads: no paper column beside averages over it
    speedup = {r["system"]: r for r in csv.DictReader((out / "seeds_speedup.csv").open())}
    assert "paper" not in speedup["naive"]


@pytest.mark.parametrize("args, word", [
    (["--nsu-mhz", "200"], "--nsu-mhz"),
    (["--target", "best"], "--target"),
    (["--systems", "ratio-0.3"], "ratio-0.3"),
    (["--workloads", "nope"], "nope"),
    (["--size", "huge"], "--size"),
    (["--seeds", "0"], "--seeds"),
    (["--set", "ndp.target=optimal"], "--help"),  # a switch of the command (--target)
    (["--set", "l2.ways=0"], "l2.ways"),
    (["--figure5", "--set", "l2.mshrs=64"], "--figure5"),
])  # fmt: skip
def test_reproduce_sndp_rejects_a_bad_switch(args, word):
    result = runner.invoke(app, ["reproduce", "sndp", *args], env={"COLUMNS": "200"})
    assert result.exit_code == 2
    assert word in result.output
