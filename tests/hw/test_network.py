"""Memory networks: the links each topology builds and the deterministic routes over them — XY on
a mesh, dimension order on a hypercube, one hop when fully connected, the host star, and cube
traffic relayed by the host when there is no cube network — plus rejected configurations."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from ndpsim.errors import ConfigError
from ndpsim.hw.network import build_network
from ndpsim.hw.topologies import CUBE_TOPOLOGIES

MESHES = [(16, 4), (16, 8), (8, 2), (6, 3), (4, 1), (5, 5)]


def nodes_of(net, a, b) -> list[int]:
    """The nodes a packet from ``a`` to ``b`` visits, checking that its links chain."""
    visited = [a]
    for link in net.route(a, b):
        src, dst = net.links[link]
        assert src == visited[-1], f"link {link} of route {a}->{b} does not start where it is"
        visited.append(dst)
    assert visited[-1] == b
    return visited


def all_nodes(net) -> range:
    return range(net.cubes + (1 if net.has_host else 0))


@pytest.mark.parametrize("cubes,columns", MESHES)
@pytest.mark.parametrize("host", [False, True])
def test_mesh_routes_are_xy_with_manhattan_hop_counts(cubes, columns, host):
    net = build_network(cubes, host=host, topology="mesh", mesh_columns=columns)
    for a, b in itertools.permutations(range(cubes), 2):
        (ar, ac), (br, bc) = divmod(a, columns), divmod(b, columns)
        assert net.hop_count(a, b) == abs(ar - br) + abs(ac - bc)
        path = [divmod(n, columns) for n in nodes_of(net, a, b)]
        moves = []
        for (r0, c0), (r1, c1) in itertools.pairwise(path):
            assert abs(r0 - r1) + abs(c0 - c1) == 1, "a mesh hop joins neighbours"
            moves.append("row" if r0 == r1 else "column")
        # along the row (changing column) first, then along the column (changing row)
        assert moves == sorted(moves, key=lambda m: m == "column")


def test_a_mesh_links_exactly_the_neighbours():
    net = build_network(8, host=False, topology="mesh", mesh_columns=4)
    expected = {
        (a, b)
        for a, b in itertools.permutations(range(8), 2)
        if abs(a // 4 - b // 4) + abs(a % 4 - b % 4) == 1
    }
    assert set(net.links) == expected
    assert len(net.links) == len(expected)
    assert set(net.kinds) == {"cube"}


@pytest.mark.parametrize("cubes", [2, 8, 16])
def test_hypercube_hop_count_is_the_popcount_of_the_address_difference(cubes):
    net = build_network(cubes, topology="hypercube")
    for a, b in itertools.permutations(range(cubes), 2):
        path = nodes_of(net, a, b)
        assert net.hop_count(a, b) == (a ^ b).bit_count()
        flipped = [(x ^ y).bit_length() - 1 for x, y in itertools.pairwise(path)]
        assert all((x ^ y).bit_count() == 1 for x, y in itertools.pairwise(path))
        assert flipped == sorted(flipped), "dimension order: lowest differing bit first"


@pytest.mark.parametrize("host", [False, True])
def test_fully_connected_cubes_are_one_hop_apart(host):
    net = build_network(5, host=host, topology="fully-connected")
    for a, b in itertools.permutations(range(5), 2):
        assert net.route(a, b) == [net.links.index((a, b))]
    assert net.kinds.count("cube") == 5 * 4


@pytest.mark.parametrize("topology", ["none", "fully-connected", "hypercube", "mesh"])
def test_the_host_reaches_every_cube_in_one_hop(topology):
    net = build_network(8, topology=topology, mesh_columns=4)
    assert net.host == 8
    for cube in range(8):
        (to_cube,) = net.route(net.host, cube)
        (to_host,) = net.route(cube, net.host)
        assert net.links[to_cube] == (net.host, cube)
        assert net.kinds[to_cube] == "host-to-cube"
        assert net.links[to_host] == (cube, net.host)
        assert net.kinds[to_host] == "cube-to-host"


def test_without_a_cube_network_cube_traffic_goes_through_the_host():
    net = build_network(4, topology="none")
    assert len(net.links) == 8
    for a, b in itertools.permutations(range(4), 2):
        assert nodes_of(net, a, b) == [a, net.host, b]
        assert net.hop_count(a, b) == 2


def test_cubes_with_neither_host_nor_cube_network_are_refused_when_built():
    with pytest.raises(ConfigError, match="cube topology 'star' with 2 cubes: cubes are not "
                       "connected"):  # fmt: skip
        build_network(2, host=False, topology="star")


@pytest.mark.parametrize(
    "topology,cubes,columns,host",
    [
        ("none", 4, 0, True),
        *[
            (topology, cubes, columns, host)
            for topology, cubes, columns in [
                ("fully-connected", 6, 0),
                ("hypercube", 8, 0),
                ("mesh", 12, 4),
            ]
            for host in (False, True)
        ],
    ],
)
def test_every_route_chains_from_source_to_destination(topology, cubes, columns, host):
    net = build_network(cubes, host=host, topology=topology, mesh_columns=columns)
    for a, b in itertools.permutations(all_nodes(net), 2):
        path = nodes_of(net, a, b)
        assert len(set(path)) == len(path), "a route never revisits a node"
    for a in all_nodes(net):
        assert net.route(a, a) == []


@pytest.mark.parametrize(
    "topology,cubes,columns",
    [("none", 4, 0), ("fully-connected", 4, 0), ("hypercube", 8, 0), ("mesh", 8, 4)],
)
def test_route_table_agrees_with_route(topology, cubes, columns):
    net = build_network(cubes, topology=topology, mesh_columns=columns)
    next_link, hops = net.route_table()
    n = cubes + 1
    assert next_link.shape == hops.shape == (n, n)
    destination = net.link_destination()
    for a, b in itertools.product(range(n), repeat=2):
        route = net.route(a, b)
        assert hops[a, b] == len(route) == net.hop_count(a, b)
        if a == b:
            assert next_link[a, b] == -1
            continue
        assert next_link[a, b] == route[0]
        # following next_link hop by hop, as compiled code does, walks the same route
        walked, node = [], a
        while node != b:
            walked.append(int(next_link[node, b]))
            node = int(destination[walked[-1]])
        assert walked == route
    assert np.all(np.diag(hops) == 0)


@pytest.mark.parametrize(
    "kwargs,message",
    [
        (dict(cubes=6, topology="hypercube"), "power-of-two"),
        (dict(cubes=6, topology="mesh", mesh_columns=4), "columns"),
        (dict(cubes=4, topology="mesh", mesh_columns=0), "columns"),
        (dict(cubes=4, topology="torus"), "unknown cube topology 'torus'"),
        (dict(cubes=0), "at least one cube"),
        (dict(cubes=-2, topology="mesh", mesh_columns=1), "at least one cube"),
        (dict(cubes=4, topology="mesh", mesh_columns=2, host_cubes=[]), "at least one"),
        (dict(cubes=4, topology="mesh", mesh_columns=2, host_cubes=[0, 0]), "distinct"),
        (dict(cubes=4, topology="mesh", mesh_columns=2, host_cubes=[4]), "cubes of 0..3"),
        (dict(cubes=4, host_cubes=[0, 3]), "need a cube network"),
    ],
)
def test_bad_configurations_are_config_errors(kwargs, message):
    with pytest.raises(ConfigError, match=message):
        build_network(**kwargs)


def test_a_host_at_a_meshs_corners_reaches_each_cube_through_the_nearest_corner():
    net = build_network(16, topology="mesh", mesh_columns=4, host_cubes=[15, 0, 3, 12])
    assert net.host_cubes == (0, 3, 12, 15)
    assert sum(kind == "host-to-cube" for kind in net.kinds) == 4
    # rows of the mesh: each quadrant's corner; the lower-numbered corner of equals
    assert net.port == [0, 0, 3, 3, 0, 0, 3, 3, 12, 12, 15, 15, 12, 12, 15, 15]
    assert nodes_of(net, net.host, 5) == [net.host, 0, 1, 5]  # XY from the corner
    assert nodes_of(net, 10, net.host) == [10, 11, 15, net.host]
    assert nodes_of(net, 0, net.host) == [0, net.host]
    for cube in range(16):  # in and out through the same corner, as many hops each way
        up, down = nodes_of(net, cube, net.host), nodes_of(net, net.host, cube)
        assert up[-2] == down[1] == net.port[cube]
        assert len(up) == len(down)


@pytest.mark.parametrize("topology,cubes,columns,host_cubes", [
    ("mesh", 16, 4, [0, 3, 12, 15]),
    ("mesh", 8, 4, [5]),
    ("hypercube", 8, 0, [0]),
    ("fully-connected", 4, 0, [1, 2]),
])  # fmt: skip
def test_routes_from_and_to_a_partly_linked_host_chain_and_agree_with_the_table(
    topology, cubes, columns, host_cubes
):
    net = build_network(cubes, topology=topology, mesh_columns=columns, host_cubes=host_cubes)
    next_link, hops = net.route_table()
    destination = net.link_destination()
    for a, b in itertools.permutations(all_nodes(net), 2):
        path = nodes_of(net, a, b)
        assert len(set(path)) == len(path)
        assert hops[a, b] == len(path) - 1
        walked, node = [a], a  # as compiled code follows it, hop by hop
        while node != b:
            node = int(destination[next_link[node, b]])
            walked.append(node)
        assert walked == path


def test_a_star_is_the_default_and_every_cube_its_own_port():
    net = build_network(4, topology="hypercube")
    assert net.host_cubes == (0, 1, 2, 3) and net.port == [0, 1, 2, 3]


class _Wandering:
    """A topology whose routes leave its own links (a mistake the network must catch)."""

    def __init__(self, cubes, mesh_columns=None):
        self.cubes = cubes

    def links(self):
        return [(a, (a + 1) % self.cubes) for a in range(self.cubes)]

    def next_cube(self, a, b):
        return (a + 2) % self.cubes


def test_a_topology_whose_routes_leave_its_links_is_refused_when_built():
    CUBE_TOPOLOGIES.register("wandering")(_Wandering)
    try:
        with pytest.raises(ConfigError, match="cube topology 'wandering' with 4 cubes: no link "
                           "from node 0 to node 2"):  # fmt: skip
            build_network(4, topology="wandering")
    finally:
        CUBE_TOPOLOGIES.unregister("wandering")
