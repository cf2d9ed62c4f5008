"""GEMV: dense matrix-vector product y = A x in float32, A stored column-major as cuBLAS stores
it (element (i, j) at ``A[j * rows + i]``).

One thread owns a row and walks the columns, accumulating its dot product in a register: at each
column a warp reads 32 consecutive elements of that column (one coalesced line) and broadcasts
one element of x. The matrix is streamed exactly once and each element is used once, so the
kernel is bound by memory bandwidth.

Why it is in the suite: GEMV is one of the Linear Algebra workloads of MPU's Table I (Xie et
al., HPCA 2021), "Matrix-vector multiply" after cuBLAS. MPU names no input sizes, so each size
here says where it comes from:

- ``tiny``: 200 x 130, two CTAs of 128 threads with a partial last CTA and a column count that is
  not a multiple of nvcc's four-way unrolling, so both remainders are exercised; for the tests.
- ``small``: 1024 x 1024, the suite's rule for MPU's workloads (docs/workloads.md): the matrix
  alone is 4 MiB. MPU-Sim's GEMV README runs this shape too.
- ``paper``: 4096 x 4096 (64 MiB), the default matrix of the authors' public MPU-Sim GEMV
  benchmark, both its GPU run script and its simulation script (GitHub GD06/mpu-sim_distribution,
  benchmark/gemv). ``block`` 128 is the CTA that benchmark launches.
"""

from __future__ import annotations

import numpy as np

from ndpsim.workloads.base import Device, Workload, register


@register
class MatrixVector(Workload):
    name = "gemv"
    title = "matrix-vector product y = A x, column-major A (cuBLAS sgemv)"
    papers = ("mpu",)
    sizes = {
        "tiny": {"rows": 200, "cols": 130, "block": 128},
        "small": {"rows": 1024, "cols": 1024, "block": 128},
        "paper": {"rows": 4096, "cols": 4096, "block": 128},
    }
    # Each output is a float32 chain of `cols` fused multiply-adds of positive [0, 1) values, in
    # column order, against NumPy's float64 product (another order, no rounding to speak of).
    # The relative error grows about like sqrt(cols) * 2^-24: emulating the chain in NumPy gave
    # 4.6e-7 at 128 columns, 1.9e-6 at 1024, 2.3e-6 at 2048 and 3.5e-6 at 4096. 2e-5 leaves a
    # margin of five at the paper size, yet one missing or wrong term (~1/cols of the sum, 2.4e-4
    # at 4096) fails the check. Outputs are sums of positive terms, never near zero.
    rtol = 2e-5
    atol = 1e-6

    def inputs(self, rng):
        rows, cols = self.params["rows"], self.params["cols"]
        return {
            "A": rng.random((rows, cols), dtype=np.float32),  # A[i, j]: row i, column j
            "x": rng.random(cols, dtype=np.float32),
        }

    def run(self, device: Device, inputs):
        rows, cols, block = self.params["rows"], self.params["cols"], self.params["block"]
        # A.T in C order is A in column-major order: column j is contiguous, at j * rows.
        A = device.to_device(inputs["A"].T, "A")
        x = device.to_device(inputs["x"], "x")
        y = device.zeros(rows, np.float32, "y")
        device.launch("gemv", -(-rows // block), block, [A, x, y, np.int32(rows), np.int32(cols)])
        return {"y": device.from_device(y, np.float32, rows)}

    def reference(self, inputs):
        return {"y": inputs["A"].astype(np.float64) @ inputs["x"].astype(np.float64)}
