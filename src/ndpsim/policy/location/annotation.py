"""MPU's compiler annotation (sec. V-B, Algorithm 1): an instruction runs where its destination
register belongs, near for N and far for F; one whose register may be either (B) or that no seed
reaches (U) carries no hint, and the register track table decides at run time."""

from __future__ import annotations

import numpy as np

from ndpsim.analysis import mpu
from ndpsim.policy.location import FAR, LOCATION_POLICIES, NEAR, NO_HINT

_HINT = {mpu.NEAR: NEAR, mpu.FAR: FAR, mpu.BOTH: NO_HINT, mpu.UNKNOWN: NO_HINT}


@LOCATION_POLICIES.register("annotation")
class Annotation:
    def hints(self, function) -> np.ndarray:
        locations = mpu.mpu_locations(function).instructions
        return np.array([_HINT[at] for at in locations], dtype=np.int64)
