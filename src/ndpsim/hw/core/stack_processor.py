"""What the processors in the memory stacks' logic layers share: ``ndp.stack_units`` per stack
(one in TOM and SNDP), with the ``ndp`` section's warp slots, clocked at ``ndp.nsu_clock_ghz``
when it is set and at the GPU SMs' clock otherwise. They run offloaded blocks on the SIMT model
with the GPU SMs' pipeline parameters; what differs between TOM's stack SM and SNDP's NSU
(running a block whole, or partitioned with the GPU) is the offload scheme's execution mode."""

from __future__ import annotations

from typing import Any

from ndpsim.engine.clock import ClockDomain
from ndpsim.hw.core import sm
from ndpsim.hw.core.contract import LOGIC_LAYER, CoreKind, Placement


class StackProcessor(CoreKind):
    site = LOGIC_LAYER
    stat_names = sm.SM_STAT_NAMES

    def units(self, config: Any) -> int:
        return config.memory.cubes * config.ndp.stack_units

    def place(self, unit: int, config: Any) -> Placement:
        return Placement(LOGIC_LAYER, stack=unit // config.ndp.stack_units)

    def warp_slots(self, config: Any) -> int:
        return config.ndp.stack_warps

    def clock(self, config: Any, host: ClockDomain) -> ClockDomain:
        if config.ndp.nsu_clock_ghz:
            return ClockDomain.from_ghz("nsu", config.ndp.nsu_clock_ghz)
        return host
