"""Every cube linked to every other: one hop between any two (TOM's Table 1, "memory-to-memory
links fully connected")."""

from __future__ import annotations

from ndpsim.hw.topologies import CUBE_TOPOLOGIES


@CUBE_TOPOLOGIES.register("fully-connected")
class FullyConnected:
    def __init__(self, cubes: int, mesh_columns: int | None = None):
        self.cubes = cubes

    def links(self) -> list[tuple[int, int]]:
        return [(a, b) for a in range(self.cubes) for b in range(self.cubes) if a != b]

    def next_cube(self, a: int, b: int) -> int:
        return b
