"""The settings of a CPU core (:mod:`ndpsim.hw.cpu.core`) as a config section, shared by every
system kind with CPU cores (a CPU host, ALP's NDP cores); :meth:`CpuCoreConfig.params` and
:meth:`CpuCoreConfig.latencies` turn them into the compiled core's arrays.

The defaults are ALP's cores (Table 1: 2.4 GHz, 4-wide out of order, a 128-entry ROB, 32-entry
load and store queues, a two-level GAs predictor); the latencies, which no paper of the five
gives, are those of a 32 nm x86 core as Agner Fog's instruction tables list them for Intel's
Westmere (32 nm, the generation ALP's Table 1 describes), rounded, and marked assumption.
"""

from __future__ import annotations

import numpy as np
from pydantic import Field

from ndpsim.config import ClockGHz, Cycles, Strict
from ndpsim.engine.clock import ClockDomain
from ndpsim.hw.cpu import core
from ndpsim.trace import cpu_work as k


class CpuCoreConfig(Strict):
    clock_ghz: ClockGHz = 2.4  # ALP Table 1
    width: int = Field(4, ge=1, le=16, description="instructions dispatched and retired a "
                       "cycle (ALP Table 1: 4-wide)")  # fmt: skip
    rob: int = Field(128, ge=1, le=4096, description="reorder-buffer entries (ALP Table 1)")
    load_queue: int = Field(32, ge=1, le=1024, description="loads in flight (ALP Table 1)")
    store_queue: int = Field(32, ge=1, le=1024, description="stores not yet written (ALP "
                             "Table 1)")  # fmt: skip
    history_bits: int = Field(8, ge=0, le=20, description="global history of the GAs predictor "
                              "(assumption: ALP names the predictor, not its size)")  # fmt: skip
    pc_bits: int = Field(4, ge=0, le=12, description="branch-address bits selecting a pattern "
                         "table (assumption)")  # fmt: skip
    mispredict_cycles: Cycles = Field(15, ge=0, description="front-end refill after a "
                                      "mispredicted branch resolves (assumption: a 32 nm x86 "
                                      "core's pipeline depth)")  # fmt: skip
    latency_int: Cycles = Field(1, ge=1, description="integer add, logic, compare, move")
    latency_mul: Cycles = Field(3, ge=1, description="integer multiply (Westmere IMUL)")
    latency_div: Cycles = Field(24, ge=1, description="integer divide and remainder "
                                "(Westmere IDIV r32: 17-28)")  # fmt: skip
    latency_fp: Cycles = Field(4, ge=1, description="floating-point add, multiply, multiply-add "
                               "(Westmere ADDSS 3, MULSS 4)")  # fmt: skip
    latency_fdiv: Cycles = Field(14, ge=1, description="floating-point divide (Westmere DIVSS "
                                 "7-14)")  # fmt: skip
    latency_sfu: Cycles = Field(20, ge=1, description="square root, reciprocal and "
                                "transcendentals (Westmere SQRTSS 7-18; the transcendentals in "
                                "software: assumption)")  # fmt: skip
    latency_branch: Cycles = Field(1, ge=1)
    latency_param: Cycles = Field(4, ge=1, description="a kernel argument or constant, an L1 "
                                  "hit (ALP Table 1: 4 cycles)")  # fmt: skip
    latency_store: Cycles = Field(1, ge=1, description="from its sources to retire (the write "
                                  "follows through the store queue)")  # fmt: skip

    def clock(self, name: str = "cpu") -> ClockDomain:
        return ClockDomain.from_ghz(name, self.clock_ghz)

    def params(self, period_ps: int, in_order: bool = False) -> np.ndarray:
        """``in_order``: dispatch only once an instruction's sources are ready (stall on use),
        as the in-order core kind does."""
        return core.core_params(self.width, self.rob, self.load_queue, self.store_queue,
                                self.mispredict_cycles, in_order, self.history_bits,
                                self.pc_bits, period_ps)  # fmt: skip

    def latencies(self) -> np.ndarray:
        """Cycles from start to result per timing class (loads, stores' writes and atomics
        take what memory takes; their entries here are not read)."""
        out = np.ones(len(k.CLASS_NAMES), dtype=np.int64)
        out[[k.K_INT, k.K_MUL, k.K_DIV, k.K_FP, k.K_FDIV, k.K_SFU, k.K_BRANCH, k.K_PARAM,
             k.K_STORE, k.K_NOP]] = (self.latency_int, self.latency_mul, self.latency_div,
                                     self.latency_fp, self.latency_fdiv, self.latency_sfu,
                                     self.latency_branch, self.latency_param,
                                     self.latency_store, 1)  # fmt: skip
        return out
