"""The host's way into the memory cubes, compiled: its links to the cubes it is attached to,
and, for every cube, the attached cube (its port) whose links its traffic takes.

In a star the host links to every cube and each cube is its own port; with ``host_cubes`` the
host links to some, and the cube network carries the rest of the way (:mod:`ndpsim.hw.hops`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from ndpsim.hw import hops as hopsmod
from ndpsim.hw import link as linkmod
from ndpsim.numba_cache import compiled

if TYPE_CHECKING:
    from ndpsim.hw.network import Network


class HostInterface(NamedTuple):
    to_cube: np.ndarray  # int64[cubes]: the host's link towards each cube's port (TX channel)
    from_cube: np.ndarray  # int64[cubes]: the link to the host from each cube's port (RX)
    port: np.ndarray  # int64[cubes]: the cube whose host links a cube's traffic takes


def build_host_interface(network: Network) -> HostInterface:
    net = network
    port = np.array(net.port, dtype=np.int64)
    return HostInterface(
        to_cube=np.array([net.link_id(net.host, p) for p in net.port], dtype=np.int64),
        from_cube=np.array([net.link_id(p, net.host) for p in net.port], dtype=np.int64),
        port=port,
    )


@compiled(inline=True)
def down(host, hops, links, cube, now, size, traffic):
    """Send a packet from the host to ``cube``: over the host's link to the cube's port, then
    through the cube network; returns its arrival."""
    now = linkmod.send(links, host.to_cube[cube], now, size, traffic)
    return hopsmod.route(hops, links, host.port[cube], cube, now, size, traffic)


@compiled(inline=True)
def up(host, hops, links, cube, now, size, traffic):
    """Send a packet from ``cube`` to the host: through the cube network to its port, then over
    the port's link to the host; returns its arrival."""
    now = hopsmod.route(hops, links, cube, host.port[cube], now, size, traffic)
    return linkmod.send(links, host.from_cube[cube], now, size, traffic)
