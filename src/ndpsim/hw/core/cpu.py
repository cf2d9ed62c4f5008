"""CPU cores as core kinds: a host's out-of-order cores and in-order ones, each running one CPU
thread's stream at a time (:mod:`ndpsim.hw.cpu.core`); on the host, or in a memory stack's
logic layer when the system places them there (ALP's NDP cores)."""

from __future__ import annotations

from typing import Any, ClassVar

from ndpsim.engine.clock import ClockDomain
from ndpsim.hw.core.contract import CORES, HOST, CoreKind, Placement
from ndpsim.hw.cpu.core import CORE_STAT_NAMES

#: The compiled model CPU cores run on.
CPU = "cpu"


class _CpuCores(CoreKind):
    model = CPU
    in_order: ClassVar[bool] = False
    site = HOST
    takes_ctas = True  # a CPU thread runs whole CTAs
    stat_names = CORE_STAT_NAMES

    def units(self, config: Any) -> int:
        return config.cores.count

    def warp_slots(self, config: Any) -> int:
        return 1  # one thread at a time

    def clock(self, config: Any, host: ClockDomain) -> ClockDomain:
        return config.cores.clock()

    def place(self, unit: int, config: Any) -> Placement:
        return Placement(HOST)


@CORES.register("cpu_ooo")
class OutOfOrderCore(_CpuCores):
    """An out-of-order core (ALP Table 1's: 4-wide, a 128-entry ROB, 32-entry load and store
    queues)."""


@CORES.register("cpu_inorder")
class InOrderCore(_CpuCores):
    """An in-order core that stalls at the first use of a value not yet there."""

    in_order = True
