"""A study sweeping a workload parameter (``param.KEY``): it reaches the workloads that have the
parameter, each value is checked when the study loads, and every row says the value it ran
with."""

from __future__ import annotations

import textwrap

import pytest

from ndpsim.errors import ConfigError
from ndpsim.sweeps.expansion import expand
from ndpsim.sweeps.study import load_study
from ndpsim.sweeps.sweep import prepare

STUDY = {
    "name": "params",
    "systems": ["tom-baseline"],
    "workloads": ["vadd", "bfs"],
    "sizes": ["tiny"],
    "counters": ["core_cycles"],
    "set": {"param.block": 128},
    "grid": {"param.n": [3000, 4000], "sm.count": [32, 64]},
}


def test_a_swept_parameter_reaches_only_the_workloads_that_have_it():
    runs = expand(load_study(STUDY)).runs
    vadd = [r for r in runs if r.workload == "vadd"]
    bfs = [r for r in runs if r.workload == "bfs"]
    assert len(vadd) == 4 and len(bfs) == 2  # bfs has no n: its points make one run each
    assert {r.params for r in vadd} == {(("block", 128), ("n", 3000)),
                                        (("block", 128), ("n", 4000))}  # fmt: skip
    assert {r.params for r in bfs} == {(("block", 128),)}
    assert all(key != "param.n" for r in runs for key, _ in r.swept)
    assert "n=3000" in vadd[0].label()


def test_a_sweep_stores_the_value_each_run_ran_with(tmp_path):
    sweep = prepare({**STUDY, "grid": {"param.n": [3000, 4000]}}, tmp_path)
    assert sweep.run(jobs=1) == []
    rows = sweep.store.query('SELECT workload, "param.n", "param.block", core_cycles FROM runs '
                             'ORDER BY workload, "param.n"').to_pylist()  # fmt: skip
    assert [(r["workload"], r["param.n"], r["param.block"]) for r in rows] == [
        ("bfs", None, 128), ("vadd", 3000, 128), ("vadd", 4000, 128)
    ]  # fmt: skip
    assert rows[1]["core_cycles"] < rows[2]["core_cycles"]  # more elements, more cycles


def _write(tmp_path, text: str):
    path = tmp_path / "study.toml"
    path.write_text(textwrap.dedent(text))
    return path


HEAD = """\
systems = ["tom-baseline"]
workloads = ["vadd", "bfs"]
sizes = ["tiny"]
"""


@pytest.mark.parametrize(
    ("tail", "complaint"),
    [
        ('[grid]\n"param.nodez" = [1, 2]\n',
         r"\[grid\] 'param.nodez': none of the workloads \(vadd, bfs\) has a parameter 'nodez'; "
         r"they take block, n, nodes \(line 5\)"),
        ('[grid]\n"param.n" = [100, 0]\n',
         r"\[grid\] 'param.n' = 0 at size tiny: workload 'vadd' parameter 'n': expected an "
         r"integer from 1 to .* \(line 5\)"),
        ('[random]\nsamples = 2\n[random.keys]\n"param.nodes" = {integers = [-1, 5]}\n',
         r"'param.nodes' = -1 at size tiny"),
        ('[[systems]]\npreset = "tom-ndp"\nset = {"param.n" = 5}\n',
         r"\[systems\] 'param.n': a workload parameter is the study's"),
    ],
)  # fmt: skip
def test_a_bad_parameter_is_refused_when_the_study_loads(tmp_path, tail, complaint):
    text = HEAD + tail
    if "[[systems]]" in tail:
        text = text.replace('systems = ["tom-baseline"]\n', "")
    with pytest.raises(ConfigError, match=complaint):
        load_study(_write(tmp_path, text))
