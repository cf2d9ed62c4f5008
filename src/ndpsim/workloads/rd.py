"""RD: parallel sum reduction, as the optimized kernels of the CUDA SDK's reduction sample
(TOM's and AIMM's suites; MPU's "PR" is ``pr``, laid out as MPU's authors lay it out).

Each thread adds two or more elements while loading, the CTA reduces in shared memory down to a
warp and finishes with warp shuffles, writing one partial sum per CTA. The host launches passes
over the previous pass's partial sums until one value remains, so the launch sequence is a host
loop of shrinking grids: a streaming first pass and short, latency-bound tails.
"""

from __future__ import annotations

import numpy as np

from ndpsim.workloads.base import Device, Workload, register


@register
class Reduction(Workload):
    name = "rd"
    title = "parallel sum reduction, multi-pass (CUDA SDK reduction)"
    papers = ("tom", "aimm")
    sizes = {
        "tiny": {"n": 70_001, "block": 128, "max_grid": 64},
        "small": {"n": 1 << 22, "block": 256, "max_grid": 1_024},
        # The SDK's default is 2^24 ints; paper-scale runs reduce a few times more.
        "paper": {"n": 1 << 26, "block": 256, "max_grid": 1_024},
    }
    # int32 sums (the SDK sample's default type) are exact: the check is equality.

    def inputs(self, rng):
        # Values small enough that no partial or total sum overflows int32.
        return {"values": rng.integers(-1_000, 1_000, self.params["n"], dtype=np.int32)}

    def run(self, device: Device, inputs):
        block, max_grid = self.params["block"], self.params["max_grid"]
        n = len(inputs["values"])
        current = device.to_device(inputs["values"], "values")
        passes = 0
        while True:
            grid = min(max_grid, -(-n // (2 * block)))
            partial = device.zeros(grid, np.int32, f"partial{passes}")
            device.launch("reduce_sum", grid, block, [current, partial, np.uint32(n)])
            passes += 1
            current, n = partial, grid
            if n == 1:
                break
        return {"sum": device.from_device(current, np.int32, 1)}

    def reference(self, inputs):
        return {"sum": np.array([inputs["values"].sum(dtype=np.int64)], dtype=np.int32)}
