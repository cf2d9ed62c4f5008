"""Cube topologies: which links join a system's memory cubes, and the way a packet takes over
them from one cube to another (``links.cube_topology`` names one).

A topology is built for a number of cubes (and, for a mesh, its columns) and gives its directed
cube-to-cube links and, for any two cubes, the next cube on the route between them: routes are
deterministic, so a packet's path is a function of its ends. The host's links are not the
topology's: :mod:`ndpsim.hw.network` adds them (to every cube, or to ``links.host_cubes``) and
routes host traffic through the attached cube nearest the destination. A topology with no links
(``star``) leaves cube-to-cube traffic to go through the host.

Shipped: ``star`` (no cube network; also accepted under its earlier name ``none``),
``fully-connected``, ``hypercube`` and ``mesh``. A topology of your own is a module that
registers a class as these do (docs/extending.md).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from ndpsim.registry import Registry


class CubeNetwork(Protocol):
    """The links between ``cubes`` memory cubes (nodes ``0 .. cubes-1``) and their routes."""

    def links(self) -> list[tuple[int, int]]:
        """Every directed cube-to-cube link, (from cube, to cube)."""
        ...

    def next_cube(self, a: int, b: int) -> int:
        """The cube after cube ``a`` on the route from ``a`` to cube ``b`` (``a != b``), over
        the links above."""
        ...


#: A topology: built from the number of cubes and ``links.mesh_columns`` (None unless set),
#: refusing with a ConfigError a number of cubes it cannot join.
CubeTopology = Callable[[int, int | None], CubeNetwork]

CUBE_TOPOLOGIES: Registry[CubeTopology] = Registry("cube topology", "ndpsim.hw.topologies")

__all__ = ["CUBE_TOPOLOGIES", "CubeNetwork", "CubeTopology"]
