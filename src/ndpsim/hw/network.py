"""Memory networks: which links exist between a host and memory cubes, and the route from any
node to any other.

Nodes ``0 .. cubes-1`` are the cubes; node ``cubes`` is the host (GPU or CPU) when there is one.
A topology lists directed links; :meth:`Network.route` gives the links a packet crosses. Routing
is deterministic. The host links to every cube (a star) or to some of them (``host_cubes``, the
cubes its memory controllers attach to, such as the corners of a mesh); traffic between the host
and a cube it has no link to enters and leaves through the cube's *port*, the attached cube
fewest hops away (the lowest-numbered of equals), and crosses the cube network in between.
Cube-to-cube traffic follows the cube topology (:mod:`ndpsim.hw.topologies`: fully connected,
a hypercube, a 2D mesh, or one of your own); with no cube network (a star), cube-to-cube
traffic goes through the host, which must then link to every cube.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from ndpsim.errors import ConfigError
from ndpsim.hw.topologies import CUBE_TOPOLOGIES, CubeNetwork


@dataclass
class Network:
    """Directed links between nodes, and shortest deterministic routes."""

    cubes: int
    has_host: bool
    topology: str  # its name in CUBE_TOPOLOGIES
    cube_network: CubeNetwork
    host_cubes: tuple[int, ...] = ()  # the cubes the host links to (all of them: a star)
    port: list[int] = field(default_factory=list)  # per cube, the attached cube it reaches
    # the host through
    links: list[tuple[int, int]] = field(default_factory=list)  # (from node, to node)
    kinds: list[str] = field(default_factory=list)  # "host-to-cube", "cube-to-host", "cube"
    link_ids: dict[tuple[int, int], int] = field(default_factory=dict)  # the inverse of links

    @property
    def host(self) -> int:
        return self.cubes

    @property
    def links_cubes(self) -> bool:
        """Whether cubes have links between them (a cube network), not only to the host."""
        return "cube" in self.kinds

    @property
    def num_nodes(self) -> int:
        return self.cubes + (1 if self.has_host else 0)

    def link_label(self, i: int, host: str) -> str:
        """Link ``i``'s name in results: ``cube0->cube1``, the host's end called ``host``."""
        a, b = self.links[i]
        name = lambda n: host if n == self.host else f"cube{n}"  # noqa: E731
        return f"{name(a)}->{name(b)}"

    def link_id(self, a: int, b: int) -> int:
        try:
            return self.link_ids[a, b]
        except KeyError:
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
        if self.links_cubes:
            return self.cube_network.next_cube(a, b)
        if self.has_host and len(self.host_cubes) == self.cubes:
            return self.host  # no cube network: go through the host
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
        nxt = np.arange(n)[None, :].repeat(n, axis=0)  # nxt[a, b]: the node after a towards b
        for a in range(n):
            for b in range(n):
                if a != b:
                    nxt[a, b] = self.next_hop(a, b)
                    next_link[a, b] = self.link_id(a, nxt[a, b])
        for b in range(n):  # towards b, a node is one hop more than the node after it
            known = {b: 0}
            for a in range(n):
                path, node = [], a
                while node not in known:
                    path.append(node)
                    if len(path) > n:
                        raise ConfigError(f"routing loop from {a} to {b}")
                    node = int(nxt[node, b])
                count = known[node]
                for on_the_way in reversed(path):
                    count += 1
                    known[on_the_way] = count
                hops[a, b] = known[a]
        return next_link, hops

    def link_destination(self) -> np.ndarray:
        """The node each link delivers to."""
        return np.array([b for _, b in self.links], dtype=np.int64)


def build_network(
    cubes: int,
    *,
    host: bool = True,
    topology: str = "star",
    mesh_columns: int | None = None,
    host_cubes: Sequence[int] | None = None,
) -> Network:
    """A host linked to ``host_cubes`` (default: every cube) of ``cubes`` cubes, plus the cube
    network of ``topology`` (a name in :data:`ndpsim.hw.topologies.CUBE_TOPOLOGIES`; a mesh's
    ``mesh_columns`` default to a square's)."""
    if cubes < 1:
        raise ConfigError(f"a memory network needs at least one cube, got {cubes}")
    attached = tuple(range(cubes)) if host_cubes is None else tuple(host_cubes)
    if host and (not attached or len(set(attached)) != len(attached)
                 or not all(0 <= k < cubes for k in attached)):  # fmt: skip
        raise ConfigError(f"host_cubes must be distinct cubes of 0..{cubes - 1}, at least one; "
                          f"got {list(attached)}")  # fmt: skip
    cube_network = CUBE_TOPOLOGIES.get(topology)(cubes, mesh_columns)
    net = Network(cubes, host, topology, cube_network, tuple(sorted(attached)) if host else ())

    def add(a: int, b: int, kind: str) -> None:
        net.link_ids.setdefault((a, b), len(net.links))
        net.links.append((a, b))
        net.kinds.append(kind)

    if host:
        for c in net.host_cubes:
            add(net.host, c, "host-to-cube")
            add(c, net.host, "cube-to-host")
    for a, b in cube_network.links():
        add(a, b, "cube")
    if host and len(attached) < cubes and not net.links_cubes:
        raise ConfigError(f"the host links to {len(attached)} of the {cubes} cubes; the others "
                          "need a cube network to reach it (set the cube topology)")  # fmt: skip
    if host:  # each cube's port: the attached cube fewest hops away, the lowest of equals
        net.port = [c if c in net.host_cubes else
                    min(net.host_cubes, key=lambda p, c=c: (net.hop_count(c, p), p))
                    for c in range(cubes)]  # fmt: skip
    try:  # every route ends, over listed links: a topology's mistake fails here, not mid-run
        net.route_table()
    except ConfigError as error:
        raise ConfigError(f"cube topology {topology!r} with {cubes} cubes: {error}") from None
    return net
