"""The SerDes links between a host and its memory cubes, and the links among the cubes: the
config section every kind with 3D-stacked memory behind links shares (the GPU systems', a CPU
host's)."""

from __future__ import annotations

from typing import Annotated

import numpy as np
from pydantic import AfterValidator, Field

from ndpsim.config import Gbps, LatencyNs, OptionalGbps, Strict
from ndpsim.hw.topologies import CUBE_TOPOLOGIES


class LinkConfig(Strict):
    """Per cube, a link from the host and one back (the TX and RX halves of a SerDes link),
    their flight time and packet header, and the cube network (none: a star)."""

    host_to_cube_gbps: Gbps
    cube_to_host_gbps: Gbps
    cube_to_cube_gbps: OptionalGbps = 0
    cube_topology: Annotated[str, AfterValidator(CUBE_TOPOLOGIES.check)] = Field(
        "star", description="the links between the cubes (ndpsim.hw.topologies): 'star' (none: "
        "cube-to-cube traffic goes through the host; 'none' is its earlier name), "
        "'fully-connected', 'hypercube', 'mesh', or one registered by a plug-in"
    )  # fmt: skip
    mesh_columns: int | None = Field(
        None, ge=1, le=64, description="columns of a 'mesh' cube topology (rows = cubes / "
        "columns); default: a square mesh"
    )  # fmt: skip
    host_cubes: list[int] | None = Field(
        None, max_length=64, description="the cubes the host has a link to (where its memory "
        "controllers attach, e.g. a mesh's corners); default: every cube (a star). A cube it "
        "has no link to is reached through the attached cube fewest hops away, over the cube "
        "network"
    )  # fmt: skip
    latency_ns: LatencyNs = Field(description="flight time of a packet (SerDes and wire)")
    header_bytes: int = Field(16, ge=0, le=4096, description="bytes of header and tail per "
                              "packet, at most 4096")  # fmt: skip

    def gbps(self, kind: str) -> float:
        """The bandwidth of a link of ``kind`` (a network's: ``host-to-cube``, ``cube-to-host``
        or ``cube``), as configured (0: a cube link not given one)."""
        return {"host-to-cube": self.host_to_cube_gbps, "cube-to-host": self.cube_to_host_gbps,
                "cube": self.cube_to_cube_gbps}[kind]  # fmt: skip

    def built_gbps(self, kind: str) -> float:
        """What a link of ``kind`` is built with: as configured, 1 GB/s for a cube link not
        given a bandwidth (such a network carries only what its routes put on it)."""
        return self.gbps(kind) or 1.0


def add_tsv_links(bandwidth: list, latency: list, cubes: int, internal_gbps: float) -> np.ndarray:
    """Each cube's TSVs (its vaults to its logic layer) as a link of ``internal_gbps`` after the
    links ``bandwidth`` and ``latency`` already list (appended to them); returns each cube's TSV
    link, -1 for every cube when they are not modelled (``internal_gbps`` 0)."""
    tsv = np.full(cubes, -1, dtype=np.int64)
    if internal_gbps > 0:
        tsv[:] = np.arange(len(bandwidth), len(bandwidth) + cubes)
        bandwidth += [internal_gbps] * cubes
        latency += [0] * cubes
    return tsv
