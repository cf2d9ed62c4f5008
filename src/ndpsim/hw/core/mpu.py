"""MPU's two halves of a core (Xie et al., MICRO 2021, sec. IV-A, Fig. 2): the core on the base
logic die, whose subcores fetch, decode and issue every instruction and hold the load-store unit
(a SIMT unit taking a launch's CTAs, run with MPU's hybrid pipeline as its extension,
:mod:`ndpsim.hw.mpu.hybrid`), and its near-bank units (NBUs) on one DRAM die, one per subcore
beside the banks of its channel, which run the instructions offloaded to them and have no warp
slots of their own. Cores are numbered processor by processor, row by row within one."""

from __future__ import annotations

from typing import Any

from ndpsim.engine.clock import ClockDomain
from ndpsim.hw.core import sm
from ndpsim.hw.core.contract import BANKS, CORES, LOGIC_LAYER, CoreKind, Placement
from ndpsim.hw.mpu.hybrid import CORE_STAT_NAMES, NBU_STAT_NAMES

#: The model the NBUs' counters come from (no SIMT unit of their own).
NEAR_BANK = "mpu-near-bank"


@CORES.register("mpu_core")
class MpuCore(CoreKind):
    site = LOGIC_LAYER
    takes_ctas = True
    stat_names = sm.SM_STAT_NAMES + CORE_STAT_NAMES

    def units(self, config: Any) -> int:
        return config.processors.count * config.processors.cores_per_processor

    def warp_slots(self, config: Any) -> int:
        return config.core.warps

    def clock(self, config: Any, host: ClockDomain) -> ClockDomain:
        return ClockDomain.from_ghz("core", config.core.clock_ghz)

    def place(self, unit: int, config: Any) -> Placement:
        return Placement(LOGIC_LAYER, stack=unit // config.processors.cores_per_processor)


@CORES.register("mpu_nbu")
class MpuNearBankUnit(CoreKind):
    model = NEAR_BANK
    site = BANKS
    takes_ctas = False
    stat_names = NBU_STAT_NAMES

    def units(self, config: Any) -> int:
        p = config.processors
        return p.count * p.cores_per_processor * p.subcores

    def warp_slots(self, config: Any) -> int:
        return 0

    def clock(self, config: Any, host: ClockDomain) -> ClockDomain:
        return ClockDomain.from_ghz("core", config.core.clock_ghz)

    def place(self, unit: int, config: Any) -> Placement:
        per_processor = config.processors.cores_per_processor * config.processors.subcores
        return Placement(BANKS, stack=unit // per_processor, channel=unit % per_processor)
