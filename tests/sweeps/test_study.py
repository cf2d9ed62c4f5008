"""A study file: validated completely when it loads (errors naming the file, the line and the
key), and expanded into runs: grid x zip x random samples on every system, workload, size and
seed, each distinct run once."""

from __future__ import annotations

import textwrap

import pytest

from ndpsim.errors import ConfigError
from ndpsim.sweeps.expansion import expand, points
from ndpsim.sweeps.study import load_study

HEAD = """\
systems = ["tom-baseline", "tom-ndp"]
workloads = ["vadd"]
sizes = ["tiny"]
"""


def _write(tmp_path, text: str, name: str = "study.toml"):
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return path


def test_a_grid_zip_and_random_samples_multiply(tmp_path):
    study = load_study(_write(tmp_path, HEAD + """\
        seeds = [0, 1]
        [grid]
        "links.host_to_cube_gbps" = [20.0, 40.0, 80.0]
        [zip]
        "l2.hit_latency" = [10, 20]
        "l2.mshrs" = [32, 64]
        [random]
        samples = 3
        seed = 5
        [random.keys]
        "sm.count" = {integers = [16, 64]}
        """))  # fmt: skip
    assert study.swept == ("links.host_to_cube_gbps", "l2.hit_latency", "l2.mshrs", "sm.count")
    every = points(study)
    assert len(every) == 3 * 2 * 3
    assert {(p["l2.hit_latency"], p["l2.mshrs"]) for p in every} == {(10, 32), (20, 64)}
    assert all(16 <= p["sm.count"] <= 64 and isinstance(p["sm.count"], int) for p in every)
    plan = expand(study)
    assert plan.combinations == len(plan.runs) == 2 * 18 * 2


def test_random_samples_are_the_same_for_a_seed_and_differ_between_seeds(tmp_path):
    def drawn(seed: int):
        return points(load_study(_write(tmp_path, HEAD + f"""\
            [random]
            samples = 5
            seed = {seed}
            [random.keys]
            "links.host_to_cube_gbps" = {{uniform = [10.0, 80.0]}}
            "l2.hit_latency" = {{choice = [10, 20, 30]}}
            "sm.clock_ghz" = {{loguniform = [0.5, 2.0]}}
            """)))  # fmt: skip

    first = drawn(1)
    assert first == drawn(1) and first != drawn(2)
    assert all(10 <= p["links.host_to_cube_gbps"] <= 80 for p in first)
    assert all(0.5 <= p["sm.clock_ghz"] <= 2.0 for p in first)
    assert {p["l2.hit_latency"] for p in first} <= {10, 20, 30}


def test_a_key_reaches_only_the_systems_with_its_section_and_runs_merge(tmp_path):
    plan = expand(load_study(_write(tmp_path, HEAD + """\
        [grid]
        "ndp.pcie_latency_ns" = [500.0, 1000.0, 2000.0]
        """)))  # fmt: skip
    baseline = [r for r in plan.runs if r.system == "tom-baseline"]
    ndp = [r for r in plan.runs if r.system == "tom-ndp"]
    assert plan.combinations == 6
    assert len(baseline) == 1 and baseline[0].swept == (("ndp.pcie_latency_ns", None),)
    assert sorted(r.swept[0][1] for r in ndp) == [500.0, 1000.0, 2000.0]
    assert len({r.config_hash for r in ndp}) == 3


def test_keys_nest_or_quote_alike_and_systems_take_their_own_keys(tmp_path):
    study = load_study(_write(tmp_path, """\
        systems = [
          "tom-ndp",
          {preset = "tom-ndp", name = "learned", set = {"ndp.mapping" = "learned"}},
        ]
        workloads = ["vadd", "rd"]
        sizes = ["tiny"]
        [grid.sm]
        count = [32, 64]
        """))  # fmt: skip
    assert study.grid == {"sm.count": (32, 64)}
    plan = expand(study)
    assert len(plan.runs) == 2 * 2 * 2
    learned = [r for r in plan.runs if r.system == "learned"]
    assert all(r.config.ndp.mapping == "learned" for r in learned)
    assert [r.workload for r in plan.runs[:4]] == ["vadd"] * 4  # runs sharing an input adjoin


def test_a_study_may_be_a_dict():
    study = load_study({"systems": ["tom-baseline"], "workloads": ["vadd"], "sizes": ["tiny"],
                        "grid": {"sm.count": [16, 32]}})  # fmt: skip
    assert study.source == "study" and len(expand(study).runs) == 2


def test_a_system_file_is_found_next_to_the_study(tmp_path):
    (tmp_path / "systems").mkdir()
    _write(tmp_path, 'base = "tom-baseline"\nname = "small-gpu"\n[sm]\ncount = 8\n',
           "systems/small.toml")  # fmt: skip
    study = load_study(_write(tmp_path, """\
        systems = ["systems/small.toml"]
        workloads = ["vadd"]
        """))  # fmt: skip
    (system,) = study.systems
    assert system.name == "small" and system.config.sm.count == 8


