"""The two naive policies of the paper's Fig. 15: every instruction the opcode leaves free runs
near the banks (``all-near``), or every one on the base die (``all-far``)."""

from __future__ import annotations

import numpy as np

from ndpsim.policy.location import FAR, LOCATION_POLICIES, NEAR


@LOCATION_POLICIES.register("all-near")
class AllNear:
    def hints(self, function) -> np.ndarray:
        return np.full(len(function.instructions), NEAR, dtype=np.int64)


@LOCATION_POLICIES.register("all-far")
class AllFar:
    def hints(self, function) -> np.ndarray:
        return np.full(len(function.instructions), FAR, dtype=np.int64)
