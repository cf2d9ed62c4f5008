"""docs/sweeps.md and the README as written: their worked studies load and make the runs they
say, and the Python example runs."""

from __future__ import annotations

import re
from pathlib import Path

from ndpsim.sweeps.expansion import expand
from ndpsim.sweeps.study import load_study

DOC = Path(__file__).resolve().parents[2] / "docs" / "sweeps.md"
README = DOC.parents[1] / "README.md"
BLOCK = re.compile(r"^```(python|toml)\n(.*?)^```", re.S | re.M)


def _blocks(language: str, doc: Path = DOC) -> list[str]:
    return [code for lang, code in BLOCK.findall(doc.read_text()) if lang == language]


def _plan(study: str, tmp_path: Path):
    """The runs of a study as written in a document (its text, in a file of its own)."""
    path = tmp_path / "study.toml"
    path.write_text(study)
    return expand(load_study(path))


def test_the_worked_study_makes_the_runs_the_text_counts(tmp_path):
    plan = _plan(_blocks("toml")[0], tmp_path)
    assert plan.combinations == 216 and len(plan.runs) == 180
    baseline = [r for r in plan.runs if r.system == "tom-baseline"]
    assert len(baseline) == 4 * 3 * 3
    assert all(dict(r.swept)["ndp.stack_warps"] is None for r in baseline)


def test_the_parameter_study_makes_the_runs_the_text_counts(tmp_path):
    plan = _plan(_blocks("toml")[1], tmp_path)
    assert plan.combinations == 12 and len(plan.runs) == 8
    assert {dict(r.params).get("n") for r in plan.runs if r.workload == "vadd"} == {
        1048576, 4194304, 16777216
    }  # fmt: skip
    assert {r.params for r in plan.runs if r.workload == "bfs"} == {(("block", 128),)}


def test_the_readme_study_makes_the_runs_it_counts(tmp_path):
    (study,) = [code for code in _blocks("toml", README) if "[grid]" in code]
    plan = _plan(study, tmp_path)
    assert plan.combinations == 144 and len(plan.runs) == 108


def test_the_python_example_sweeps_and_queries(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (code,) = _blocks("python")
    namespace: dict = {}
    exec(compile(code, str(DOC), "exec"), namespace)
    rows = namespace["rows"]
    assert len(rows) == 6 and {r["workload"] for r in rows} == {"vadd", "rd"}
    assert sorted({r["l2.size_bytes"] for r in rows}) == [1048576, 2097152, 4194304]
    assert namespace["again"].to_pylist() == [{"runs": 6}]
