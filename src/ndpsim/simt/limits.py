"""How far the interpreter may go before it stops a host program as a runaway.

A kernel that never converges, a host loop that never ends, or a trace that grows without bound
would otherwise run until the machine's memory is gone (a mutated BFS loop launched 40,000
kernels in 40 s; a spinning kernel grew its trace by 9-38 bytes per warp-instruction until one
process held 17 GB). Each bound ends the run with a :class:`SimulationError` that names the
kernel, the bound and how to raise it, before memory runs out.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ndpsim.errors import LaunchError, SimulationError
from ndpsim.hostmemory import physical_bytes

#: TOM ran its workloads "to completion or for 2 billion instructions" (TOM sec. 5); a launch
#: executing more warp-instructions than this is taken for an endless loop.
DEFAULT_INSTRUCTIONS_PER_LAUNCH = 2_000_000_000

#: Launches one host program may make (assumption: the suite's largest, BFS at `paper` size,
#: makes a few dozen; iterative solvers make thousands).
DEFAULT_LAUNCHES = 100_000

#: Memory the registers, shared and local memory of one chunk of CTAs may take (assumption: the
#: suite's largest chunk takes about 0.4 GB); a chunk is made smaller rather than exceed it.
DEFAULT_CHUNK_BYTES = 1 << 30

#: Default cap on threads interpreted together (registers take ~4-8 bytes each per thread).
DEFAULT_CHUNK_THREADS = 1 << 17

#: What to tell a user whose run hit a bound.
HOW_TO_RAISE = (
    "ndpsim run / ndpsim workloads run take {option}; the Python API takes Limits({key}=...)"
)


def half_the_machine() -> int:
    """The trace and device-memory budgets when none is given: half the physical memory
    (of 16 GiB where the system does not say), at least 1 GiB."""
    return max((physical_bytes() or 16 << 30) // 2, 1 << 30)


@dataclass(frozen=True)
class Limits:
    """The bounds of one host program: warp-instructions per launch, launches, bytes of trace
    kept over all launches, bytes of device memory allocated, and bytes of thread state per
    chunk of CTAs."""

    instructions_per_launch: int = DEFAULT_INSTRUCTIONS_PER_LAUNCH
    launches: int = DEFAULT_LAUNCHES
    trace_bytes: int = field(default_factory=half_the_machine)
    device_bytes: int = field(default_factory=half_the_machine)
    chunk_bytes: int = DEFAULT_CHUNK_BYTES

    def __post_init__(self) -> None:
        for key in ("instructions_per_launch", "launches", "trace_bytes", "device_bytes",
                    "chunk_bytes"):  # fmt: skip
            value = getattr(self, key)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise LaunchError(f"Limits.{key} must be a positive integer, got {value!r}")


class TraceMeter:
    """Counts the bytes of trace a host program has recorded, against ``Limits.trace_bytes``."""

    def __init__(self, limits: Limits):
        self.limit_bytes = limits.trace_bytes
        self.used_bytes = 0

    def add(self, nbytes: int, kernel: str) -> None:
        self.used_bytes += nbytes
        if self.used_bytes > self.limit_bytes:
            raise SimulationError(
                f"kernel {kernel!r}: the traces of this run passed their budget of "
                f"{self.limit_bytes / 2**30:.2f} GiB; "
                + HOW_TO_RAISE.format(option="--max-trace-gb", key="trace_bytes")
            )
