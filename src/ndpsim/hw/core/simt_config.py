"""The settings of a SIMT core (:mod:`ndpsim.hw.core.sm`) as a config section: what any
system kind that runs the SIMT core shares (the GPU's ``[sm]`` section adds how many SMs it
has); ``sm.simt_params`` turns them into the compiled core's parameters."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from ndpsim.config import ClockGHz, Cycles, Strict


class SimtConfig(Strict):
    clock_ghz: ClockGHz
    warps: int = Field(48, ge=1, le=1024, description="warp slots per SM, at most 1024 (32K "
                       "threads; GPUs have 32-64)")  # fmt: skip
    ctas: int = Field(8, ge=1, le=1024, description="CTAs per SM, at most 1024")
    registers: int = Field(32768, ge=1, le=2**24, description="32-bit registers per SM, at "
                           "most 16M (GPUs have 64K)")  # fmt: skip
    shared_bytes: int = Field(49152, ge=0, le=2**30, description="at most 1 GiB")
    schedulers: int = Field(4, ge=1, le=64, description="warp schedulers, one issue each "
                            "per cycle; at most 64 (requests in flight grow with SMs x "
                            "schedulers)")  # fmt: skip
    scheduler: Literal["gto", "lrr"] = "gto"
    load_slots: int = Field(8, ge=1, le=256, description="loads a warp may have in flight, at "
                            "most 256")  # fmt: skip
    latency_alu: Cycles = Field(6, ge=1, description="cycles")
    latency_sfu: Cycles = Field(20, ge=1)
    latency_shared: Cycles = Field(24, ge=1)
    latency_constant: Cycles = Field(8, ge=1)
    latency_branch: Cycles = Field(6, ge=1)
    sfu_interval: Cycles = Field(4, ge=1, description="cycles between SFU issues (32 lanes / 8)")
    skip_idle_clocks: bool = Field(
        True,
        description="an SM sleeps through clocks in which none of its warps can issue; false "
        "evaluates every SM and scheduler on every clock it counts (slower; the same timing "
        "and counters, to check that sleeping changes nothing)",
    )
