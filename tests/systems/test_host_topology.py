"""A host linked to some of the cubes (its memory controllers at a mesh's corners, as AIMM's
CMP is): every request still reaches its vault and every answer the GPU, the host links carry
what the cubes behind them send, and the cube network carries the rest of the way."""

from __future__ import annotations

import pytest

from ndpsim.errors import ConfigError
from ndpsim.systems import load_system
from ndpsim.workloads import kernel_module, run_workload

CORNERS = {"memory": {"cubes": 16},
           "links": {"cube_topology": "mesh", "host_cubes": [0, 3, 12, 15],
                     "cube_to_cube_gbps": 40.0}}  # fmt: skip


def _run(system: str, workload: str, overrides: dict):
    functional = run_workload(workload, "tiny", 0)
    return load_system(system, overrides).run(
        functional.traces, kernel_module(functional.workload.module_name), functional.memory,
        seed=0,
    ).as_dict()  # fmt: skip


@pytest.mark.parametrize("system", ["tom-baseline", "tom-ndp", "sndp-ndp"])
def test_a_host_at_the_corners_of_a_mesh_reaches_every_cube(system):
    result = _run(system, "bfs", CORNERS)  # the run checks conservation itself, per host link
    links = result["stats"]["links"]["instances"]
    host_links = {label for label in links if label.startswith("gpu->")}
    assert host_links == {"gpu->cube0", "gpu->cube3", "gpu->cube12", "gpu->cube15"}
    cube_links = [v for label, v in links.items() if "gpu" not in label and "->" in label
                  and label.startswith("cube")]  # fmt: skip
    # cubes without a host link are read over the mesh: requests there, data back
    assert sum(v["read_request_packets"] for v in cube_links) > 0
    assert sum(v["read_data_packets"] for v in cube_links) > 0
    dram = result["stats"]["dram"]["instances"]
    vaults = len(dram) // 16
    served = [sum(dram[str(k * vaults + v)]["reads"] for v in range(vaults)) for k in range(16)]
    assert sum(r > 0 for r in served) > 4  # data lives in cubes the host has no link to
    again = _run(system, "bfs", CORNERS)
    again.pop("wall_seconds"), result.pop("wall_seconds")
    assert again == result  # deterministic


def test_the_star_is_the_default():
    star = _run("tom-ndp", "vadd", {"links": {"host_cubes": [0, 1, 2, 3]}})
    default = _run("tom-ndp", "vadd", {})
    star.pop("wall_seconds"), default.pop("wall_seconds")
    assert star == default


@pytest.mark.parametrize(("overrides", "complaint"), [
    ({"links": {"host_cubes": [0]}}, "need a cube network"),
    ({"links": {"cube_topology": "mesh", "host_cubes": [0, 9]}}, "cubes of 0..3"),
    ({"memory": {"cubes": 8}, "links": {"cube_topology": "mesh"}}, "set links.mesh_columns"),
])  # fmt: skip
def test_a_host_topology_the_network_cannot_route_is_refused(overrides, complaint):
    with pytest.raises(ConfigError, match=complaint):
        load_system("gpu-baseline", overrides)
