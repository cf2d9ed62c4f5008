"""AXPY: y = alpha * x + y in float32 (cuBLAS saxpy with unit strides), on a fixed grid of CTAs
that walk the vectors in a grid-stride loop, as the MPU authors' own vector benchmark does.

Each thread reads an element of x and one of y and writes y back, then moves on by the grid's
thread count: two streams read, one written in place, one fused multiply-add per element. The
simplest bandwidth-bound kernel of MPU's suite, whose speedup MPU reports as proportional to the
memory bandwidth it adds.

Why the distribution: MPU (Xie et al., HPCA 2021) runs each CTA on one of 128 cores that owns its
DRAM banks; with the near-bank mapping a core owns 512 consecutive bytes in turn, and the
breadth-first scheduler puts CTA b on core b % 128. CTA b handles chunks b, b + grid, ... of
``block`` elements; at 128 threads a chunk of x or y is 512 bytes, and with ``grid`` a multiple
of 128 (and each vector a multiple of 64 KiB, so that y starts on core 0 as x does) every chunk
it touches lies in its own core's banks. The distribution, the CTA and the grid are those of the
authors' vector-add benchmark (MPU-Sim, GitHub GD06/mpu-sim_distribution, benchmark/vectoradd:
vectoradd_kernel.cu for the grid-stride loop, vectoradd_sim.py for the sizes and the grid,
vectoradd_cuda.cu for the same launch on the GPU); it computes c = a + b into a third vector,
where this kernel keeps cuBLAS's in-place y = alpha * x + y, which the suite has always run.
Neither lays its vectors out differently from the logical order.

AXPY is one of the Linear Algebra workloads of MPU's Table I, described there as "Vector add"
after cuBLAS. MPU names no input sizes, so each size here says where it comes from:

- ``tiny``: 16,100 elements on 32 CTAs of 128 threads, for the tests: each thread passes three
  or four times and the last chunk is partial (100 of 128 elements).
- ``small``: 2^19 elements, the suite's rule for MPU's workloads (docs/workloads.md): x and y are
  2 MiB each, 4 MiB touched, each a multiple of 64 KiB; 512 CTAs as at ``paper``.
- ``paper``: 2^24 = 16,777,216 elements (128 MiB) on 512 CTAs of 128 threads, the defaults of
  the authors' simulation driver (benchmark/vectoradd/vectoradd_sim.py: ``--vector_length``,
  ``--num_blocks``, ``--num_threads``) and of their GPU program and run script.

``alpha`` is 2.5 at every size (an assumption: cuBLAS takes any scalar; one that is not a power
of two makes the product round).
"""

from __future__ import annotations

import numpy as np

from ndpsim.workloads.base import Device, Workload, register


@register
class Axpy(Workload):
    name = "axpy"
    title = "y = alpha * x + y, grid-stride over a fixed grid (cuBLAS saxpy, MPU-Sim vectoradd)"
    papers = ("mpu",)
    sizes = {
        "tiny": {"n": 16_100, "alpha": 2.5, "block": 128, "grid": 32},
        "small": {"n": 1 << 19, "alpha": 2.5, "block": 128, "grid": 512},
        "paper": {"n": 1 << 24, "alpha": 2.5, "block": 128, "grid": 512},
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
        n, block, grid = self.params["n"], self.params["block"], self.params["grid"]
        alpha = np.float32(self.params["alpha"])
        x = device.to_device(inputs["x"], "x")
        y = device.to_device(inputs["y"], "y")
        device.launch("axpy", grid, block, [np.int32(n), alpha, x, y])
        return {"y": device.from_device(y, np.float32, n)}

    def reference(self, inputs):
        alpha = np.float64(np.float32(self.params["alpha"]))  # the value the kernel receives
        return {"y": alpha * inputs["x"].astype(np.float64) + inputs["y"].astype(np.float64)}
