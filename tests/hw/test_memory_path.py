"""The memory path's components on their own: router hops cross exactly the topology's route,
the host interface goes through a cube's port both ways, the address map writes the mapping's
coordinates (with remapped line ranges), and the vaults queue, back up and complete requests."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from ndpsim.engine import events as ev
from ndpsim.hw import link as linkmod
from ndpsim.hw import requests as rq
from ndpsim.hw.dram import controller as ctl
from ndpsim.hw.dram import vaults as vaultmod
from ndpsim.hw.dram.address_map import build_address_map, locate
from ndpsim.hw.dram.mapping import FIELDS, AddressMapping
from ndpsim.hw.dram.spec import load_dram_preset
from ndpsim.hw.hops import build_hops, route
from ndpsim.hw.host_interface import build_host_interface, down, up
from ndpsim.hw.network import build_network

SIZE = 80  # bytes of a packet
TOPOLOGIES = [("mesh", 6), ("hypercube", 8), ("fully-connected", 4)]


def _links(net):
    return linkmod.build_links([10.0 * (1 + i % 3) for i in range(len(net.links))],
                               [1000] * len(net.links))  # fmt: skip


def _by_hand(links, path, now, size):
    for link in path:
        now = linkmod.send(links, link, now, size, linkmod.OTHER)
    return now


@pytest.mark.parametrize(("topology", "cubes"), TOPOLOGIES)
def test_hops_take_the_topologys_route_and_pay_every_link(topology, cubes):
    net = build_network(cubes, host=False, topology=topology, mesh_columns=3)
    hops = build_hops(net)
    for a, b in itertools.permutations(range(cubes), 2):
        links, expected = _links(net), _links(net)
        arrival = route(hops, links, a, b, 500, SIZE, linkmod.OTHER)
        assert arrival == _by_hand(expected, net.route(a, b), 500, SIZE)
        np.testing.assert_array_equal(links.traffic, expected.traffic)
    assert route(hops, _links(net), 2, 2, 500, SIZE, linkmod.OTHER) == 500


def test_the_host_interface_goes_through_each_cubes_port_both_ways():
    net = build_network(6, host=True, topology="mesh", mesh_columns=3, host_cubes=[0, 5])
    host, hops = build_host_interface(net), build_hops(net)
    for cube in range(6):
        port = net.port[cube]
        assert port in (0, 5) and host.port[cube] == port
        links, expected = _links(net), _links(net)
        there = down(host, hops, links, cube, 0, SIZE, linkmod.OTHER)
        by_hand = _by_hand(expected, [net.link_id(net.host, port), *net.route(port, cube)], 0,
                           SIZE)  # fmt: skip
        assert there == by_hand
        back = up(host, hops, links, cube, there, SIZE, linkmod.OTHER)
        assert back == _by_hand(expected, [*net.route(cube, port), net.link_id(port, net.host)],
                                by_hand, SIZE)  # fmt: skip
        np.testing.assert_array_equal(links.traffic, expected.traffic)


def _mapping(order):
    return AddressMapping.from_layout(
        [(name, 2 if name != "column" else 3) for name in order] + [("offset", 7)]
    )


def test_the_address_map_writes_the_mappings_coordinates_and_remaps_its_ranges():
    base = _mapping(["row", "bank", "bankgroup", "rank", "column", "channel", "cube"])
    other = _mapping(["row", "cube", "bank", "bankgroup", "rank", "column", "channel"])
    lines = np.arange(0, 1 << 13, 37, dtype=np.int64)
    remap = np.array([[100, 400], [4000, 5000]], dtype=np.int64)
    amap = build_address_map(128, 4, *base.arrays(), remap, *other.arrays())
    pool = rq.request_pool(4)
    rid = rq.allocate(pool)
    channels_per_cube = 4
    for line in lines:
        pool.fields[rid, rq.Q_LINE] = line
        cube = locate(amap, pool, rid)
        inside = any(lo <= line < hi for lo, hi in remap)
        want = (other if inside else base).decode(np.array([line * 128]), FIELDS)
        want = {name: int(value[0]) for name, value in want.items()}
        f = pool.fields[rid]
        assert cube == f[rq.Q_CUBE] == want["cube"]
        assert f[rq.Q_CHANNEL] == want["cube"] * channels_per_cube + want["channel"]
        assert (f[rq.Q_RANK], f[rq.Q_BANKGROUP], f[rq.Q_BANK], f[rq.Q_ROW], f[rq.Q_COLUMN]) == (
            want["rank"],
            want["bankgroup"],
            want["bank"],
            want["row"],
            want["column"],
        )


def test_the_vaults_back_up_a_full_queue_in_order_and_complete_every_request():
    preset = load_dram_preset("hmc-sndp")
    dram = ctl.build_dram_state(preset)
    channels = preset.organization.channels
    vaults = vaultmod.build_vaults(preset.timing.tCK_ps, channels,
                                   np.full(1, -1, dtype=np.int64))  # fmt: skip
    pool = rq.request_pool(256)
    events = ev.event_queue(1024)
    sent = []
    for k in range(3 * 64):  # every request to channel 0, bank 0, a row each: a long queue
        rid = rq.allocate(pool)
        f = pool.fields[rid]
        f[rq.Q_KIND] = rq.R_LOAD
        f[rq.Q_CHANNEL], f[rq.Q_RANK], f[rq.Q_BANKGROUP] = 0, 0, 0
        f[rq.Q_BANK], f[rq.Q_ROW], f[rq.Q_COLUMN] = 0, k, 0
        vaultmod.arrive(vaults, dram, pool, rid, 0)
        sent.append(rid)
    assert vaults.backlog_head[0] >= 0, "a queue this long backs up"
    done = []
    for _ in range(1_000_000):  # channel runs; refresh keeps waking them, so stop when done
        if len(done) == len(sent) or vaults.tick_min[0] >= vaultmod.NEVER:
            break
        now = int(vaults.tick_min[0])
        vaultmod.CLOCK.tick(vaults, dram, events, pool, now)
        while ev.peek_time(events) >= 0:
            kind, rid = ev.pop(events)[1:3]
            assert kind == vaultmod.EV_DRAM_DONE
            done.append(int(rid))
    assert sorted(done) == sorted(sent)
    assert vaults.backlog_head[0] < 0
    assert int(dram.q_count.sum()) == 0
