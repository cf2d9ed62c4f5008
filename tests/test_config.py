"""Configuration loading: every GPU system preset validates; unknown keys, missing keys and
out-of-range values are ConfigErrors naming the file and the dotted key; command-line overrides
parse into typed nested dicts; presets inherit from a ``base`` preset, and base loops are caught."""

from __future__ import annotations

import contextlib
import re
import shutil

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

import ndpsim.config
from ndpsim.config import merge, parse_overrides, preset_names, preset_path
from ndpsim.energy import load_energy_table
from ndpsim.errors import ConfigError
from ndpsim.hw.dram.spec import load_dram_preset
from ndpsim.systems import (
    load_system_config,
    system_kinds,
    system_preset_names,
    system_settings,
)

TOM_SM = """
[sm]
count = 68
clock_ghz = 1.4
"""


@pytest.fixture
def presets(tmp_path, monkeypatch):
    """A copy of the shipped presets that tests may add files to; returns the systems folder."""
    root = tmp_path / "presets"
    shutil.copytree(ndpsim.config.PRESET_ROOT, root)
    monkeypatch.setattr(ndpsim.config, "PRESET_ROOT", root)
    return root / "systems"


def test_the_shipped_system_presets_are_listed():
    names = system_preset_names()
    assert names == preset_names("systems") == sorted(names)
    assert {"gpu-baseline", "tom-baseline", "sndp-baseline"} <= set(names)


@pytest.mark.parametrize("name", system_preset_names())
def test_every_system_preset_loads_and_validates(name):
    config = load_system_config(name)
    assert config.name == name
    assert config.kind in system_kinds()
    if config.kind == "gpu":
        assert config.sm.count >= 1 and config.memory.cubes >= 1
    dram = config.memory.dram_preset()
    assert dram.peak_bandwidth_gbps > 0


def test_gpu_baseline_inherits_everything_but_its_name_from_tom_baseline():
    gpu = load_system_config("gpu-baseline").model_dump()
    tom = load_system_config("tom-baseline").model_dump()
    assert gpu.pop("name") == "gpu-baseline"
    assert tom.pop("name") == "tom-baseline"
    del gpu["description"], tom["description"]
    assert gpu == tom


def test_a_preset_overrides_the_keys_it_sets_and_inherits_the_rest(presets):
    (presets / "small.toml").write_text(
        'base = "tom-baseline"\nname = "small"\n[sm]\ncount = 8\n[links]\nlatency_ns = 2.5\n'
    )
    small = load_system_config("small")
    tom = load_system_config("tom-baseline")
    assert small.sm.count == 8
    assert small.links.latency_ns == 2.5
    assert small.sm.clock_ghz == tom.sm.clock_ghz  # the rest of [sm] comes from the base
    assert small.links.host_to_cube_gbps == tom.links.host_to_cube_gbps
    assert small.l2 == tom.l2


def test_a_chain_of_bases_applies_nearest_last(presets):
    (presets / "mid.toml").write_text('base = "tom-baseline"\nname = "mid"\n[sm]\ncount = 16\n')
    (presets / "leaf.toml").write_text('base = "mid"\nname = "leaf"\n[l1]\nways = 2\n')
    leaf = load_system_config("leaf")
    assert (leaf.name, leaf.sm.count, leaf.l1.ways) == ("leaf", 16, 2)
    assert leaf.l1.size_bytes == load_system_config("tom-baseline").l1.size_bytes


def test_a_loop_of_bases_is_a_config_error(presets):
    (presets / "a.toml").write_text('base = "b"\nname = "a"\n')
    (presets / "b.toml").write_text('base = "a"\nname = "b"\n')
    (presets / "self.toml").write_text('base = "self"\nname = "self"\n')
    with pytest.raises(ConfigError, match="loop: a -> b -> a"):
        load_system_config("a")
    with pytest.raises(ConfigError, match="loop: self -> self"):
        load_system_config("self")


def test_an_unknown_base_or_preset_is_a_config_error_listing_the_presets(presets):
    (presets / "orphan.toml").write_text('base = "nobody"\nname = "orphan"\n')
    with pytest.raises(ConfigError, match=r"unknown systems preset 'nobody'.*tom-baseline"):
        load_system_config("orphan")
    with pytest.raises(ConfigError, match="unknown systems preset 'nope'"):
        load_system_config("nope")


