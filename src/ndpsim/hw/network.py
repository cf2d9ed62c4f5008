"""Memory networks: which links exist between a host and memory cubes, and the route from any
node to any other.

Nodes ``0 .. cubes-1`` are the cubes; node ``cubes`` is the host (GPU or CPU) when there is one.
A topology lists directed links; :meth:`Network.route` gives the links a packet crosses. Routing
is deterministic. The host links to every cube (a star) or to some of them (``host_cubes``, the
cubes its memory controllers attach to, such as the corners of a mesh); traffic between the host
and a cube it has no link to enters and leaves through the cube's *port*, the attached cube
fewest hops away (the lowest-numbered of equals), and crosses the cube network in between.
Cube-to-cube traffic follows the cube topology: fully connected (one hop), a hypercube
(dimension order: lowest differing bit first), or a 2D mesh (XY: along the row, then along the
column); with no cube network, cube-to-cube traffic goes through the host (a star only).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

import numpy as np

from ndpsim.errors import ConfigError

CubeTopology = Literal["none", "fully-connected", "hypercube", "mesh"]


@dataclass
class Network:
    """Directed links between nodes, and shortest deterministic routes."""

    cubes: int
    has_host: bool
    topology: CubeTopology
    mesh_columns: int = 0
    host_cubes: tuple[int, ...] = ()  # the cubes the host links to (all of them: a star)
    port: list[int] = field(default_factory=list)  # per cube, the attached cube it reaches
    # the host through
    links: list[tuple[int, int]] = field(default_factory=list)  # (from node, to node)
    kinds: list[str] = field(default_factory=list)  # "host-to-cube", "cube-to-host", "cube"

    @property
    def host(self) -> int:
        return self.cubes

    @property
    def num_nodes(self) -> int:
        return self.cubes + (1 if self.has_host else 0)

    def link_id(self, a: int, b: int) -> int:
        try:
            return self.links.index((a, b))
        except ValueError:
            raise ConfigError(f"no link from node {a} to node {b}") from None

    def next_hop(self, a: int, b: int) -> int:
        if a == b:
            return a
        host = self.host if self.has_host else -1
        if a == host:
            return self.port[b]  # the host's link to the cube's port
        if b == host:  # towards the cube's port, then up its link
            return host if self.port[a] == a else self._cube_hop(a, self.port[a])
        return self._cube_hop(a, b)

    def _cube_hop(self, a: int, b: int) -> int:
        """The next cube from cube ``a`` towards cube ``b`` over the cube network."""
        host = self.host if self.has_host else -1
        if self.topology == "fully-connected":
            return b
        if self.topology == "hypercube":
            low = (a ^ b) & -(a ^ b)
            return a ^ low
        if self.topology == "mesh":
            cols = self.mesh_columns
            ar, ac, br, bc = a // cols, a % cols, b // cols, b % cols
            if ac != bc:
                return ar * cols + ac + (1 if bc > ac else -1)
            return (ar + (1 if br > ar else -1)) * cols + ac
        if self.has_host and len(self.host_cubes) == self.cubes:
            return host  # no cube network: go through the host
        raise ConfigError("cubes are not connected: no cube network, and no host linked to "
                          "every cube")  # fmt: skip

    def route(self, a: int, b: int) -> list[int]:
        """Link ids from node ``a`` to node ``b``, in order."""
        hops = []
        node = a
        guard = 0
        while node != b:
            nxt = self.next_hop(node, b)
            hops.append(self.link_id(node, nxt))
            node = nxt
            guard += 1
            if guard > self.num_nodes:
                raise ConfigError(f"routing loop from {a} to {b}")
        return hops

    def hop_count(self, a: int, b: int) -> int:
        return len(self.route(a, b))

    def route_table(self) -> tuple[np.ndarray, np.ndarray]:
        """(first link, hop count) for every (from, to) pair, and the next-hop table, so compiled
        code can route hop by hop: ``next_link[a, b]`` is the link to take at ``a``."""
        n = self.num_nodes
        next_link = np.full((n, n), -1, dtype=np.int64)
        hops = np.zeros((n, n), dtype=np.int64)
        for a in range(n):
            for b in range(n):
                if a != b:
                    next_link[a, b] = self.link_id(a, self.next_hop(a, b))
                    hops[a, b] = self.hop_count(a, b)
        return next_link, hops

    def link_destination(self) -> np.ndarray:
        """The node each link delivers to."""
        return np.array([b for _, b in self.links], dtype=np.int64)


def build_network(
    cubes: int,
    *,
    host: bool = True,
    topology: CubeTopology = "none",
    mesh_columns: int = 0,
    host_cubes: Sequence[int] | None = None,
) -> Network:
    """A host linked to ``host_cubes`` (default: every cube, a star) of ``cubes`` cubes, plus a
    cube network of the given topology."""
    if cubes < 1:
        raise ConfigError(f"a memory network needs at least one cube, got {cubes}")
    attached = tuple(range(cubes)) if host_cubes is None else tuple(host_cubes)
    if host and (not attached or len(set(attached)) != len(attached)
                 or not all(0 <= k < cubes for k in attached)):  # fmt: skip
        raise ConfigError(f"host_cubes must be distinct cubes of 0..{cubes - 1}, at least one; "
                          f"got {list(attached)}")  # fmt: skip
    if host and len(attached) < cubes and topology == "none":
        raise ConfigError(f"the host links to {len(attached)} of the {cubes} cubes; the others "
                          "need a cube network to reach it (set the cube topology)")  # fmt: skip
    net = Network(cubes, host, topology, mesh_columns, tuple(sorted(attached)) if host else ())

    def add(a: int, b: int, kind: str) -> None:
        net.links.append((a, b))
        net.kinds.append(kind)

    if host:
        for c in net.host_cubes:
            add(net.host, c, "host-to-cube")
            add(c, net.host, "cube-to-host")
    if topology == "fully-connected":
        for a in range(cubes):
            for b in range(cubes):
                if a != b:
                    add(a, b, "cube")
    elif topology == "hypercube":
        dims = cubes.bit_length() - 1
        if 1 << dims != cubes:
            raise ConfigError(f"a hypercube needs a power-of-two number of cubes, got {cubes}")
        for a in range(cubes):
            for d in range(dims):
                add(a, a ^ (1 << d), "cube")
    elif topology == "mesh":
        if mesh_columns < 1 or cubes % mesh_columns:
            raise ConfigError(f"a {cubes}-cube mesh cannot have {mesh_columns} columns")
        rows = cubes // mesh_columns
        for r in range(rows):
            for c in range(mesh_columns):
                a = r * mesh_columns + c
                for dr, dc in ((0, 1), (0, -1), (1, 0), (-1, 0)):
                    if 0 <= r + dr < rows and 0 <= c + dc < mesh_columns:
                        add(a, (r + dr) * mesh_columns + c + dc, "cube")
    elif topology != "none":
        raise ConfigError(
            f"unknown cube topology {topology!r}; expected none, fully-connected, hypercube, mesh"
        )
    if host:  # each cube's port: the attached cube fewest hops away, the lowest of equals
        net.port = [c if c in net.host_cubes else
                    min(net.host_cubes, key=lambda p, c=c: (net.hop_count(c, p), p))
                    for c in range(cubes)]  # fmt: skip
    return net
