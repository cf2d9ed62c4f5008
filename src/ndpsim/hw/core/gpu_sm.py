"""The GPU's streaming multiprocessors (TOM Table 1, SNDP Table 2): host cores that take the
CTAs of a launch, at the ``sm`` section's count and warp slots, on the host's clock (the system
makes it from ``sm.clock_ghz``)."""

from __future__ import annotations

from typing import Any

from ndpsim.hw.core import sm
from ndpsim.hw.core.contract import CORES, CoreKind


@CORES.register("sm")
class GpuSm(CoreKind):
    stat_names = sm.SM_STAT_NAMES

    def units(self, config: Any) -> int:
        return config.sm.count

    def warp_slots(self, config: Any) -> int:
        return config.sm.warps
