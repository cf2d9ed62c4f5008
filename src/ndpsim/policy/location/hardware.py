"""No compiler hints: the hardware's default policy (sec. IV-B1), in which the register track
table places every instruction the opcode does not, near iff all its sources have near-bank
copies (the paper's Fig. 15, "HW default")."""

from __future__ import annotations

import numpy as np

from ndpsim.policy.location import LOCATION_POLICIES, NO_HINT


@LOCATION_POLICIES.register("hardware")
class Hardware:
    def hints(self, function) -> np.ndarray:
        return np.full(len(function.instructions), NO_HINT, dtype=np.int64)
