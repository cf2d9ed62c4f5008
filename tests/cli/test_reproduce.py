"""``ndpsim reproduce tom``: every variant on every workload, tables, JSON, CSV, PDF and PNG
files."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from ndpsim.cli.main import app
from ndpsim.experiments.papers.tom import VARIANT_NAMES

runner = CliRunner()


def test_reproduce_tom_writes_every_variant_and_the_averages(tmp_path):
    out = tmp_path / "tom"
    doc_path = tmp_path / "tom.json"
    result = runner.invoke(app, [
        "reproduce", "tom", "--size", "tiny", "--workloads", "vadd,rd", "--jobs", "1",
        "--out", str(out), "--json", str(doc_path),
    ], env={"COLUMNS": "200"})  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "Figure 8" in result.output
    # not a terminal: a line per finished workload, with the time elapsed and left
    assert "TOM at tiny: 2 workloads x 7 systems: 1/2 done (vadd), " in result.output
    assert " left" in result.output.split("1/2 done (vadd)")[1].splitlines()[0]
    # two of TOM's ten workloads: the paper's averages over all ten are not set beside ours
    assert "average (paper)" not in result.output
    doc = json.loads(doc_path.read_text())
    for variant in VARIANT_NAMES:
        assert set(doc[variant]) == {"vadd", "rd"}
        for metrics in doc[variant].values():  # the ideal system may move nothing off chip
            assert metrics["speedup"] > 0
            assert metrics["traffic"] > 0 or variant.startswith("ideal")
        assert set(doc["average"][variant]) >= {"speedup", "traffic", "energy"}
    assert doc["baseline"]["vadd"]["speedup"] == 1.0
    parts = doc["ctrl-tmap"]["rd"]
    assert abs(parts["traffic"] - parts["traffic_tx"] - parts["traffic_rx"]
               - parts["traffic_memory_to_memory"]) < 1e-9  # fmt: skip
    assert doc["paper"]["average"] == {}
    for w in ("vadd", "rd"):  # the learning phase is part of the learned-mapping runs
        assert 0 < doc["mapping"][w]["learning_share"] < 1
        assert doc["ctrl-tmap"][w]["learning_share"] == doc["mapping"][w]["learning_share"]
    assert "learning phase" in result.output
    for w in ("vadd", "rd"):  # the blocks offloaded, and the baseline's link utilization
        assert doc["candidates"][w]["rule"] == "loops" and doc["candidates"][w]["blocks"] >= 1
        assert set(doc["baseline_utilization"][w]) == {"tx", "rx", "selected"}
    assert "Candidate blocks" in result.output and "sec. 5.3" in result.output
    for stem in ("fig8_speedup", "fig9_traffic", "fig10_energy", "fig2_ideal_speedup"):
        assert (out / f"{stem}.csv").exists() and (out / f"{stem}.png").stat().st_size > 0
        assert (out / f"{stem}.pdf").stat().st_size > 0


def test_a_partial_reproduction_writes_its_own_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(app, ["reproduce", "tom", "--size", "tiny", "--workloads", "vadd",
                                 "--systems", "ctrl-bmap", "--jobs", "1"])  # fmt: skip
    assert result.exit_code == 0, result.output
    written = tmp_path / "results" / "tom-tiny-vadd-only-baseline-ctrl-bmap" / "tom.json"
    assert json.loads(written.read_text())["meta"]["workloads"] == ["vadd"]


@pytest.mark.parametrize("option, value", [
    ("--stack-warps", "0"), ("--internal-bw", "-1"), ("--cross-bw", "0"),
])  # fmt: skip
def test_reproduce_tom_rejects_a_switch_that_is_not_positive(option, value):
    result = runner.invoke(app, ["reproduce", "tom", option, value], env={"COLUMNS": "200"})
    assert result.exit_code == 2
    assert f"{option} must be positive, got {value}" in result.output


def test_reproduce_tom_rejects_an_unknown_workload():
    result = runner.invoke(app, ["reproduce", "tom", "--workloads", "nope"])
    assert result.exit_code == 2


def _vadd_on_ctrl_tmap(tmp_path, *args):
    """``reproduce tom`` at ``tiny`` on VADD with the baseline and ctrl-tmap: (result, doc)."""
    doc_path = tmp_path / "tom.json"
    result = runner.invoke(app, [
        "reproduce", "tom", "--size", "tiny", "--workloads", "vadd", "--jobs", "1",
        "--systems", "ctrl-tmap", "--out", str(tmp_path / "tom"), "--json", str(doc_path), *args,
    ], env={"COLUMNS": "200"})  # fmt: skip
    assert result.exit_code == 0, result.output
    return result, json.loads(doc_path.read_text())


def test_reproduce_tom_takes_stored_runs_and_fresh_simulates_them_again(tmp_path):
    _, first = _vadd_on_ctrl_tmap(tmp_path)
    assert first["meta"]["reused"] == {}
    result, again = _vadd_on_ctrl_tmap(tmp_path)
    assert "2 of 2 runs taken from" in result.output
    assert again["meta"]["reused"] == {"vadd": ["baseline", "ctrl-tmap"]}
    assert again["meta"]["wall_seconds"] == first["meta"]["wall_seconds"]  # as simulated
    for key in ("baseline", "ctrl-tmap", "average", "mapping"):
        assert again[key] == first[key]
    _, fresh = _vadd_on_ctrl_tmap(tmp_path, "--fresh")
    assert fresh["meta"]["reused"] == {}
    assert fresh["ctrl-tmap"] == first["ctrl-tmap"]  # the same seed gives the same run


def test_reproduce_tom_stores_its_runs_for_ndpsim_results_to_query(tmp_path):
    _vadd_on_ctrl_tmap(tmp_path)
    rows = tmp_path / "rows.json"
    result = runner.invoke(app, [
        "results", str(tmp_path / "tom"), "--json", str(rows), "--query",
        'SELECT study, workload, system, preset, "summary.ipc" FROM runs ORDER BY system',
    ])  # fmt: skip
    assert result.exit_code == 0, result.output
    stored = json.loads(rows.read_text())
    assert [(r["study"], r["workload"], r["system"], r["preset"]) for r in stored] == [
        ("tom", "vadd", "baseline", "tom-baseline"), ("tom", "vadd", "ctrl-tmap", "tom-ndp")
    ]  # fmt: skip
    assert all(r["summary.ipc"] > 0 for r in stored)


def test_reproduce_tom_shares_stored_runs_between_output_directories(tmp_path):
    shared = tmp_path / "shared-runs"
    _vadd_on_ctrl_tmap(tmp_path / "a", "--runs", str(shared))
    _, doc = _vadd_on_ctrl_tmap(tmp_path / "b", "--runs", str(shared))
    assert doc["meta"]["reused"] == {"vadd": ["baseline", "ctrl-tmap"]}
    assert not (tmp_path / "b" / "tom" / "runs").exists()


def test_reproduce_tom_runs_only_the_variants_asked_for(tmp_path):
    out = tmp_path / "tom"
    out.mkdir()
    # what an earlier run with the ideal system left: its figure goes, the user's file stays
    stale = [out / f"fig2_ideal_speedup.{suffix}" for suffix in ("csv", "pdf", "png")]
    for path in [*stale, out / "notes.txt"]:
        path.write_text("earlier")
    result, doc = _vadd_on_ctrl_tmap(tmp_path)
    assert doc["meta"]["workloads"] == ["vadd"]
    assert set(doc) & set(VARIANT_NAMES) == {"baseline", "ctrl-tmap"}
    assert "Figure 2" not in result.output  # the ideal system did not run
    assert not any(path.exists() for path in stale) and (out / "notes.txt").exists()
    assert (out / "fig8_speedup.csv").exists()


def test_reproduce_tom_set_changes_a_key_in_the_systems_that_have_it(tmp_path):
    _, plain = _vadd_on_ctrl_tmap(tmp_path)
    _, slower = _vadd_on_ctrl_tmap(tmp_path, "--set", "ndp.pcie_latency_ns=20000")
    assert "set" not in plain["meta"]["switches"]
    changed = {"ndp.pcie_latency_ns": {"value": 20000, "systems": ["ctrl-tmap"]}}
    assert slower["meta"]["switches"]["set"] == changed
    before, after = (doc["mapping"]["vadd"]["learning_share"] for doc in (plain, slower))
    assert after > before  # the learning phase's accesses wait longer for CPU memory


def test_reproduce_tom_set_refuses_a_key_a_switch_sets():
    result = runner.invoke(app, ["reproduce", "tom", "--set", "ndp.stack_warps=96"],
                           env={"COLUMNS": "200"})  # fmt: skip
    assert result.exit_code == 2
    assert "ndp.stack_warps" in result.output and "themselves" in result.output


def test_reproduce_tom_rejects_an_unknown_variant():
    result = runner.invoke(app, ["reproduce", "tom", "--systems", "ctrl-xmap"])
    assert result.exit_code == 2
    assert "ctrl-xmap" in result.output


def test_reproduce_tom_runs_each_seed_and_sets_their_averages_side_by_side(tmp_path):
    doc_path = tmp_path / "tom-seeds.json"
    result = runner.invoke(app, [
        "reproduce", "tom", "--size", "tiny", "--workloads", "vadd", "--jobs", "1",
        "--systems", "ctrl-bmap", "--seeds", "2", "--out", str(tmp_path / "tom"),
        "--json", str(doc_path),
    ], env={"COLUMNS": "200"})  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "speedup averaged over the workloads, by" in " ".join(result.output.split())
    doc = json.loads(doc_path.read_text())
    assert doc["meta"]["seeds"] == [0, 1]
    bmap = doc["across_seeds"]["ctrl-bmap"]["speedup"]
    assert bmap["per_seed"] == {s: doc["seeds"][s]["average"]["ctrl-bmap"]["speedup"]
                                for s in ("0", "1")}  # fmt: skip
    assert doc["across_seeds"]["baseline"]["speedup"]["mean"] == 1.0


def test_reproduce_tom_rejects_fewer_than_one_seed():
    result = runner.invoke(app, ["reproduce", "tom", "--seeds", "0"])
    assert result.exit_code == 2
    assert "--seeds" in result.output
