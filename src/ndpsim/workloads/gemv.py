"""GEMV: dense matrix-vector product y = A x in float32, with the matrix laid out and the rows
handed out as the MPU authors' own benchmark does (so that each core reads its own banks).

The columns are cut into chunks of ``block`` columns and the matrix is stored chunk-major, each
chunk row by row: element (i, j), with j = c * block + t, sits at ``(c * rows + i) * block + t``.
A fixed grid of ``grid`` CTAs strides over the rows, one row per CTA at a time; each thread
multiplies one column of every chunk with the matching element of x and keeps its sum in a
register, and the CTA adds its threads' sums with a tree in shared memory. The matrix is streamed
once and each element used once, so the kernel is bound by memory bandwidth.

Why this layout: MPU (Xie et al., HPCA 2021) runs each CTA on one of 128 cores that owns its DRAM
banks; with the near-bank mapping a core owns 512 consecutive bytes in turn, and the breadth-first
scheduler puts CTA b on core b % 128. A row's piece of one chunk is ``block`` consecutive floats,
512 bytes at 128 threads, and with ``rows`` and ``grid`` multiples of 128 every piece of row i
lies in core i % 128's banks, the core that runs the CTA computing it. A column-major matrix
(cuBLAS's) would have each CTA read other cores' banks. The layout, the distribution and the
default sizes are the authors' (MPU-Sim, GitHub GD06/mpu-sim_distribution, benchmark/gemv:
gemv_kernel.cu for the kernel, gemv_sim.py for the re-layout, the sizes and the grid,
gemv_cuda.cu for the same layout on the GPU). x is read from global memory by every CTA, as
theirs reads it. ``run()`` lays the logical matrix out before the copy (padding the last chunk
with zeros that are never read), so ``reference()`` computes on the logical A.

GEMV is one of the Linear Algebra workloads of MPU's Table I, "Matrix-vector multiply" after
cuBLAS. MPU names no input sizes, so each size here says where it comes from:

- ``tiny``: 200 x 130 on 64 CTAs, for the tests: the last chunk holds 2 columns of 128 and the
  rows are not a multiple of the grid, so both remainders are exercised (51,200 multiply-adds).
- ``small``: 1024 x 1024, the suite's rule for MPU's workloads (docs/workloads.md): the matrix
  alone is 4 MiB (a multiple of 64 KiB, so x after it starts on core 0 as the matrix does); 512
  CTAs as at ``paper``, two rows each. MPU-Sim's GEMV README runs this shape too.
- ``paper``: 4096 x 4096 (64 MiB) on 512 CTAs of 128 threads, the defaults of the authors'
  simulation driver (benchmark/gemv/gemv_sim.py: ``--num_rows``, ``--num_cols``,
  ``--num_blocks``, ``--num_threads``); their GPU run script (run.sh) uses the same matrix.
"""

from __future__ import annotations

import numpy as np

from ndpsim.workloads.base import Device, Workload, register


@register
class MatrixVector(Workload):
    name = "gemv"
    title = "matrix-vector product y = A x, chunk-major A, one CTA per row (MPU-Sim GEMV)"
    papers = ("mpu",)
    sizes = {
        "tiny": {"rows": 200, "cols": 130, "block": 128, "grid": 64},
        "small": {"rows": 1024, "cols": 1024, "block": 128, "grid": 512},
        "paper": {"rows": 4096, "cols": 4096, "block": 128, "grid": 512},
    }
    # Each output is a float32 sum of `cols` products of [0, 1) values: every thread chains
    # cols / block fused multiply-adds, then a log2(block)-level tree adds the threads' sums,
    # against NumPy's float64 product. Each term passes through at most cols / block + log2(block)
    # roundings of 2^-24 (39 at the paper size: 2.3e-6 at worst); emulating the kernel's order in
    # NumPy gave 1.1e-7 at 130, 1024, 4096 and 16,384 columns, and 4.4e-6 with --param block=1
    # at 16,384 columns (one chain of fused multiply-adds). 2e-5 covers even that with a margin of
    # four, yet one missing or wrong term (~1/cols of the sum, 2.4e-4 at 4096) fails the check.
    # Outputs are sums of positive terms, never near zero.
    rtol = 2e-5
    atol = 1e-6

    def inputs(self, rng):
        rows, cols = self.params["rows"], self.params["cols"]
        return {
            "A": rng.random((rows, cols), dtype=np.float32),  # A[i, j]: row i, column j
            "x": rng.random(cols, dtype=np.float32),
        }

    def run(self, device: Device, inputs):
        rows, cols = self.params["rows"], self.params["cols"]
        block, grid = self.params["block"], self.params["grid"]
        if block & (block - 1):
            raise ValueError(
                f"block must be a power of two (the CTA's shared-memory tree halves it), "
                f"got {block}"
            )
        chunks = -(-cols // block)
        padded = np.zeros((rows, chunks * block), dtype=np.float32)
        padded[:, :cols] = inputs["A"]
        # (rows, chunks, block) -> (chunks, rows, block): chunk c, then row i, then column t.
        chunk_major = padded.reshape(rows, chunks, block).transpose(1, 0, 2)
        A = device.to_device(chunk_major, "A")
        x = device.to_device(inputs["x"], "x")
        y = device.zeros(rows, np.float32, "y")
        device.launch(
            "gemv", grid, block, [A, x, y, np.int32(rows), np.int32(cols)],
            shared_bytes=4 * block,
        )  # fmt: skip
        return {"y": device.from_device(y, np.float32, rows)}

    def reference(self, inputs):
        return {"y": inputs["A"].astype(np.float64) @ inputs["x"].astype(np.float64)}