@pytest.mark.parametrize(
    "text,complaint",
    [
        (TOM_SM + "bogus = 1\n", "unknown key 'sm.bogus'"),
        ("frobnicate = true\n", "unknown key 'frobnicate'"),
        ("[l2]\nprefetch = 2\n", "unknown key 'l2.prefetch'"),
        ("[sm]\ncount = 0\n", "'sm.count'"),
        ("[sm]\nclock_ghz = -1.0\n", "'sm.clock_ghz'"),
        ("[links]\nhost_to_cube_gbps = -80\n", "'links.host_to_cube_gbps'"),
        ("[l1]\nline_bytes = 16\n", "'l1.line_bytes'"),
        ('[sm]\nscheduler = "fifo"\n', "'sm.scheduler'"),
        ('[memory]\ndram = "no-such-dram"\n', "unknown dram preset 'no-such-dram'"),
    ],
)
def test_a_bad_preset_file_is_a_config_error_naming_the_file_and_key(presets, text, complaint):
    path = presets / "bad.toml"
    path.write_text('base = "tom-baseline"\nname = "bad"\n' + text)
    with pytest.raises(ConfigError) as info:
        load_system_config("bad")
    message = str(info.value)
    assert complaint in message
    if "dram preset" not in complaint:
        assert message.startswith(f"{path}: ")


def test_a_missing_key_is_a_config_error_naming_it(presets):
    (presets / "bare.toml").write_text('kind = "gpu"\nname = "bare"\n' + TOM_SM)
    with pytest.raises(ConfigError, match="missing key 'l1'") as info:
        load_system_config("bare")
    assert "bare.toml" in str(info.value)


def test_a_toml_syntax_error_is_a_config_error_naming_the_file(presets):
    (presets / "broken.toml").write_text('name = "broken"\n[sm\ncount = 1\n')
    with pytest.raises(ConfigError, match=re.escape(str(presets / "broken.toml"))):
        load_system_config("broken")


def test_overrides_replace_single_values_of_a_preset():
    config = load_system_config("tom-baseline", parse_overrides(["sm.count=8", "l1.ways=2"]))
    tom = load_system_config("tom-baseline")
    assert config.sm.count == 8 and config.l1.ways == 2
    assert config.sm.clock_ghz == tom.sm.clock_ghz
    assert config.l1.size_bytes == tom.l1.size_bytes


@pytest.mark.parametrize(
    "overrides,key",
    [
        ({"sm": {"count": 0}}, "'sm.count'"),
        ({"links": {"cube_to_host_gbps": -1}}, "'links.cube_to_host_gbps'"),
        ({"l2": {"slices": -4}}, "'l2.slices'"),
        ({"sm": {"typo": 1}}, "unknown key 'sm.typo'"),
    ],
)
def test_an_out_of_range_override_is_a_config_error_naming_the_key(overrides, key):
    with pytest.raises(ConfigError, match=re.escape(key)):
        load_system_config("tom-baseline", overrides)


@pytest.mark.parametrize(
    "overrides,message",
    [
        ({"l1": {"size_bytes": 1000}}, "'l1': size_bytes (1000) must be a multiple of ways x "
         "line_bytes (512 B)"),
        ({"l2": {"slices": 3}}, "'l2': size_bytes (1048576) must be a multiple of ways x "
         "line_bytes x 3 slices (6144 B)"),
    ],
)  # fmt: skip
def test_a_cache_that_would_not_hold_whole_sets_is_a_config_error(overrides, message):
    with pytest.raises(ConfigError, match=re.escape(message) + "$"):
        load_system_config("tom-baseline", overrides)


def test_a_bad_dram_override_inside_a_system_is_caught_at_load_time():
    bad = {"memory": {"dram_overrides": {"timing": {"CL": 0}}}}
    with pytest.raises(ConfigError, match=r"'timing\.CL'"):
        load_system_config("tom-baseline", bad)


