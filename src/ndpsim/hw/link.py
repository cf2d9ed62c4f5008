"""Unidirectional point-to-point links: serialization, flight latency, accounting.

A packet sent at time ``t`` starts when the transmitter is free, occupies it for
``size / bandwidth``, and arrives ``latency`` later. Bytes and packets are counted per traffic
class, and busy time per utilization window, which is what a channel-busy monitor reads.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from ndpsim.engine.clock import PS_PER_S

#: Traffic classes counted separately on every link.
CLASS_NAMES = ("read_request", "read_data", "write_request", "write_ack", "offload", "other")
READ_REQUEST, READ_DATA, WRITE_REQUEST, WRITE_ACK, OFFLOAD, OTHER = range(len(CLASS_NAMES))


class Links(NamedTuple):
    """Every link of a system, indexed by link id."""

    ps_per_kb: np.ndarray  # int64[links]: picoseconds to serialize 1024 bytes
    latency_ps: np.ndarray  # int64[links]
    busy_until: np.ndarray  # int64[links]
    window_ps: np.ndarray  # int64[1]: utilization window length
    window_start: np.ndarray  # int64[links]
    window_busy: np.ndarray  # int64[links]: busy picoseconds charged to the current window
    last_utilization: np.ndarray  # float64[links]: utilization of the last full window
    busy_ps: np.ndarray  # int64[links]: total busy time
    traffic: np.ndarray  # int64[links, classes, 2]: bytes, packets


def _ps_per_kb(bandwidth_gbps) -> np.ndarray:
    return np.ceil(1024 * PS_PER_S / (np.asarray(bandwidth_gbps, np.float64) * 1e9)).astype(
        np.int64
    )


def build_links(bandwidth_gbps, latency_ps, window_ps: int = 100_000) -> Links:
    """Links with the given bandwidths (GB/s) and flight latencies (ps)."""
    bw = np.asarray(bandwidth_gbps, dtype=np.float64)
    n = len(bw)
    return Links(
        ps_per_kb=_ps_per_kb(bw),
        latency_ps=np.asarray(latency_ps, dtype=np.int64).reshape(n),
        busy_until=np.zeros(n, dtype=np.int64),
        window_ps=np.array([window_ps], dtype=np.int64),
        window_start=np.zeros(n, dtype=np.int64),
        window_busy=np.zeros(n, dtype=np.int64),
        last_utilization=np.zeros(n, dtype=np.float64),
        busy_ps=np.zeros(n, dtype=np.int64),
        traffic=np.zeros((n, len(CLASS_NAMES), 2), dtype=np.int64),
    )


def overdrawn(links: Links) -> np.ndarray:
    """Links busy longer than the time up to which they were last busy: impossible for a link
    that starts a packet only once the previous one is out, so a bug in whatever changed it."""
    return np.flatnonzero(links.busy_ps > links.busy_until)


@njit(cache=True, inline="always")
def _roll_window(links, link, now):
    w = links.window_ps[0]
    if now >= links.window_start[link] + w:
        elapsed = (now - links.window_start[link]) // w
        # A packet is charged to the window it starts in; what runs past the window's end
        # is carried into the following windows, so no window is busier than its length.
        busy = links.window_busy[link]
        carried = max(busy - elapsed * w, 0)
        ended = min(max(busy - (elapsed - 1) * w, 0), w)  # the window that just ended
        links.last_utilization[link] = ended / w
        links.window_start[link] += elapsed * w
        links.window_busy[link] = carried


@njit(cache=True, inline="always")
def send(links, link, now, size_bytes, traffic_class):
    """Put a packet on ``link`` at ``now``; returns its arrival time at the far end."""
    start = max(now, links.busy_until[link])
    duration = (size_bytes * links.ps_per_kb[link] + 1023) >> 10
    end = start + duration
    links.busy_until[link] = end
    links.busy_ps[link] += duration
    _roll_window(links, link, start)
    links.window_busy[link] += duration
    links.traffic[link, traffic_class, 0] += size_bytes
    links.traffic[link, traffic_class, 1] += 1
    return end + links.latency_ps[link]


@njit(cache=True, inline="always")
def utilization(links, link, now):
    """Busy fraction of the link: the larger of the last full window and the current one so
    far (a monitor reacts within a window, not only after it)."""
    _roll_window(links, link, now)
    elapsed = now - links.window_start[link]
    current = links.window_busy[link] / elapsed if elapsed > 0 else 0.0
    return max(links.last_utilization[link], min(current, 1.0))
