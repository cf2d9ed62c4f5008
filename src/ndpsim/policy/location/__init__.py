"""Where MPU runs each instruction (``pipeline.locations`` names a policy): near the banks, on
the near-bank unit of the warp's subcore, or far from them, on the subcore in the base die
(Xie et al., MICRO 2021, sec. IV-B1).

The hardware decides in three steps of falling priority: an instruction whose opcode only the
base die can run (a global memory access, which needs the load-store unit; control; a
transcendental) runs far; else the compiler's hint decides; with no hint, the register track
table does: near if every source register has a near-bank copy. A policy gives the hints, one per
static instruction of a kernel: :data:`NO_HINT`, :data:`NEAR` or :data:`FAR`. The first and last
steps are the hardware's (:mod:`ndpsim.hw.mpu.hybrid`), the same under every policy.
"""

from __future__ import annotations

from typing import Protocol

import numpy as np

from ndpsim.frontend.ir import Function
from ndpsim.hw.mpu import hybrid
from ndpsim.registry import Registry

#: A hint: none (the register track table decides), run near the banks, run on the base die;
#: the hybrid pipeline's own places, which it reads as they are.
NO_HINT, NEAR, FAR = hybrid.FOLLOW, hybrid.NEAR, hybrid.FAR


class LocationPolicy(Protocol):
    def hints(self, function: Function) -> np.ndarray:
        """int64[instructions of ``function``]: each instruction's hint."""
        ...


LOCATION_POLICIES: Registry[type[LocationPolicy]] = Registry(
    "instruction location policy", "ndpsim.policy.location"
)

__all__ = ["FAR", "LOCATION_POLICIES", "NEAR", "NO_HINT", "LocationPolicy"]
