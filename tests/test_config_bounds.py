"""Config values that would size arrays past the machine, overflow the model's 64-bit state or be
taken for a number they are not: every integer key has an upper bound, a boolean is not an
integer, and a system or DRAM device whose arrays need more memory than the machine has free is a
ConfigError naming the keys when it is built, before anything runs."""

from __future__ import annotations

import re

import annotated_types
import numpy as np
import pytest
from pydantic import BaseModel

import ndpsim.hostmemory
from ndpsim.config import parse_overrides
from ndpsim.energy import load_energy_table
from ndpsim.energy.model import EnergyTable
from ndpsim.engine import events as ev
from ndpsim.errors import ConfigError
from ndpsim.hostmemory import available_bytes, check_fits, size_text
from ndpsim.hw import cache as cachemod
from ndpsim.hw import requests as rq
from ndpsim.hw.core import sm as smmod
from ndpsim.hw.dram import controller as ctl
from ndpsim.hw.dram.footprint import check_fits_in_memory, state_bytes
from ndpsim.hw.dram.spec import DramPreset, dram_preset_names, load_dram_preset
from ndpsim.systems import load_system_config
from ndpsim.systems.gpu import GpuSystem, GpuSystemConfig
from ndpsim.systems.gpu import model as gpumodel
from ndpsim.systems.gpu.footprint import ASSUMED_REGISTERS, check_gpu_fits, gpu_footprint

GIB = 1 << 30


def _int_fields(model: type[BaseModel], prefix: str = ""):
    """(dotted key, field) of every integer key of a config tree."""
    for name, field in model.model_fields.items():
        key = f"{prefix}{name}"
        inner = [a for a in (field.annotation, *getattr(field.annotation, "__args__", ()))
                 if isinstance(a, type) and issubclass(a, BaseModel)]  # fmt: skip
        if inner:
            yield from _int_fields(inner[0], f"{key}.")
        elif field.annotation is int:
            yield key, field


@pytest.mark.parametrize("model", [GpuSystemConfig, DramPreset, EnergyTable])
def test_every_integer_key_has_an_upper_bound(model):
    unbounded = [key for key, field in _int_fields(model)
                 if not any(isinstance(m, annotated_types.Le) for m in field.metadata)]  # fmt: skip
    assert unbounded == []


ARRAY_SIZING = [
    (GpuSystemConfig, "sm.count"), (GpuSystemConfig, "sm.warps"),
    (GpuSystemConfig, "sm.schedulers"), (GpuSystemConfig, "sm.load_slots"),
    (GpuSystemConfig, "l1.size_bytes"), (GpuSystemConfig, "l1.ways"),
    (GpuSystemConfig, "l1.mshrs"), (GpuSystemConfig, "l2.slices"),
    (GpuSystemConfig, "memory.cubes"), (GpuSystemConfig, "ndp.stack_warps"),
    (DramPreset, "organization.channels"), (DramPreset, "organization.ranks"),
    (DramPreset, "organization.bankgroups"), (DramPreset, "organization.banks"),
    (DramPreset, "organization.subarrays"), (DramPreset, "organization.rows"),
    (DramPreset, "organization.columns"), (DramPreset, "controller.read_queue"),
    (DramPreset, "controller.write_queue"),
]  # fmt: skip


@pytest.mark.parametrize("model,key", ARRAY_SIZING, ids=[k for _, k in ARRAY_SIZING])
def test_an_array_sizing_key_states_its_bound_in_its_description(model, key):
    field = dict(_int_fields(model))[key]
    (bound,) = [m.le for m in field.metadata if isinstance(m, annotated_types.Le)]
    assert "at most" in (field.description or "")
    assert bound < 2**31


@pytest.mark.parametrize("setting,key,bound", [
    ("sm.count=9223372036854775808", "sm.count", 4096),
    ("memory.cubes=1000000000", "memory.cubes", 64),
    ("l1.mshrs=10000000000", "l1.mshrs", 4096),
    ("sm.warps=100000", "sm.warps", 1024),
    ("l2.slices=65536", "l2.slices", 1024),
    ("sm.ctas=9223372036854775808", "sm.ctas", 1024),
    ("sm.latency_alu=4611686018427387904", "sm.latency_alu", 10**9),
    ("memory.dram_overrides.organization.channels=100000", "organization.channels", 256),
    ("memory.dram_overrides.controller.read_queue=100000", "controller.read_queue", 1024),
    ("seed=-1", "seed", None),
])  # fmt: skip
def test_a_value_too_large_for_the_model_is_a_config_error_naming_the_key(setting, key, bound):
    with pytest.raises(ConfigError, match=rf"'{key}': Input should be") as info:
        load_system_config("tom-ndp", parse_overrides([setting]))
    if bound is not None:
        assert f"less than or equal to {bound}" in str(info.value)


@pytest.mark.parametrize("setting,expected", [
    ("sm.count=true", "valid integer (got True)"),
    ("l1.mshrs=false", "valid integer (got False)"),
    ("sm.clock_ghz=true", "valid number (got True)"),
    ("links.latency_ns=false", "valid number (got False)"),
    ("sm.count=64.0", "valid integer (got 64.0)"),
    ("memory.dram_overrides.organization.banks=true", "valid integer (got True)"),
])  # fmt: skip
def test_a_boolean_or_a_float_is_not_taken_for_an_integer(setting, expected):
    with pytest.raises(ConfigError, match=re.escape(f"Input should be a {expected}")):
        load_system_config("tom-ndp", parse_overrides([setting]))


def test_an_integer_is_still_a_valid_float():
    config = load_system_config("tom-ndp", parse_overrides(["sm.clock_ghz=2", "ndp.ratio=1"]))
    assert config.sm.clock_ghz == 2.0 and isinstance(config.sm.clock_ghz, float)


