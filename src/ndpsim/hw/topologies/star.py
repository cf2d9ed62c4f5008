"""No cube network: each cube has only its link to the host, and traffic between two cubes goes
up to the host and down again (TOM's baseline GPU, whose stacks are linked only in the NDP
system)."""

from __future__ import annotations

from ndpsim.errors import ConfigError
from ndpsim.hw.topologies import CUBE_TOPOLOGIES


@CUBE_TOPOLOGIES.register("star")
class Star:
    def __init__(self, cubes: int, mesh_columns: int | None = None):
        self.cubes = cubes

    def links(self) -> list[tuple[int, int]]:
        return []

    def next_cube(self, a: int, b: int) -> int:
        raise ConfigError(f"cubes {a} and {b} are not linked: a star has no cube network")


CUBE_TOPOLOGIES.register("none")(Star)  # the name earlier presets and configs used
