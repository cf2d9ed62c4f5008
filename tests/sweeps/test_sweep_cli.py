"""``ndpsim sweep`` and ``ndpsim results`` on tiny runs: runs stored one row each, a second
sweep runs nothing, failures reported and left for the next sweep, SQL and plots over the
store."""

from __future__ import annotations

import json
import textwrap

import pytest
from typer.testing import CliRunner

from ndpsim.cli.main import app
from ndpsim.experiments.store import ResultStore

runner = CliRunner()

STUDY = """\
name = "tiny-links"
systems = ["tom-baseline", "tom-ndp"]
workloads = ["vadd"]
sizes = ["tiny"]
counters = ["core_cycles", "summary.ipc", "energy_nj"]
[grid]
"links.host_to_cube_gbps" = [20.0, 40.0]
"ndp.pcie_latency_ns" = [500.0, 1000.0]
"""


@pytest.fixture(scope="module")
def swept(tmp_path_factory):
    """A study swept once (6 runs: the baseline has no [ndp] section), and its output."""
    root = tmp_path_factory.mktemp("sweep")
    study = root / "study.toml"
    study.write_text(STUDY)
    out = root / "out"
    result = runner.invoke(app, ["sweep", str(study), "--out", str(out)])
    assert result.exit_code == 0, result.output
    return study, out, result.output


def test_a_sweep_stores_one_row_per_run_with_its_keys_and_counters(swept):
    _, out, output = swept
    assert (
        "study tiny-links: 6 runs = 2 systems x 4 points x 1 workload x 1 size x 1 seed (2 "
        "combinations leave a system unchanged and run once); 0 stored" in output
    )
    assert output.count("/6 done (vadd tiny s0 on tom-") == 6  # a line per run in a log
    rows = ResultStore(out).query("SELECT * FROM runs ORDER BY ALL").to_pylist()
    assert len(rows) == 6 and len({r["run_key"] for r in rows}) == 6
    baseline = [r for r in rows if r["system"] == "tom-baseline"]
    assert sorted(r["links.host_to_cube_gbps"] for r in baseline) == [20.0, 40.0]
    assert all(r["ndp.pcie_latency_ns"] is None for r in baseline)
    first = rows[0]
    assert first["study"] == "tiny-links" and first["workload"] == "vadd" and first["seed"] == 0
    assert first["core_cycles"] > 0 and first["summary.ipc"] > 0
    assert first["energy_nj.total"] == pytest.approx(
        sum(v for k, v in first.items() if k.startswith("energy_nj.") and k != "energy_nj.total")
    )
    assert first["ndpsim_version"] and first["wall_seconds"] > 0 and first["finished"]


def test_a_second_sweep_runs_nothing(swept):
    study, out, _ = swept
    result = runner.invoke(app, ["sweep", str(study), "--out", str(out)])
    assert result.exit_code == 0
    assert "6 stored in" in result.output and "0 to run" in result.output
    assert "nothing to run" in result.output


def test_a_dry_run_lists_the_runs_and_runs_none(tmp_path):
    study = tmp_path / "study.toml"
    study.write_text(STUDY)
    result = runner.invoke(app, ["sweep", str(study), "--out", str(tmp_path / "o"), "--dry-run"])
    assert result.exit_code == 0
    assert "6 to run" in result.output and "ndp.pcie_latency_ns=1000" in result.output
    assert not (tmp_path / "o").exists()


def test_failed_runs_are_reported_not_stored_and_the_exit_status_says_so(tmp_path):
    study = tmp_path / "study.toml"
    study.write_text(textwrap.dedent("""\
        systems = ["tom-baseline"]
        workloads = ["vadd"]
        sizes = ["tiny"]
        counters = ["summary.ipcc"]
        """))  # fmt: skip
    result = runner.invoke(app, ["sweep", str(study), "--out", str(tmp_path / "o")])
    assert result.exit_code == 1
    assert (
        "counter 'summary.ipcc': no 'ipcc' in 'summary' in the results of system "
        "'tom-baseline' (did you mean 'ipc'?)" in result.output
    )
    assert "1 runs failed" in result.output and ResultStore(tmp_path / "o").keys() == set()


def test_results_answers_sql_writes_json_and_plots(swept, tmp_path):
    _, out, _ = swept
    query = ('SELECT system, "links.host_to_cube_gbps" AS gbps, count(*) AS n FROM runs '
             "GROUP BY ALL ORDER BY ALL")  # fmt: skip
    result = runner.invoke(app, ["results", str(out), "--query", query, "--json", "-"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output) == [
        {"system": "tom-baseline", "gbps": 20.0, "n": 1},
        {"system": "tom-baseline", "gbps": 40.0, "n": 1},
        {"system": "tom-ndp", "gbps": 20.0, "n": 2},
        {"system": "tom-ndp", "gbps": 40.0, "n": 2},
    ]
    described = runner.invoke(app, ["results", str(out)])
    assert "6 runs of 1 study" in described.output and "summary.ipc" in described.output
    plot = runner.invoke(app, ["results", str(out), "--plot",
                               "x=links.host_to_cube_gbps,y=core_cycles,hue=system",
                               "--out", str(tmp_path)])  # fmt: skip
    assert plot.exit_code == 0, plot.output
    stem = "core_cycles-by-links.host_to_cube_gbps-per-system"
    assert (tmp_path / f"{stem}.pdf").read_bytes().startswith(b"%PDF")
    assert (tmp_path / f"{stem}.png").stat().st_size > 0
    bad = runner.invoke(app, ["results", str(out), "--plot", "x=links.host,y=core_cycles"])
    assert bad.exit_code == 2 and "no such column (did you mean" in bad.output


def test_a_study_file_names_its_default_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "study.toml").write_text(STUDY)
    assert runner.invoke(app, ["sweep", "study.toml"]).exit_code == 0
    result = runner.invoke(app, ["results", "study.toml", "-q", "SELECT count(*) AS n FROM runs",
                                 "--json", "-"])  # fmt: skip
    assert json.loads(result.output) == [{"n": 6}]
    assert (tmp_path / "results" / "sweep-tiny-links" / "runs").is_dir()
