"""SAXPY (y = a * x + y) as a workload of your own, outside the package:

    ndpsim run --system gpu-baseline --workload docs/examples/saxpy_workload.py --size tiny

It is written as the suite's workloads are (src/ndpsim/workloads/vadd.py), except that ``ptx``
names its PTX file, generated from saxpy.cu by nvcc (scripts/regenerate_ptx.py), with ptxas's
register counts in saxpy.resources.json beside it.
"""

import numpy as np

from ndpsim.workloads import Device, Workload, register


@register
class Saxpy(Workload):
    name = "saxpy"
    title = "single-precision a * x + y"
    ptx = "saxpy.ptx"  # relative to this file
    sizes = {
        "tiny": {"n": 5_000, "a": 2.5, "block": 256},
        "small": {"n": 1 << 20, "a": 2.5, "block": 256},  # 8 MiB: four times a 2 MB L2
        "paper": {"n": 1 << 24, "a": 2.5, "block": 256},
    }
    # nvcc fuses the multiply and the add (fma.rn.f32); the reference rounds twice, so the
    # last bit may differ
    rtol = 1e-6
    atol = 0.0

    def inputs(self, rng):
        n = self.params["n"]
        return {"x": rng.random(n, dtype=np.float32), "y": rng.random(n, dtype=np.float32)}

    def run(self, device: Device, inputs):
        n, a, block = self.params["n"], self.params["a"], self.params["block"]
        x = device.to_device(inputs["x"], "x")
        y = device.to_device(inputs["y"], "y")
        device.launch("saxpy", -(-n // block), block, [np.int32(n), np.float32(a), x, y])
        return {"y": device.from_device(y, np.float32, n)}

    def reference(self, inputs):
        a = np.float64(self.params["a"])
        exact = a * inputs["x"].astype(np.float64) + inputs["y"].astype(np.float64)
        return {"y": exact.astype(np.float32)}