def test_dram_preset_overrides_change_only_the_named_values():
    base = load_dram_preset("hbm2")
    changed = load_dram_preset("hbm2", {"controller": {"read_queue": 7}, "timing": {"CL": 20}})
    assert changed.controller.read_queue == 7 and changed.timing.CL == 20
    assert changed.organization == base.organization
    assert changed.timing.RCD == base.timing.RCD
    with pytest.raises(ConfigError, match=r"DRAM preset 'hbm2': 'organization\.channels'"):
        load_dram_preset("hbm2", {"organization": {"channels": 0}})


def test_a_loaded_config_is_immutable():
    config = load_system_config("tom-baseline")
    with pytest.raises(ValidationError):
        config.sm.count = 3


def test_parse_overrides_builds_typed_nested_dicts():
    assert parse_overrides(["sm.count=8", "l1.ways=2"]) == {"sm": {"count": 8}, "l1": {"ways": 2}}
    parsed = parse_overrides(
        [
            "sm.clock_ghz=1.5",
            "l1.enabled=false",
            "memory.xor_cube=true",
            "memory.dram=hbm2",
            "memory.dram_overrides={'timing': {'CL': 12}}",
            " seed = 7 ",
            "sm.count=4",
        ]
    )
    assert parsed == {
        "sm": {"clock_ghz": 1.5, "count": 4},
        "l1": {"enabled": False},
        "memory": {"xor_cube": True, "dram": "hbm2", "dram_overrides": {"timing": {"CL": 12}}},
        "seed": 7,
    }
    assert type(parsed["sm"]["count"]) is int and type(parsed["l1"]["enabled"]) is bool
    assert parse_overrides(["name=a=b"]) == {"name": "a=b"}  # only the first '=' splits
    assert parse_overrides([]) == {}


@pytest.mark.parametrize("text", ["sm.count", "=3", "sm..count=3", ".count=3", "sm.=3", " =1"])
def test_a_malformed_override_is_a_config_error(text):
    with pytest.raises(ConfigError, match=r"key\.path=value"):
        parse_overrides([text])


def test_an_override_below_a_value_is_a_config_error():
    with pytest.raises(ConfigError, match="conflicts"):
        parse_overrides(["sm=1", "sm.count=2"])


_PART = st.sampled_from(["a", "b", "c", "sm", "count"])
_KEYS = st.tuples(_PART, _PART, _PART).map(".".join)  # one depth: no key is a prefix of another


@given(st.dictionaries(_KEYS, st.integers(-(10**9), 10**9) | st.booleans(), max_size=8))
def test_overrides_of_distinct_leaves_land_at_their_dotted_paths(assignments):
    parsed = parse_overrides([f"{k}={v}" for k, v in assignments.items()])
    leaves = {
        f"{a}.{b}.{c}": value
        for a, middle in parsed.items()
        for b, inner in middle.items()
        for c, value in inner.items()
    }
    assert leaves == assignments
    assert all(type(leaves[k]) is type(v) for k, v in assignments.items())


def test_merge_lays_tables_over_tables_without_touching_the_base():
    base = {"sm": {"count": 68, "clock_ghz": 1.4}, "name": "x", "l1": {"ways": 4}}
    merged = merge(base, {"sm": {"count": 8}, "name": "y", "seed": 3})
    assert merged == {
        "sm": {"count": 8, "clock_ghz": 1.4},
        "name": "y",
        "l1": {"ways": 4},
        "seed": 3,
    }
    assert base == {"sm": {"count": 68, "clock_ghz": 1.4}, "name": "x", "l1": {"ways": 4}}


def test_a_preset_file_of_ones_own_loads_by_path_with_its_base_found_next_to_it(tmp_path):
    (tmp_path / "fewer-sms.toml").write_text(
        'base = "tom-baseline"\nname = "fewer"\n[sm]\ncount = 8\n'
    )
    sub = tmp_path / "studies"
    sub.mkdir()
    (sub / "slower.toml").write_text('base = "../fewer-sms.toml"\nname = "slower"\n'
                                     "[sm]\nclock_ghz = 0.7\n")  # fmt: skip
    config = load_system_config(str(sub / "slower.toml"))
    assert (config.name, config.sm.count, config.sm.clock_ghz) == ("slower", 8, 0.7)
    assert config.l2 == load_system_config("tom-baseline").l2


