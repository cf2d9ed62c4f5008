"""Point-to-point links: serialization plus flight latency, queueing behind earlier packets,
saturation at the link's bandwidth, the utilization a channel monitor reads, and exact per-class
byte, packet and busy-time accounting."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ndpsim.engine.clock import PS_PER_S, serialization_ps
from ndpsim.hw import link as L

# bandwidths (GB/s) whose 1024-byte serialization time is a whole number of picoseconds, so a
# packet's time on the wire is exactly serialization_ps(size, bandwidth)
EXACT_GBPS = [10, 20, 25, 40, 50, 64, 80, 128, 160, 320]


def test_traffic_classes_are_numbered_in_name_order():
    assert L.CLASS_NAMES[L.READ_REQUEST] == "read_request"
    assert L.CLASS_NAMES[L.READ_DATA] == "read_data"
    assert L.CLASS_NAMES[L.WRITE_REQUEST] == "write_request"
    assert L.CLASS_NAMES[L.WRITE_ACK] == "write_ack"
    assert L.CLASS_NAMES[L.OFFLOAD] == "offload"
    assert L.CLASS_NAMES[L.OTHER] == "other"
    assert len(set(L.CLASS_NAMES)) == 6


def test_a_single_packet_arrives_after_serialization_plus_latency():
    links = L.build_links([80.0, 20.0], [10_000, 3_000])
    # 128 B at 80 GB/s is 1.6 ns on the wire, then 10 ns of flight
    assert L.send(links, 0, 1_000, 128, L.READ_DATA) == 1_000 + 1_600 + 10_000
    # the other link is independent: 16 B at 20 GB/s is 0.8 ns
    assert L.send(links, 1, 1_000, 16, L.READ_REQUEST) == 1_000 + 800 + 3_000
    # an idle link starts a later packet at once
    assert L.send(links, 0, 50_000, 128, L.READ_DATA) == 50_000 + 1_600 + 10_000


def test_a_packet_queues_behind_the_one_on_the_wire():
    links = L.build_links([80.0], [10_000])
    first = L.send(links, 0, 0, 128, L.READ_DATA)
    second = L.send(links, 0, 100, 128, L.READ_DATA)
    assert second - first == 1_600
    assert links.busy_until[0] == 3_200


@pytest.mark.parametrize("gbps", [80.0, 30.0, 20.5, 160.0, 7.3])
def test_a_link_saturates_at_its_bandwidth(gbps):
    latency, size, packets = 10_000, 128, 2_000
    links = L.build_links([gbps], [latency])
    arrivals = [L.send(links, 0, 0, size, L.READ_DATA) for _ in range(packets)]
    assert arrivals == sorted(arrivals)
    ideal = packets * size * PS_PER_S / (gbps * 1e9) + latency
    assert arrivals[-1] == pytest.approx(ideal, rel=1e-3)
    assert arrivals[-1] >= ideal  # rounding never makes a link faster than its bandwidth


def test_utilization_is_one_when_overfed_and_half_at_half_rate():
    duration = serialization_ps(128, 80)  # 1600 ps
    links = L.build_links([80.0, 80.0, 80.0], [10_000] * 3, window_ps=100_000)
    now = 0
    for step in range(1_000):
        L.send(links, 0, now, 128, L.READ_DATA)  # offered at twice the bandwidth
        if step % 4 == 0:
            L.send(links, 1, now, 128, L.READ_DATA)  # one packet per two serialization times
        now += duration // 2
    assert L.utilization(links, 0, now) == pytest.approx(1.0, abs=0.02)
    assert L.utilization(links, 1, now) == pytest.approx(0.5, abs=0.02)
    assert L.utilization(links, 2, now) == 0.0


def test_utilization_of_an_idle_link_decays_to_zero():
    links = L.build_links([80.0], [0], window_ps=10_000)
    for t in range(0, 20_000, 1_600):
        L.send(links, 0, t, 128, L.OTHER)
    assert L.utilization(links, 0, 20_000) > 0.9
    assert L.utilization(links, 0, 100_000) == 0.0


_PACKETS = st.lists(
    st.tuples(st.integers(1, 4096), st.integers(0, len(L.CLASS_NAMES) - 1), st.integers(0, 5000)),
    min_size=1,
    max_size=60,
)


@settings(max_examples=150, deadline=None)
@given(_PACKETS, st.sampled_from(EXACT_GBPS), st.integers(0, 50_000))
def test_accounting_matches_exactly_what_was_sent(packets, gbps, latency):
    links = L.build_links([gbps], [latency])
    bytes_by_class = np.zeros(len(L.CLASS_NAMES), dtype=np.int64)
    packets_by_class = np.zeros(len(L.CLASS_NAMES), dtype=np.int64)
    now = end = busy = 0
    for size, traffic_class, gap in packets:
        now += gap
        start = max(now, end)
        arrival = L.send(links, 0, now, size, traffic_class)
        wire = serialization_ps(size, gbps)
        assert arrival == start + wire + latency
        end = start + wire
        busy += wire
        bytes_by_class[traffic_class] += size
        packets_by_class[traffic_class] += 1
    assert links.traffic[0, :, 0].tolist() == bytes_by_class.tolist()
    assert links.traffic[0, :, 1].tolist() == packets_by_class.tolist()
    assert links.busy_ps[0] == busy
    assert links.busy_until[0] == end


@settings(max_examples=50, deadline=None)
@given(st.lists(st.integers(64, 4096), min_size=1, max_size=40), st.floats(1.0, 400.0))
def test_busy_time_of_any_bandwidth_is_within_rounding_of_bytes_over_bandwidth(sizes, gbps):
    links = L.build_links([gbps], [0])
    for size in sizes:
        L.send(links, 0, 0, size, L.OTHER)
    exact = sum(sizes) * PS_PER_S / (gbps * 1e9)
    assert exact <= links.busy_ps[0] <= exact * 1.001 + len(sizes)
    assert links.busy_until[0] == links.busy_ps[0]


def test_a_link_busy_longer_than_it_was_last_busy_until_is_overdrawn():
    links = L.build_links([1.0, 1.0], [0, 0])
    L.send(links, 0, 0, 1024, L.READ_DATA)
    L.send(links, 1, 0, 1024, L.READ_DATA)
    assert len(L.overdrawn(links)) == 0
    links.busy_until[1] = 0  # what resetting a link mid-run did
    L.send(links, 1, 10, 1024, L.READ_DATA)
    assert L.overdrawn(links).tolist() == [1]


def test_a_packet_across_window_boundaries_is_charged_to_each_window_it_occupies():
    links = L.build_links([80.0], [0], window_ps=10_000)
    L.send(links, 0, 9_000, 3_200, L.READ_DATA)  # 40 ns on the wire: 1 + 10 + 10 + 10 + 9 ns
    assert L.utilization(links, 0, 10_000) == pytest.approx(0.1)  # only its first nanosecond
    assert L.utilization(links, 0, 50_000) == pytest.approx(0.9)  # its last nine
    assert L.busiest_window_ps(links)[0] == 10_000


@settings(max_examples=150, deadline=None)
@given(_PACKETS, st.sampled_from(EXACT_GBPS), st.integers(1_000, 50_000))
def test_no_window_is_ever_busier_than_its_length(packets, gbps, window):
    links = L.build_links([gbps], [0], window_ps=window)
    now = 0
    for size, traffic_class, gap in packets:
        now += gap
        L.send(links, 0, now, size, traffic_class)
        assert 0 <= L.utilization(links, 0, now) <= 1
    assert L.busiest_window_ps(links)[0] <= window
    assert len(L.misaccounted(links)) == 0


def test_packets_overlapping_on_the_wire_make_a_window_busier_than_its_length():
    links = L.build_links([80.0, 80.0], [0, 0], window_ps=10_000)
    for link in (0, 1):
        L.send(links, link, 0, 640, L.READ_DATA)  # 8 ns
    links.busy_until[1] = 0  # freed mid-packet, as the end of TOM's learning phase once did
    for link in (0, 1):
        L.send(links, link, 0, 640, L.READ_DATA)
    assert L.busiest_window_ps(links).tolist() == [10_000, 16_000]
    for link in (0, 1):
        L.send(links, link, 20_000, 64, L.READ_DATA)  # the windows roll over
    assert links.peak_window_busy_ps.tolist() == [10_000, 16_000]


def test_busy_time_changed_behind_a_links_back_is_misaccounted():
    links = L.build_links([7.3, 7.3], [0, 0])
    for size in (64, 80, 136):
        L.send(links, 0, 0, size, L.OTHER)
        L.send(links, 1, 0, size, L.OTHER)
    assert len(L.misaccounted(links)) == 0
    links.busy_ps[1] += 3 * 1024  # more than rounding three packets up can explain
    assert L.misaccounted(links).tolist() == [1]
