"""Router hops: a packet crossing the cube network link by link, compiled.

The topology (:mod:`ndpsim.hw.network`) gives, for every pair of nodes, the link a router takes
towards the other; a packet then pays each link's queueing and serialization in turn
(:func:`ndpsim.hw.link.send`), store and forward. :func:`route` books the whole way when the
packet leaves, which is exact as long as no packet sent later reaches a link of the way before
it: true of a few hops between cubes, not of a mesh many hops wide, where a packet booked ahead
holds up every packet that reaches a link earlier but is sent after it. There a packet crosses
one hop at a time (:func:`next_hop`), an event at each router, so links serve packets in the
order they reach them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from ndpsim.hw import link as linkmod
from ndpsim.hw import requests as rq
from ndpsim.numba_cache import compiled

if TYPE_CHECKING:
    from ndpsim.hw.network import Network


class Hops(NamedTuple):
    next_link: np.ndarray  # int64[nodes, nodes]: the link to take at a node towards another
    link_to: np.ndarray  # int64[links]: the node a link delivers to


def build_hops(network: Network) -> Hops:
    next_link, _ = network.route_table()
    return Hops(next_link=next_link, link_to=network.link_destination())


@compiled(inline=True)
def route(hops, links, a, b, now, size, traffic):
    """Send a packet of ``size`` bytes from node ``a`` to node ``b``; returns its arrival."""
    while a != b:
        link = hops.next_link[a, b]
        now = linkmod.send(links, link, now, size, traffic)
        a = hops.link_to[link]
    return now


@compiled(inline=True)
def next_hop(hops, links, pool, rid, now, size, traffic):
    """Request ``rid``'s packet of ``size`` bytes leaves the router it has reached
    (``Q_NODE``) on the link towards ``Q_DEST``; returns when it reaches the next router, whose
    node it now holds."""
    f = pool.fields[rid]
    link = hops.next_link[f[rq.Q_NODE], f[rq.Q_DEST]]
    f[rq.Q_NODE] = hops.link_to[link]
    return linkmod.send(links, link, now, size, traffic)