@pytest.mark.parametrize("name", ["../systems/tom-baseline", "/etc/passwd", "sub/dir"])
def test_a_preset_name_with_a_path_in_it_is_not_looked_up_outside_the_presets(name):
    with pytest.raises(ConfigError, match=r"a name, or a path ending in \.toml"):
        load_system_config(name)


def test_a_missing_preset_file_is_a_config_error_naming_it(tmp_path):
    with pytest.raises(ConfigError, match=re.escape("missing.toml' does not exist")):
        load_system_config(str(tmp_path / "missing.toml"))


@pytest.mark.parametrize(
    "base,complaint",
    [("3", "expected a preset name or .toml path, got 3"),
     ('"nobody"', "unknown systems preset 'nobody'"),
     ('"gone.toml"', "gone.toml' does not exist")],
)  # fmt: skip
def test_a_bad_base_is_a_config_error_naming_the_file_and_the_base_key(tmp_path, base, complaint):
    path = tmp_path / "child.toml"
    path.write_text(f'base = {base}\nname = "child"\n')
    with pytest.raises(ConfigError, match=re.escape(f"{path}: 'base': ")) as info:
        load_system_config(str(path))
    assert complaint in str(info.value)


def test_a_preset_file_that_is_not_utf8_is_a_config_error_naming_line_and_column(tmp_path):
    path = tmp_path / "latin1.toml"
    path.write_bytes(b'name = "gpu"\ndescription = "caf\xe9"\n')
    with pytest.raises(ConfigError, match=re.escape(f"{path}:2:19: not UTF-8 text (byte 0xe9)")):
        load_system_config(str(path))


@pytest.mark.parametrize(
    "key,value",
    [("sm.clock_ghz", "inf"), ("sm.clock_ghz", "nan"), ("sm.clock_ghz", "1e300"),
     ("sm.clock_ghz", "1e-300"), ("l2.clock_ghz", "2e3"), ("links.latency_ns", "inf"),
     ("links.latency_ns", "1e300"), ("links.host_to_cube_gbps", "1e-300"),
     ("links.cube_to_cube_gbps", "1e-9"), ("memory.internal_gbps", "1e9")],
)  # fmt: skip
def test_a_time_or_rate_the_picosecond_clock_cannot_hold_is_a_config_error(key, value):
    # such values used to overflow while building the links, or to be clamped to 1 ps silently
    with pytest.raises(ConfigError, match=re.escape(f"'{key}'")):
        load_system_config("tom-ndp", parse_overrides([f"{key}={value}"]))


def test_absent_bandwidths_may_still_be_zero():
    config = load_system_config("tom-baseline", parse_overrides(["memory.internal_gbps=0"]))
    assert config.memory.internal_gbps == 0 and config.links.cube_to_cube_gbps == 0


def test_a_refresh_interval_not_longer_than_the_refresh_is_a_config_error():
    # the rank would refresh for ever and the run would never end
    with pytest.raises(ConfigError, match=r"REFI \(350\) must be longer than RFC \(350\)"):
        load_dram_preset("hbm2", {"timing": {"REFI": 350, "RFC": 350}})


def test_a_bad_dram_override_is_blamed_on_the_overrides_not_on_the_preset_file():
    with pytest.raises(ConfigError, match=r"^overrides of DRAM preset 'hbm2': 'timing\.CL'"):
        load_dram_preset("hbm2", {"timing": {"CL": 0}})


def test_a_bad_key_in_a_preset_file_is_located_by_its_line(tmp_path):
    path = tmp_path / "mine.toml"
    path.write_text(
        'base = "tom-baseline"\nname = "mine"\n\n[sm]\ncount = 64\ncuont = 3\n\n'
        "[l2]  # the shared cache\nways = -1\n\n[memory]\nxor_cube = 'maybe'\n"
    )
    with pytest.raises(ConfigError) as info:
        load_system_config(str(path))
    message = str(info.value)
    assert message.startswith(f"{path}: unknown key 'sm.cuont' (line 6; did you mean 'count'?)")
    assert "'l2.ways': Input should be greater than or equal to 1 (got -1) (line 9)" in message
    assert "'memory.xor_cube'" in message and "(got 'maybe') (line 12)" in message


