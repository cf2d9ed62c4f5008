"""``--set`` on a reproduction: which systems a key reaches, and the keys it must refuse."""

from __future__ import annotations

import pytest

from ndpsim.config import parse_overrides
from ndpsim.errors import ConfigError
from ndpsim.experiments.overrides import apply_overrides
from ndpsim.experiments.papers import sndp, tom
from ndpsim.systems import load_system_config


def _configs(variants):
    return {v.name: load_system_config(v.preset, v.overrides) for v in variants}


def test_an_ndp_key_changes_the_ndp_systems_and_leaves_the_baseline_without_stack_processors():
    variants, changed = apply_overrides(
        tom.PAPER.variants(), parse_overrides(["ndp.pcie_latency_ns=500"])
    )
    configs = _configs(variants)
    assert configs["baseline"].ndp is None
    for name in tom.VARIANT_NAMES[1:]:
        assert configs[name].ndp.pcie_latency_ns == 500
        assert configs[name].ndp.control == (name.startswith("ctrl"))  # its own keys stay
    assert changed == {
        "ndp.pcie_latency_ns": {"value": 500, "systems": list(tom.VARIANT_NAMES[1:])}
    }


def test_a_key_of_a_section_every_system_has_changes_them_all():
    variants, changed = apply_overrides(sndp.PAPER.variants(), parse_overrides(["l2.mshrs=64"]))
    assert all(c.l2.mshrs == 64 for c in _configs(variants).values())
    assert changed["l2.mshrs"]["systems"] == list(sndp.VARIANT_NAMES)


def test_no_overrides_leave_every_system_as_it_was():
    variants = tom.PAPER.variants()
    assert apply_overrides(variants, {}) == (variants, {})


@pytest.mark.parametrize("assignment, names", [
    ("ndp.control=true", "no-ctrl-bmap (False)"),  # what tells the variants apart
    ("ndp.mapping=learned", "ctrl-bmap ('baseline')"),
    ("memory.internal_gbps=80", "baseline (160.0)"),  # a switch of the command (--internal-bw)
    ("ndp=1", "no-ctrl-bmap"),  # a whole section some systems set
])  # fmt: skip
def test_a_key_a_system_sets_itself_is_refused_naming_the_system(assignment, names):
    with pytest.raises(ConfigError, match="set this key themselves") as error:
        apply_overrides(tom.PAPER.variants(), parse_overrides([assignment]))
    assert names in str(error.value)


def test_the_seed_is_refused_in_favour_of_the_seed_option():
    with pytest.raises(ConfigError, match="use --seed"):
        apply_overrides(tom.PAPER.variants(), parse_overrides(["seed=3"]))


def test_a_key_no_system_run_has_is_refused():
    baseline_only = tom.PAPER.variants(names={"baseline"})
    with pytest.raises(ConfigError, match=r"none of the systems run \(baseline\) has a \[ndp\]"):
        apply_overrides(baseline_only, parse_overrides(["ndp.pcie_latency_ns=500"]))


@pytest.mark.parametrize("assignment, message", [
    ("ndp.pcie_latency_ns=-1", "pcie_latency_ns"),
    ("ndpp.pcie_latency_ns=1", "unknown key 'ndpp'"),
    ("l2.size_bytes=1000", "size_bytes"),
])  # fmt: skip
def test_a_bad_key_or_value_fails_before_anything_runs_naming_the_system(assignment, message):
    with pytest.raises(ConfigError, match=r"--set on the \S+ system") as error:
        apply_overrides(tom.PAPER.variants(), parse_overrides([assignment]))
    assert message in str(error.value)