BAD = [
    ('[grid]\nsm.cuont = [1, 2]', r"study.toml: \[grid\] 'sm.cuont' = 1 on system "
     r"'tom-baseline': .*unknown key 'sm.cuont' \(did you mean 'count'\?\) \(line 5\)"),
    ('[grid]\n"sm.count" = [16, -1]', r"\[grid\] 'sm.count' = -1 .*greater than or equal "
     r"to 1 \(got -1\) \(line 5\)"),
    ('[grid]\n"sm.count" = 16', r"\[grid\] 'sm.count': expected a non-empty list .*line 5"),
    ('[grid]\n"sm.count" = [16, 16]', r"'sm.count': 16 given twice \(line 5\)"),
    ('[grid]\n"seed" = [1, 2]', r"'seed': a study's seeds are its `seeds` list \(line 5\)"),
    ('[set]\n"ndp.ratio" = 0.5\n', None),  # one system has [ndp]: fine
    ('worklaods = ["bfs"]', r"unknown key 'worklaods' \(line 4; did you mean 'workloads'\?\)"),
    ('counters = ["summary", "summary.ipc"]', r"'summary.ipc' and 'summary' overlap .*line 4"),
    ('counters = ["wall_seconds"]', r"'wall_seconds' is a column of every result already"),
    ('seeds = [0, 0]', r"'seeds': 0 given twice \(line 4\)"),
    ('[set]\n"sm.count" = 16\n[grid]\nsm.count = [8]', r"'sm.count' is in \[grid\] and "
     r"'sm.count' in \[set\]; a key is set in one place \(line 7\)"),
    ('[zip]\n"sm.count" = [16, 32]\n"l2.ways" = [4]', r"\[zip\] .*one length; got "
     r"'sm.count' 2, 'l2.ways' 1 \(line 4\)"),
    ('[random]\nsamples = 2\n[random.keys]\n"sm.count" = {integers = [16, 64.5]}',
     r"'sm.count': integers takes \[low, high\], two integers; got \[16, 64.5\] \(line 7\)"),
    ('[random]\nsamples = 2\n[random.keys]\n"sm.count" = {normal = [1, 2]}',
     r"'sm.count': expected one of \{uniform = \[low, high\]\}.*\(line 7\)"),
    ('[random]\nsamples = 0\n[random.keys]\n"sm.count" = {choice = [8]}',
     r"'random.samples': Input should be greater than or equal to 1 .*\(line 5\)"),
]  # fmt: skip


@pytest.mark.parametrize(("tail", "message"), BAD)
def test_a_bad_study_is_refused_naming_the_file_line_and_key(tmp_path, tail, message):
    path = _write(tmp_path, HEAD + tail + "\n")
    if message is None:
        load_study(path)
        return
    with pytest.raises(ConfigError, match=message):
        load_study(path)


def test_unknown_names_are_refused_with_the_closest_one(tmp_path):
    with pytest.raises(ConfigError, match=r"unknown workload 'vad' \(did you mean 'vadd'\?\) "
                       r"\(line 2\)"):  # fmt: skip
        load_study(_write(tmp_path, 'systems = ["tom-ndp"]\nworkloads = ["vad"]\n'))
    with pytest.raises(ConfigError, match=r"system 'tom-ndpp': unknown systems preset .*line 1"):
        load_study(_write(tmp_path, 'systems = ["tom-ndpp"]\nworkloads = ["vadd"]\n'))


def test_a_key_no_system_has_is_refused(tmp_path):
    with pytest.raises(ConfigError, match=r"\[grid\] 'ndp.ratio': none of the systems "
                       r"\(tom-baseline\) has a \[ndp\] section \(line 4\)"):  # fmt: skip
        load_study(_write(tmp_path, 'systems = ["tom-baseline"]\nworkloads = ["vadd"]\n'
                          '[grid]\n"ndp.ratio" = [0.5]\n'))  # fmt: skip


def test_a_key_a_system_sets_itself_is_refused(tmp_path):
    with pytest.raises(ConfigError, match=r"'ndp.mapping': system 'learned' sets 'ndp.mapping' "
                       r"itself \(line 4\)"):  # fmt: skip
        load_study(_write(tmp_path, """\
            systems = [{preset = "tom-ndp", name = "learned", set = {"ndp.mapping" = "learned"}}]
            workloads = ["vadd"]
            [grid]
            "ndp.mapping" = ["baseline"]
            """))  # fmt: skip


def test_values_valid_alone_but_not_together_are_refused_before_anything_runs(tmp_path):
    # sets of 256 ways x 128 B lines divide the presets' 32 KiB L1 but not 48 KiB
    study = load_study(_write(tmp_path, HEAD + """\
        [grid]
        "l1.ways" = [4, 256]
        "l1.size_bytes" = [32768, 49152]
        """))  # fmt: skip
    with pytest.raises(ConfigError, match=r"study.toml: the combination l1.ways = 256 \(line 5\), "
                       r"l1.size_bytes = 49152 \(line 6\) on system 'tom-baseline': .*multiple "
                       r"of ways x line_bytes"):  # fmt: skip
        expand(study)
