"""Router hops: a packet crossing the cube network link by link, compiled.

The topology (:mod:`ndpsim.hw.network`) gives, for every pair of nodes, the link a router takes
towards the other; a packet then pays each link's queueing and serialization in turn
(:func:`ndpsim.hw.link.send`), store and forward.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from ndpsim.hw import link as linkmod
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