def test_a_bad_value_inherited_from_a_base_is_located_in_the_base(tmp_path):
    (tmp_path / "parent.toml").write_text('base = "tom-baseline"\nname = "p"\n[l1]\nways = 0\n')
    child = tmp_path / "child.toml"
    child.write_text('base = "parent.toml"\nname = "child"\n')
    with pytest.raises(ConfigError, match=re.escape("'l1.ways'")) as info:
        load_system_config(str(child))
    assert f"(got 0) ({tmp_path / 'parent.toml'}:4)" in str(info.value)


def test_an_unknown_key_without_a_close_spelling_lists_what_its_section_takes():
    with pytest.raises(ConfigError) as info:
        load_system_config("tom-baseline", {"l1": {"prefetcher": 1}, "frob": 2})
    message = str(info.value)
    assert "unknown key 'l1.prefetcher' ([l1] takes size_bytes, ways, line_bytes, " in message
    assert "unknown key 'frob' (the top level takes name, description, " in message


def test_a_missing_key_points_at_its_section(tmp_path):
    path = tmp_path / "short.toml"
    path.write_text('kind = "gpu"\nname = "short"\n\n[sm]\nclock_ghz = 1.4\n')
    with pytest.raises(ConfigError, match=re.escape("missing key 'sm.count' ([sm] is at line 4)")):
        load_system_config(str(path))


def test_a_bad_key_of_a_dram_preset_is_located_by_its_line(presets):
    path = presets.parent / "dram" / "hbm2.toml"
    text = path.read_text()
    line = next(i for i, t in enumerate(text.splitlines(), 1) if t.startswith("CL "))
    with pytest.raises(ConfigError, match=re.escape("'timing.CL'")):
        load_dram_preset("hbm2", {"timing": {"CL": 0}})  # an override: no line
    path.write_text(text.replace("\nCL ", "\nCL = 0 # was", 1))
    with pytest.raises(ConfigError, match=re.escape("'timing.CL'")) as info:
        load_dram_preset("hbm2")
    assert f"(got 0) (line {line})" in str(info.value)


def test_a_bad_energy_override_is_blamed_on_the_overrides_not_on_the_table_file():
    assert load_energy_table("default", {"sm": {"alu_lane_pj": 2.5}}).sm.alu_lane_pj == 2.5
    with pytest.raises(ConfigError) as info:
        load_energy_table("default", {"sm": {"alu_lane_pj": -1.0, "alu_pj": 1.0}})
    message = str(info.value)
    assert message.startswith("overrides of energy table 'default': ")
    assert "'sm.alu_lane_pj'" in message and "(got -1.0)" in message and "line" not in message
    assert "unknown key 'sm.alu_pj' (did you mean 'alu_lane_pj'?)" in message


def test_settings_name_the_file_and_line_the_override_or_the_default_behind_each_value():
    by_key = {s.key: s for s in system_settings("tom-ndp", {"sm": {"count": 32}})}
    assert by_key["sm.count"].value == 32 and by_key["sm.count"].origin == "--set"
    ndp = preset_path("systems", "tom-ndp")
    stacks = next(i for i, t in enumerate(ndp.read_text().splitlines(), 1) if "stack_warps" in t)
    assert by_key["ndp.stack_warps"].origin == f"tom-ndp.toml:{stacks}"
    assert by_key["ndp.stack_warps"].comment == "TOM Table 1: 1 SM per memory stack, 48 warps"
    clock = by_key["sm.clock_ghz"]  # inherited, under a header that cites its source
    assert clock.value == 1.4 and clock.origin.startswith("tom-baseline.toml:")
    assert clock.comment == "[sm] TOM Table 1"
    alu = by_key["sm.latency_alu"]
    assert alu.origin == "default" and alu.value == 6 and alu.description == "cycles"
    assert by_key["ndp.nsu_clock_ghz"].value is None
    assert len(by_key) == len(system_settings("tom-ndp"))  # every key, overridden or not


def test_every_value_a_shipped_system_preset_sets_cites_a_source_or_says_assumption():
    """The README promises that values no paper gives are marked `assumption` in the files."""
    for name in system_preset_names():
        for setting in system_settings(name):
            if setting.origin != "default" and setting.key not in ("name", "description"):
                assert setting.comment, f"{name}: {setting.key} ({setting.origin}) cites nothing"