@pytest.mark.parametrize("name", dram_preset_names())
def test_every_dram_preset_loads_with_strict_types(name):
    assert load_dram_preset(name).organization.channels >= 1


def test_the_energy_table_loads_with_strict_types():
    assert load_energy_table("default").sm.alu_lane_pj >= 0


# -------------------------------------------------------------------- the memory check
def _nbytes(arrays) -> int:
    return sum(a.nbytes for a in arrays if isinstance(a, np.ndarray))


@pytest.mark.parametrize("preset", ["tom-ndp", "sndp-ndp"])
def test_the_estimates_match_what_the_builders_allocate(preset):
    config = load_system_config(preset, parse_overrides(["sm.count=16", "l1.size_bytes=65536"]))
    system = GpuSystem(config)
    c = config
    room = gpumodel.headroom(c.sm.count, c.sm.schedulers)
    allocated = [
        _nbytes(cachemod.build_caches(system.cores.count, c.l1.size_bytes, c.l1.ways, 128,
                                      c.l1.mshrs)),
        _nbytes(cachemod.build_caches(c.l2.slices, c.l2.size_bytes // c.l2.slices, c.l2.ways,
                                      128, c.l2.mshrs, interleave=c.l2.slices)),
        _nbytes(smmod.build_sm_state(system._sm_params(), system.cores, ASSUMED_REGISTERS, 1)),
        _nbytes(rq.request_pool(4 * room)) + _nbytes(ev.event_queue(4 * room)),
        _nbytes(ctl.build_dram_state(system.system_dram)),
    ]  # fmt: skip
    estimated = list(gpu_footprint(config).values())[: len(allocated)]
    for guess, real in zip(estimated, allocated, strict=True):
        assert 0.85 * real <= guess <= real  # the fixed-size arrays are left out


def test_the_dram_estimate_matches_what_the_builder_allocates():
    dram = load_dram_preset("hbm2", parse_overrides(["organization.channels=64",
                                                     "organization.subarrays=8"]))  # fmt: skip
    assert 0.95 <= state_bytes(dram) / _nbytes(ctl.build_dram_state(dram)) <= 1


def test_random_page_placement_counts_a_frame_table_for_the_whole_memory():
    config = load_system_config("sndp-ndp")
    frames = config.memory.cubes * config.memory.dram_preset().organization.capacity_bytes
    parts = gpu_footprint(config)
    (key,) = [k for k in parts if k.startswith("page frames")]
    assert parts[key] == 8 * frames // config.memory.page_bytes


def test_a_system_whose_arrays_exceed_the_available_memory_is_refused_naming_the_keys():
    huge = parse_overrides(["sm.count=4096", "l1.size_bytes=1073741824"])
    config = load_system_config("tom-ndp", huge)
    with pytest.raises(ConfigError) as info:
        check_gpu_fits(config, available=64 * GIB)
    message = str(info.value)
    assert message.startswith("system 'tom-ndp' needs about ")
    assert "more than the 64.0 GiB available" in message
    assert "for L1s ((sm.count + memory.cubes) x l1.size_bytes, l1.mshrs)" in message
    assert message.index("L1s") < message.index("warp slots")  # the biggest part first
    assert "\n" not in message
    check_gpu_fits(load_system_config("tom-ndp"), available=GIB)  # a preset fits in 1 GiB


def test_building_a_system_checks_its_memory_before_anything_runs(monkeypatch):
    monkeypatch.setattr(ndpsim.hostmemory, "available_bytes", lambda: 1 << 20)
    with pytest.raises(ConfigError, match=r"system 'gpu-baseline' needs about .* MiB"):
        GpuSystem(load_system_config("gpu-baseline"))
    monkeypatch.setattr(ndpsim.hostmemory, "available_bytes", lambda: None)  # unknown: no check
    GpuSystem(load_system_config("gpu-baseline"))


def test_a_dram_organization_too_big_for_memory_is_refused_naming_its_keys():
    big = load_dram_preset("hbm2", parse_overrides([
        "organization.channels=256", "organization.ranks=64", "organization.banks=256",
        "organization.subarrays=1024",
    ]))  # fmt: skip
    with pytest.raises(ConfigError, match=r"DRAM preset 'hbm2' needs about [\d.]+ TiB .* "
                                          r"for its state \(organization\.\*"):  # fmt: skip
        check_fits_in_memory(big, available=64 * GIB)
    check_fits_in_memory(load_dram_preset("hbm2"), available=64 * GIB)


def test_available_memory_is_read_from_meminfo_or_else_the_physical_memory(tmp_path, monkeypatch):
    meminfo = tmp_path / "meminfo"
    meminfo.write_text("MemTotal:  8000000 kB\nMemFree: 100 kB\nMemAvailable:    2048 kB\n")
    monkeypatch.setattr(ndpsim.hostmemory, "MEMINFO", meminfo)
    assert available_bytes() == 2048 * 1024
    monkeypatch.setattr(ndpsim.hostmemory, "MEMINFO", tmp_path / "missing")
    assert available_bytes() > 0  # sysconf's physical memory


def test_check_fits_passes_what_fits_and_reads_sizes_as_people_do():
    check_fits({"a": 10, "b": 20}, "it", ConfigError, available=30)
    with pytest.raises(ConfigError, match=r"^it needs about 31 B of memory, more than the 30 B "
                                          r"available: 21 B for b, 10 B for a$"):  # fmt: skip
        check_fits({"a": 10, "b": 21}, "it", ConfigError, available=30)
    assert [size_text(n) for n in (0, 1023, 1024, 3 * GIB // 2, 5 << 50)] == [
        "0 B", "1023 B", "1.0 KiB", "1.5 GiB", "5.0 PiB"
    ]  # fmt: skip
