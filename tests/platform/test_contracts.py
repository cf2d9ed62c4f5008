"""The same checks for every registered component, so a new one is tested the moment it is
registered: it constructs from its defaults, runs ``tiny`` on a workload (the system checks that
requests and bytes are conserved, and raises otherwise), gives the same result for the same
seed, and a bad parameter is a ConfigError."""

from __future__ import annotations

import pytest

from ndpsim.analysis.passes import OFFLOAD_PASSES
from ndpsim.errors import ConfigError
from ndpsim.hw.core.contract import CORES
from ndpsim.hw.network import build_network
from ndpsim.hw.topologies import CUBE_TOPOLOGIES
from ndpsim.policy.mapping import ADDRESS_MAPPINGS
from ndpsim.policy.offload import OFFLOAD_SCHEMES, OffloadScheme
from ndpsim.systems import (
    load_system,
    load_system_config,
    system_kinds,
    system_preset_names,
)
from ndpsim.workloads import get_workload, kernel_module, run_workload, workload_names

WORKLOAD = "bfs"  # loops, branches and indirect loads: every pass finds blocks in it


@pytest.fixture(scope="module")
def functional():
    run = run_workload(WORKLOAD, "tiny", 0)
    return run, kernel_module(run.workload.module_name)


def _result(preset: str, overrides: dict, functional, seed: int = 0) -> dict:
    run, module = functional
    result = load_system(preset, overrides).run(run.traces, module, run.memory, seed=seed)
    document = result.as_dict()
    document.pop("wall_seconds")
    return document


def _ndp_presets() -> list[str]:
    return [p for p in system_preset_names() if getattr(load_system_config(p), "ndp", None)]


def _first_accepting(overrides: dict) -> str:
    """A shipped near-data preset that accepts ``overrides`` (a scheme may refuse another's
    settings, as SNDP refuses TOM's learned mapping)."""
    for preset in _ndp_presets():
        try:
            load_system(preset, overrides)
        except ConfigError:
            continue
        return preset
    raise AssertionError(f"no shipped near-data preset accepts {overrides}")


@pytest.mark.parametrize("name", OFFLOAD_SCHEMES.names())
def test_an_offload_scheme_meets_the_contract(name, functional):
    scheme = OFFLOAD_SCHEMES.get(name)()
    assert isinstance(scheme, OffloadScheme)
    overrides = {"ndp": {"offload": name}}
    preset = _first_accepting(overrides)
    first = _result(preset, overrides, functional)
    offload = first["summary"]["offload"]
    assert 0 < offload["offloaded"] <= offload["instances"]
    assert _result(preset, overrides, functional) == first


@pytest.mark.parametrize("name", ADDRESS_MAPPINGS.names())
def test_an_address_mapping_meets_the_contract(name, functional):
    overrides = {"memory": {"mapping": name}}
    first = _result("gpu-baseline", overrides, functional, seed=3)
    assert first["summary"]["core_cycles"] > 0
    assert _result("gpu-baseline", overrides, functional, seed=3) == first


@pytest.mark.parametrize("name", OFFLOAD_PASSES.names())
def test_an_offload_pass_finds_disjoint_ordered_blocks_in_every_kernel(name):
    offload_pass = OFFLOAD_PASSES.get(name)
    found = 0
    for workload in workload_names():
        module = kernel_module(get_workload(workload)("tiny", 0).module_name)
        for function in module.kernels:
            blocks = offload_pass(function)
            assert offload_pass(function) == blocks
            found += len(blocks)
            last = -1
            for block in blocks:
                assert last < block.begin <= block.end < len(function.instructions)
                last = block.end
    assert found > 0


@pytest.mark.parametrize("kind", list(system_kinds()))
def test_a_system_kind_meets_the_contract(kind, functional):
    presets = [p for p in system_preset_names() if load_system_config(p).kind == kind]
    assert presets, f"system kind {kind!r} has no shipped preset"
    for preset in presets:
        first = _result(preset, {}, functional)
        assert first["time_ps"] > 0
        assert _result(preset, {}, functional) == first


@pytest.mark.parametrize("name", CORES.names())
def test_a_core_kind_meets_the_contract(name, functional):
    presets = [p for p in system_preset_names()
               if name in [g.name for g in load_system(p).cores.groups]]  # fmt: skip
    assert presets, f"core kind {name!r} is in no shipped preset"
    first = _result(presets[0], {}, functional)
    kind = CORES.get(name)()
    assert set(first["stats"][name]["total"]) == set(kind.stat_names)
    assert _result(presets[0], {}, functional) == first


@pytest.mark.parametrize("name", CUBE_TOPOLOGIES.names())
def test_a_cube_topology_meets_the_contract(name, functional):
    """Its routes reach every cube over the links it lists (the network checks each hop), and a
    near-data system on it, where stacks reach each other's data, runs the same twice; 16
    cubes make a square mesh and a hypercube."""
    network = build_network(16, topology=name)
    for a in range(network.num_nodes):
        for b in range(network.num_nodes):
            assert network.hop_count(a, b) <= network.num_nodes
    overrides = {"memory": {"cubes": 16}, "links": {"cube_topology": name}}
    if not network.links_cubes:  # stack SMs need a cube network: the baseline GPU, then
        first = _result("gpu-baseline", overrides, functional)
        assert _result("gpu-baseline", overrides, functional) == first
        return
    first = _result("tom-ndp", overrides, functional)
    assert first["summary"]["offload"]["offloaded"] > 0
    assert _result("tom-ndp", overrides, functional) == first


@pytest.mark.parametrize(
    ("key", "value"),
    [("ndp.offload", "no-such-scheme"), ("memory.mapping", "no-such-mapping"),
     ("kind", "no-such-kind"), ("links.cube_topology", "no-such-topology")],
)  # fmt: skip
def test_an_unregistered_name_is_a_config_error_listing_the_registered(key, value):
    section, _, leaf = key.rpartition(".")
    overrides = {section: {leaf: value}} if section else {leaf: value}
    with pytest.raises(ConfigError, match=f"{value}.*registered|Input should be"):
        load_system_config("tom-ndp", overrides)


def test_an_unregistered_pass_is_a_config_error():
    with pytest.raises(
        ConfigError,
        match="unknown offload pass 'nope'; registered: alp-segments, mpu-locations, sndp",
    ):
        OFFLOAD_PASSES.get("nope")
