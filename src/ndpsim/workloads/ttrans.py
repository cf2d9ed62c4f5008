"""TTRANS: transposition of a rows x cols float32 matrix (row-major in, cols x rows out) through
32 x 32 shared-memory tiles.

Each CTA of 32 x ``block[1]`` threads (32 x 8 by default, each thread moving 4 elements) reads
one tile with coalesced row reads into a shared-memory tile padded to 33 columns, so that
reading it back by columns touches 32 different banks, and after a barrier writes the tile's
columns as coalesced rows of the output. Every element is read once and written once: a
bandwidth-bound kernel whose locality depends on the tiling, with a barrier between its load and
store phases. Sizes that are not multiples of 32 are handled at the edges.

Why it is in the suite: TTRANS ("Tensor transposition", after cuBLAS) is one of the Linear
Algebra workloads of MPU's Table I (Xie et al., HPCA 2021), one that MPU speeds up less than its
memory intensity predicts. MPU names no input sizes, so each size here says where it comes from:

- ``tiny``: 100 x 70, a non-square matrix whose sides are not multiples of 32, so that partial
  tiles on both edges are exercised; for the tests.
- ``small``: 1024 x 1024, the suite's rule for MPU's workloads (docs/workloads.md): 4 MiB read
  and 4 MiB written.
- ``paper``: 4096 x 4096 (64 MiB each way). An assumption, as the paper gives no size; it is the
  default matrix of the authors' public MPU-Sim matrix-transposition benchmark (GitHub
  GD06/mpu-sim_distribution, benchmark/matrixtrans), whose CTAs are 32 x 4 threads rather than
  the 32 x 8 of the classic tiled transpose used here (``--param block=32,4`` gives theirs).

The tile is 32 x 32 in the kernel (a warp's width, and the number of shared-memory banks), so a
CTA must be 32 threads wide; its height ``block[1]`` (1 to 32) sets how many elements each
thread moves (32 / height).
"""

from __future__ import annotations

import numpy as np

from ndpsim.workloads.base import Device, Workload, register

TILE = 32  # the kernel's tile side (ttrans.cu)


@register
class TiledTranspose(Workload):
    name = "ttrans"
    title = "matrix transposition through padded 32 x 32 shared-memory tiles"
    papers = ("mpu",)
    sizes = {
        "tiny": {"rows": 100, "cols": 70, "block": (32, 8)},
        "small": {"rows": 1024, "cols": 1024, "block": (32, 8)},
        "paper": {"rows": 4096, "cols": 4096, "block": (32, 8)},
    }
    # Elements are copied, never computed: the output must equal the reference bit for bit.
    rtol = 0.0
    atol = 0.0

    def inputs(self, rng):
        rows, cols = self.params["rows"], self.params["cols"]
        return {"matrix": rng.random((rows, cols), dtype=np.float32)}

    def run(self, device: Device, inputs):
        rows, cols = self.params["rows"], self.params["cols"]
        bx, by = self.params["block"]
        if bx != TILE or by > TILE:
            raise ValueError(
                f"the CTA must be {TILE} threads wide (the tile's width) and at most {TILE} tall"
            )
        source = device.to_device(inputs["matrix"], "in")
        target = device.zeros(rows * cols, np.float32, "out")
        grid = (-(-cols // TILE), -(-rows // TILE))
        device.launch("ttrans", grid, (bx, by), [source, target, np.int32(rows), np.int32(cols)])
        out = device.from_device(target, np.float32, rows * cols)
        return {"transposed": out.reshape(cols, rows)}

    def reference(self, inputs):
        return {"transposed": np.ascontiguousarray(inputs["matrix"].T)}
