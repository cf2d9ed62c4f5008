"""A 2D mesh: cubes numbered row by row, each linked to its neighbours left, right, up and down,
and routes along the row first, then along the column (XY routing, deadlock-free on a mesh;
AIMM's memory network is a 4x4 or 8x8 mesh of cubes)."""

from __future__ import annotations

import math

from ndpsim.errors import ConfigError
from ndpsim.hw.topologies import CUBE_TOPOLOGIES


@CUBE_TOPOLOGIES.register("mesh")
class Mesh:
    def __init__(self, cubes: int, mesh_columns: int | None = None):
        if mesh_columns is None:  # a square, unless told otherwise
            mesh_columns = math.isqrt(cubes)
            if mesh_columns * mesh_columns != cubes:
                raise ConfigError(f"a mesh of {cubes} cubes is not square: set "
                                  "links.mesh_columns")  # fmt: skip
        if mesh_columns < 1 or cubes % mesh_columns:
            raise ConfigError(f"a {cubes}-cube mesh cannot have {mesh_columns} columns")
        self.cubes, self.columns = cubes, mesh_columns

    def links(self) -> list[tuple[int, int]]:
        rows, columns = self.cubes // self.columns, self.columns
        out = []
        for r in range(rows):
            for c in range(columns):
                for dr, dc in ((0, 1), (0, -1), (1, 0), (-1, 0)):
                    if 0 <= r + dr < rows and 0 <= c + dc < columns:
                        out.append((r * columns + c, (r + dr) * columns + c + dc))
        return out

    def next_cube(self, a: int, b: int) -> int:
        columns = self.columns
        (ar, ac), (br, bc) = divmod(a, columns), divmod(b, columns)
        if ac != bc:
            return a + (1 if bc > ac else -1)
        return a + (columns if br > ar else -columns)
