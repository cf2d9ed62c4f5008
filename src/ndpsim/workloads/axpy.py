"""AXPY: y = alpha * x + y in float32, one element per thread (cuBLAS saxpy with unit strides).

Each thread reads one element of x and one of y and writes y back: two streams read, one
written in place, one fused multiply-add per element. The simplest bandwidth-bound kernel of
MPU's suite, whose speedup MPU reports as proportional to the memory bandwidth it adds.

Why it is in the suite: AXPY is one of the Linear Algebra workloads of MPU's Table I (Xie et al.,
HPCA 2021), described there as "Vector add" after cuBLAS. MPU names no input sizes, so each size
here says where it comes from:

- ``tiny``: 16,100 elements (126 CTAs, the last one partial); for the tests.
- ``small``: 2^20 elements, the suite's rule for MPU's workloads (docs/workloads.md): x and y are
  4 MiB each, 8 MiB touched (2^19 would meet the 4 MiB bound exactly; 2^20 keeps the element
  count of VADD's ``small``, the SNDP suite's streaming kernel, for comparison).
- ``paper``: 2^24 = 16,777,216 elements (128 MiB), the default vector length of the authors'
  public MPU-Sim vector-add benchmark (GitHub GD06/mpu-sim_distribution, benchmark/vectoradd),
  whose CTAs are 128 threads, as ``block`` here.

``alpha`` is 2.5 at every size (an assumption: cuBLAS takes any scalar; one that is not a power
of two makes the product round).
"""

from __future__ import annotations

import numpy as np

from ndpsim.workloads.base import Device, Workload, register


@register
class Axpy(Workload):
    name = "axpy"
    title = "y = alpha * x + y (cuBLAS saxpy)"
    papers = ("mpu",)
    sizes = {
        "tiny": {"n": 16_100, "alpha": 2.5, "block": 128},
        "small": {"n": 1 << 20, "alpha": 2.5, "block": 128},
        "paper": {"n": 1 << 24, "alpha": 2.5, "block": 128},
    }
    # nvcc fuses the multiply-add (fma.rn.f32): one rounding of the exact result, so against the
    # float64 reference the relative error is at most 2^-24 (6e-8). rtol 1e-6 leaves a wide
    # margin, and atol 1e-6 covers results near zero (a negative --param alpha) even if the
    # multiply and add were rounded separately.
    rtol = 1e-6
    atol = 1e-6

    def inputs(self, rng):
        n = self.params["n"]
        return {
            "x": rng.random(n, dtype=np.float32),
            "y": rng.random(n, dtype=np.float32),
        }

    def run(self, device: Device, inputs):
        n, block = self.params["n"], self.params["block"]
        alpha = np.float32(self.params["alpha"])
        x = device.to_device(inputs["x"], "x")
        y = device.to_device(inputs["y"], "y")
        device.launch("axpy", -(-n // block), block, [np.int32(n), alpha, x, y])
        return {"y": device.from_device(y, np.float32, n)}

    def reference(self, inputs):
        alpha = np.float64(np.float32(self.params["alpha"]))  # the value the kernel receives
        return {"y": alpha * inputs["x"].astype(np.float64) + inputs["y"].astype(np.float64)}
