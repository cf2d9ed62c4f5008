"""A hypercube of a power-of-two number of cubes: cube ``a`` links to each cube whose number
differs from ``a`` in one bit, and a route fixes the differing bits lowest first (dimension-order
routing; SNDP's memory network, sec. 7)."""

from __future__ import annotations

from ndpsim.errors import ConfigError
from ndpsim.hw.topologies import CUBE_TOPOLOGIES


@CUBE_TOPOLOGIES.register("hypercube")
class Hypercube:
    def __init__(self, cubes: int, mesh_columns: int | None = None):
        self.dimensions = cubes.bit_length() - 1
        if 1 << self.dimensions != cubes:
            raise ConfigError(f"a hypercube needs a power-of-two number of cubes, got {cubes}")
        self.cubes = cubes

    def links(self) -> list[tuple[int, int]]:
        return [(a, a ^ (1 << d)) for a in range(self.cubes) for d in range(self.dimensions)]

    def next_cube(self, a: int, b: int) -> int:
        differing = a ^ b
        return a ^ (differing & -differing)
