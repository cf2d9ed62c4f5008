"""VADD: element-wise vector addition, the purely bandwidth-bound end of the suite."""

from __future__ import annotations

import numpy as np

from ndpsim.workloads.base import Device, Workload, register


@register
class VectorAdd(Workload):
    name = "vadd"
    title = "vector addition c = a + b"
    papers = ("sndp",)
    sizes = {
        "tiny": {"n": 5_000, "block": 256},
        "small": {"n": 1 << 20, "block": 256},
        "paper": {"n": 1 << 24, "block": 256},
    }
    rtol = 0.0  # one IEEE addition: the result is exact
    atol = 0.0

    def inputs(self, rng):
        n = self.params["n"]
        return {
            "a": rng.random(n, dtype=np.float32),
            "b": rng.random(n, dtype=np.float32),
        }

    def run(self, device: Device, inputs):
        n, block = self.params["n"], self.params["block"]
        a = device.to_device(inputs["a"], "a")
        b = device.to_device(inputs["b"], "b")
        c = device.zeros(n, np.float32, "c")
        device.launch("vadd", -(-n // block), block, [a, b, c, np.int32(n)])
        return {"c": device.from_device(c, np.float32, n)}

    def reference(self, inputs):
        return {"c": inputs["a"] + inputs["b"]}
