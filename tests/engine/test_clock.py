"""Clock domains and time conversion: periods from frequencies, cycles to picoseconds and back
(rounding up), and the serialization time of a packet on a link."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ndpsim.engine.clock import PS_PER_S, ClockDomain, bytes_per_ps, serialization_ps
from ndpsim.errors import ConfigError


def test_a_clock_period_is_the_rounded_picoseconds_per_cycle():
    assert ClockDomain.from_ghz("core", 1.0).period_ps == 1000
    assert ClockDomain.from_ghz("core", 1.4).period_ps == 714
    assert ClockDomain.from_ghz("l2", 0.7).period_ps == 1429
    assert ClockDomain.from_ghz("xbar", 1.25).period_ps == 800
    assert ClockDomain.from_ghz("fast", 5000).period_ps == 1  # never a zero period
    assert ClockDomain.from_ghz("core", 2.0).ghz == 2.0


@pytest.mark.parametrize("ghz", [0, -1.0])
def test_a_non_positive_frequency_is_a_config_error(ghz):
    with pytest.raises(ConfigError, match="'core'"):
        ClockDomain.from_ghz("core", ghz)


def test_cycles_round_up_to_the_next_cycle_start():
    clock = ClockDomain("c", 714)
    assert clock.time(0) == 0
    assert clock.time(3) == 2142
    assert clock.cycles(0) == 0
    assert clock.cycles(1) == 1
    assert clock.cycles(714) == 1
    assert clock.cycles(715) == 2


@given(st.integers(1, 10_000), st.integers(0, 10**12))
def test_cycles_is_the_first_cycle_starting_at_or_after_a_time(period, time_ps):
    clock = ClockDomain("c", period)
    c = clock.cycles(time_ps)
    assert clock.time(c) >= time_ps
    assert clock.time(c) - time_ps < period
    assert clock.cycles(clock.time(c)) == c


def test_serialization_time_of_a_packet():
    assert serialization_ps(128, 80) == 1600
    assert serialization_ps(64, 1) == 64_000
    assert serialization_ps(1, 3) == 334  # 333.3 ps rounded up
    assert bytes_per_ps(80) == pytest.approx(0.08)


@given(st.integers(1, 1 << 20), st.integers(1, 2000))
def test_serialization_is_the_shortest_whole_picoseconds_that_fit_the_bytes(size, gbps):
    ps = serialization_ps(size, gbps)
    # gbps * 1e9 bytes per second: ps picoseconds carry at least size bytes, ps - 1 fewer
    assert ps * gbps * 10**9 >= size * PS_PER_S
    assert (ps - 1) * gbps * 10**9 < size * PS_PER_S