# ------------------------------------------------------- pathological values and files
def test_an_override_longer_than_the_limit_is_a_config_error_saying_so():
    text = "sm.count=" + "[" * 100_000
    with pytest.raises(ConfigError, match=r"is 100009 characters long; at most 10000 are read"):
        parse_overrides([text])
    assert parse_overrides(["name=" + "x" * 9_000]) == {"name": "x" * 9_000}


@pytest.mark.parametrize("value", ["-" * 9_000 + "1", "~" * 9_000 + "1", "1+" * 4_000 + "1j"])
def test_a_value_too_deeply_nested_to_read_is_a_config_error_naming_the_key(value):
    with pytest.raises(ConfigError, match=r"override of 'sm\.count': the value is nested too "
                                          r"deeply to read"):  # fmt: skip
        parse_overrides([f"sm.count={value}"])


def test_overrides_nested_deeper_than_a_config_are_a_config_error_naming_the_key():
    with pytest.raises(ConfigError, match=r"'a\.a\.a\.a.*' is nested 17 levels deep"):
        parse_overrides([".".join(["a"] * 40) + "=1"])
    with pytest.raises(ConfigError, match=r"'memory\.dram_overrides\[0\]\[0\].*' is nested"):
        parse_overrides(["memory.dram_overrides=" + "[" * 150 + "]" * 150])
    assert parse_overrides(["memory.dram_overrides.organization.channels=4"])  # 4 levels


def test_reading_an_override_prints_no_python_warnings(recwarn):
    assert parse_overrides(["sm.count=1if", r"name='\d'"]) == {"sm": {"count": "1if"},
                                                               "name": "\\d"}  # fmt: skip
    assert not recwarn.list


@settings(max_examples=300, deadline=None)
@given(st.lists(st.text(max_size=60), max_size=4))
def test_any_assignments_parse_to_a_tree_or_a_config_error(assignments):
    try:
        parsed = parse_overrides(assignments)
    except ConfigError:
        return
    assert isinstance(parsed, dict)
    assert all(isinstance(key, str) and key for key in parsed)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(["[", "]", "{", "}", "(", ")", "-", "~", "1", ",", ":", "'", "a",
                                 "=", ".", "0x", "1e9", "not ", "if", "True"]), max_size=300)
       .map("".join))  # fmt: skip
@example("{{}}")  # a set holding a dict: the literal reader raised TypeError (found by CI)
@example("{[]: 1}")
def test_literal_like_noise_in_a_value_parses_or_is_a_config_error(value):
    with contextlib.suppress(ConfigError):
        parse_overrides([f"memory.dram_overrides={value}"])


def test_a_long_value_is_quoted_cut_short_in_an_error():
    with pytest.raises(ConfigError) as info:
        load_system_config("tom-ndp", parse_overrides(["sm.count='" + "9" * 5_000 + "'"]))
    assert "(got '99999" in str(info.value) and len(str(info.value)) < 200


def test_an_integer_too_long_to_print_is_described_instead(tmp_path):
    with pytest.raises(ConfigError, match=r"'seed': .*\(got an integer of more than 4300 digits"):
        load_system_config("tom-ndp", parse_overrides(["seed=0x" + "f" * 5_000]))


@pytest.mark.parametrize("text,complaint", [
    ("a = " + "[" * 100_000, "nested too deeply to read"),
    ("a = " + "{b = " * 5_000, "nested too deeply to read"),
    ("a = " + "[" * 20 + "]" * 20, "'a" + "[0]" * 16 + "' is nested 17 levels deep"),
    ("[" + ".".join(["t"] * 30) + "]\nx = 1\n", "'" + ".".join(["t"] * 17) + "' is nested 17"),
    ("a = " + "9" * 5_000, "an integer has more than 4300 digits"),
])  # fmt: skip
def test_a_toml_file_python_cannot_read_is_a_config_error_naming_it(tmp_path, text, complaint):
    path = tmp_path / "deep.toml"
    path.write_text(text)
    with pytest.raises(ConfigError, match=re.escape(f"{path}: ")) as info:
        load_system_config(str(path))
    assert complaint in str(info.value)
