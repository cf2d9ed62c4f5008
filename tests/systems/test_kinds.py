"""The registry of system kinds: presets choose their kind, and every kind meets the interface."""

from __future__ import annotations

import re
from typing import Literal

import pytest

from ndpsim.config import Strict
from ndpsim.errors import ConfigError
from ndpsim.systems import (
    RunResult,
    System,
    SystemKind,
    load_system,
    load_system_config,
    register_system_kind,
    system_kinds,
    system_preset_names,
)
from ndpsim.systems.kinds import SYSTEM_KINDS
from ndpsim.workloads import kernel_module, run_workload


def test_every_shipped_preset_builds_a_system_of_its_kind():
    for name in system_preset_names():
        system = load_system(name)
        assert isinstance(system, System)
        assert system.config.kind in system_kinds()


def test_a_run_result_offers_the_common_interface():
    run = run_workload("vadd", "tiny")
    result = load_system("gpu-baseline").run(
        run.traces, kernel_module(run.workload.module_name), run.memory
    )
    assert isinstance(result, RunResult)
    rows = dict(result.summary_rows())
    assert rows["core cycles"] == f"{result.summary['core_cycles']:,}"
    assert result.as_dict()["time_ps"] == result.time_ps


def test_a_preset_without_a_kind_is_refused(tmp_path):
    path = tmp_path / "kindless.toml"
    path.write_text('name = "kindless"\n')
    with pytest.raises(ConfigError, match=re.escape(f"{path}: missing key 'kind'")):
        load_system_config(str(path))


def test_an_unknown_kind_is_refused_at_its_line(tmp_path):
    path = tmp_path / "odd.toml"
    path.write_text('name = "odd"\nkind = "quantum"\n')
    with pytest.raises(ConfigError, match=r"'kind': .*'gpu'.* \(line 2\)"):
        load_system_config(str(path))


def test_a_kind_is_inherited_from_the_base(tmp_path):
    path = tmp_path / "mine.toml"
    path.write_text('base = "tom-ndp"\nname = "mine"\n[sm]\ncount = 32\n')
    config = load_system_config(str(path))
    assert (config.kind, config.sm.count) == ("gpu", 32)


class _Untagged(Strict):
    name: str


class _Tagged(Strict):
    name: str
    kind: Literal["toy"]


def test_a_kind_whose_model_does_not_name_it_is_refused():
    with pytest.raises(ConfigError, match="needs a field kind: Literal"):
        register_system_kind(SystemKind("toy", _Untagged, build=lambda c: None))


def test_a_name_registered_twice_is_refused():
    first = SystemKind("toy", _Tagged, build=lambda c: None)
    register_system_kind(first)
    try:
        with pytest.raises(ConfigError, match="registered twice"):
            register_system_kind(SystemKind("toy", _Tagged, build=lambda c: None))
    finally:
        SYSTEM_KINDS.unregister("toy")


def test_an_override_cannot_add_a_section_and_so_change_what_a_system_is():
    with pytest.raises(ConfigError, match=r"'ndp.ratio' sets a section the preset has not") as info:
        load_system_config("sndp-baseline", {"ndp": {"ratio": 0.5}})
    assert "presets with [ndp]: sndp-ndp, tom-ndp" in str(info.value)
    assert load_system_config("sndp-ndp", {"ndp": {"ratio": 0.5}}).ndp.ratio == 0.5


def test_a_near_data_preset_must_name_its_offload_scheme(tmp_path):
    path = tmp_path / "schemeless.toml"
    path.write_text('base = "tom-baseline"\nname = "schemeless"\n[ndp]\nstack_warps = 8\n')
    with pytest.raises(ConfigError, match=r"missing key 'ndp.offload'"):
        load_system_config(str(path))
