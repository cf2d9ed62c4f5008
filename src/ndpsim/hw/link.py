"""Unidirectional point-to-point links: serialization, flight latency, accounting.

A packet sent at time ``t`` starts when the transmitter is free, occupies it for
``size / bandwidth``, and arrives ``latency`` later. Bytes and packets are counted per traffic
class, and busy time per utilization window, which is what a channel-busy monitor reads; the
busiest window so far is kept too, so a run can check that no link was ever busier than 100%.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ndpsim.engine.clock import PS_PER_S
from ndpsim.numba_cache import compiled

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
    window_busy: np.ndarray  # int64[links]: busy picoseconds of the packets started in the
    # current window and of what ran over into it, parts past its end included
    last_utilization: np.ndarray  # float64[links]: utilization of the last full window
    peak_window_busy_ps: np.ndarray  # int64[links]: the most busy time a window held (those
    # rolled over; see busiest_window_ps)
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
        peak_window_busy_ps=np.zeros(n, dtype=np.int64),
        busy_ps=np.zeros(n, dtype=np.int64),
        traffic=np.zeros((n, len(CLASS_NAMES), 2), dtype=np.int64),
    )


def overdrawn(links: Links) -> np.ndarray:
    """Links busy longer than the time up to which they were last busy: impossible for a link
    that starts a packet only once the previous one is out, so a bug in whatever changed it."""
    return np.flatnonzero(links.busy_ps > links.busy_until)


def misaccounted(links: Links) -> np.ndarray:
    """Links whose busy time is not the time their bytes take on the wire (each packet rounded
    up to a picosecond, as :func:`send` does): busy time or traffic changed behind its back."""
    moved = links.traffic[:, :, 0].sum(axis=1).astype(object) * links.ps_per_kb.astype(object)
    packets = links.traffic[:, :, 1].sum(axis=1).astype(object)
    busy = links.busy_ps.astype(object) * 1024  # Python integers: no overflow
    return np.flatnonzero((busy < moved) | (busy > moved + 1023 * packets))


def busiest_window_ps(links: Links) -> np.ndarray:
    """Per link, the most busy time any utilization window held, the current one included: at
    most the window's length unless packets overlapped on the wire."""
    over = np.maximum(links.busy_until - links.window_start - links.window_ps[0], 0)
    return np.maximum(links.peak_window_busy_ps, links.window_busy - over)


@compiled(inline=True)
def _roll_window(links, link, now):
    w = links.window_ps[0]
    start = links.window_start[link]
    if now >= start + w:
        elapsed = (now - start) // w
        # Everything charged to the window lies in [start, busy_until), and only its last
        # packet can run past the window's end, busy without a break up to busy_until: that
        # part belongs to the windows after it, the first of which it fills the most.
        until = links.busy_until[link]
        over = max(until - start - w, 0)
        held = links.window_busy[link] - over
        after = min(over, w)
        links.peak_window_busy_ps[link] = max(links.peak_window_busy_ps[link], held, after)
        if elapsed > 1:  # the window that just ended holds only what ran over into it
            held = min(max(until - start - (elapsed - 1) * w, 0), w)
        links.last_utilization[link] = held / w
        start += elapsed * w
        links.window_start[link] = start
        links.window_busy[link] = max(until - start, 0)


@compiled(inline=True)
def send(links, link, now, size_bytes, traffic_class):
    """Put a packet on ``link`` at ``now``; returns its arrival time at the far end."""
    start = max(now, links.busy_until[link])
    duration = (size_bytes * links.ps_per_kb[link] + 1023) >> 10
    end = start + duration
    _roll_window(links, link, start)  # before busy_until moves: it reads the last packet's end
    links.busy_until[link] = end
    links.busy_ps[link] += duration
    links.window_busy[link] += duration
    links.traffic[link, traffic_class, 0] += size_bytes
    links.traffic[link, traffic_class, 1] += 1
    return end + links.latency_ps[link]


@compiled(inline=True)
def utilization(links, link, now):
    """Busy fraction of the link: the larger of the last full window and the current one so
    far (a monitor reacts within a window, not only after it)."""
    _roll_window(links, link, now)
    elapsed = now - links.window_start[link]
    current = links.window_busy[link] / elapsed if elapsed > 0 else 0.0
    return max(links.last_utilization[link], min(current, 1.0))
