"""Simulated time and clock domains.

Time is an integer number of picoseconds everywhere. A clock domain is a named period in
picoseconds; a frequency that does not divide 1 THz is rounded to the nearest picosecond (1.4 GHz
becomes 714 ps, 0.04% fast), which is far below the accuracy of any model here.
"""

from __future__ import annotations

from dataclasses import dataclass

from ndpsim.errors import ConfigError

PS_PER_NS = 1000
PS_PER_S = 1_000_000_000_000
#: A time (or cycle) that never comes: far from overflow when added to.
NEVER = ((1 << 63) - 1) // 4


@dataclass(frozen=True)
class ClockDomain:
    """A clock: ``cycles(t)`` and ``time(c)`` convert between its cycles and picoseconds."""

    name: str
    period_ps: int

    @staticmethod
    def from_ghz(name: str, ghz: float) -> ClockDomain:
        if ghz <= 0:
            raise ConfigError(f"clock {name!r} must have a positive frequency, got {ghz} GHz")
        return ClockDomain(name, max(1, round(PS_PER_NS / ghz)))

    @property
    def ghz(self) -> float:
        return PS_PER_NS / self.period_ps

    def time(self, cycles: int) -> int:
        """Picoseconds at the start of cycle ``cycles``."""
        return cycles * self.period_ps

    def cycles(self, time_ps: int) -> int:
        """The first cycle starting at or after ``time_ps``."""
        return -(-time_ps // self.period_ps)


def bytes_per_ps(gbps: float) -> float:
    """A bandwidth in GB/s (10^9 bytes per second) as bytes per picosecond."""
    return gbps * 1e9 / PS_PER_S


def serialization_ps(size_bytes: int, gbps: float) -> int:
    """Time to push ``size_bytes`` through a link of ``gbps``, rounded up to a picosecond."""
    return -(-int(size_bytes * PS_PER_S) // int(gbps * 1e9))
