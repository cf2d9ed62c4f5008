"""SP: scalar products of many vector pairs, as the CUDA SDK's scalarProd (TOM and SNDP suites).

Each CTA computes the dot product of one vector pair at a time (grid-stride over the pairs):
strided per-thread partial sums over two streamed vectors, then a shared-memory tree reduction.
It is a streaming, bandwidth-bound kernel with a little on-chip reduction per output, the kind
of computation near-data processing offloads whole.
"""

from __future__ import annotations

import numpy as np

from ndpsim.workloads.base import Device, Workload, register


@register
class ScalarProduct(Workload):
    name = "sp"
    title = "scalar products of vector pairs (CUDA SDK scalarProd)"
    papers = ("tom", "sndp")
    sizes = {
        "tiny": {"pairs": 12, "n": 1_000, "grid": 5, "block": 128},
        "small": {"pairs": 512, "n": 4_096, "grid": 256, "block": 256},
        # The SDK's default is 256 pairs of 4096 floats on 128 CTAs; scaled up for the papers.
        "paper": {"pairs": 4_096, "n": 8_192, "grid": 1_024, "block": 256},
    }
    # Each thread sums its slice in its own order and the CTA adds the partial sums as a tree,
    # while the reference sums in float64: float32 rounding over a few thousand positive terms
    # stays far below 1e-5 relative.
    rtol = 1e-5
    atol = 1e-6

    def inputs(self, rng):
        pairs, n = self.params["pairs"], self.params["n"]
        return {
            "a": rng.random(pairs * n, dtype=np.float32),
            "b": rng.random(pairs * n, dtype=np.float32),
        }

    def run(self, device: Device, inputs):
        pairs, n = self.params["pairs"], self.params["n"]
        grid, block = self.params["grid"], self.params["block"]
        a = device.to_device(inputs["a"], "a")
        b = device.to_device(inputs["b"], "b")
        result = device.zeros(pairs, np.float32, "result")
        device.launch(
            "scalar_prod", grid, block, [a, b, result, np.int32(pairs), np.int32(n)]
        )  # fmt: skip
        return {"result": device.from_device(result, np.float32, pairs)}

    def reference(self, inputs):
        pairs, n = self.params["pairs"], self.params["n"]
        a = inputs["a"].reshape(pairs, n).astype(np.float64)
        b = inputs["b"].reshape(pairs, n).astype(np.float64)
        return {"result": np.einsum("ij,ij->i", a, b).astype(np.float32)}
