"""TTRANS: transposition of a rows x cols float32 matrix through 32 x 32 shared-memory tiles,
laid out and split among CTAs as the MPU authors' own benchmark does it.

Each CTA loads a tile into a shared-memory tile padded to 33 columns (so that reading it back by
columns touches 32 different banks), and after a barrier writes its columns as rows of the
output tile. Every element is read once and written once: a bandwidth-bound kernel with a
barrier between its load and store phases.

Layout and work split, after the authors' benchmark (GitHub GD06/mpu-sim_distribution,
benchmark/matrixtrans: matrixtrans_kernel.cu, its cta_config.h and the driver
matrixtrans_sim.py, the source of the layout, the CTA shape, the grid and the ``paper`` size).
MPU's cores each own their DRAM banks and reach other cores' banks over a slow mesh; with MPU's
address mapping a core owns 512 consecutive bytes in turn. A tile is cut into slices of
``block[1]`` rows (4 rows of 32 floats, 512 bytes, for the authors' 32 x 4 CTA), and each device
array holds slice 0 of every tile, then slice 1 of every tile, and so on (conv's
``to_tile_slices``, the same layout): tile t's slices lie whole strides of ``tiles`` x 512 bytes
apart, so with a tile count that is a multiple of 128 all of them are in core t % 128's banks.
CTA b transposes tiles b, b + grid, b + 2 grid, ... (a grid-stride loop), and writes output tile
t where it read input tile t, so with a grid that is a multiple of 128 (the authors' 512) each
CTA reads and writes only its own core's banks.

What makes this the transpose of the whole matrix (the authors' kernel, and ours, transposes
each tile where it lies): the tiles of the input are numbered in row-major order, input tile
(i, j) being tile t = i (cols / 32) + j, and output tile (j, i), its transpose, is stored as
tile t too; the output's tiles are thus numbered in column-major order of the output's tile
grid. ``run()`` re-lays the input out before copying it in and puts the output's tiles back in
their places after copying it out, so ``reference()`` is the plain transpose ``matrix.T``.

Why it is in the suite: TTRANS ("Tensor transposition", after cuBLAS) is one of the Linear
Algebra workloads of MPU's Table I (Xie et al., HPCA 2021), one that MPU speeds up less than its
memory intensity predicts. The paper names no input sizes:

- ``tiny``: 96 x 160, a non-square matrix of 15 tiles on 4 CTAs, so the last round of the
  grid-stride loop is partial; for the tests.
- ``small``: 512 x 1024 (512 tiles, one per CTA of the authors' grid of 512), the suite's rule
  for MPU's workloads (docs/workloads.md): the smallest matrix of whole tiles, each array a
  multiple of 64 KiB, whose input and output touch 4 MiB (2 MiB each).
- ``paper``: 4096 x 4096 (64 MiB each way), 512 CTAs of 32 x 4 threads: the defaults of the
  authors' driver (matrixtrans_sim.py) and their GPU run script (run.sh).

Sizes the kernel cannot do are refused: ``rows`` and ``cols`` must be multiples of 32 (whole
tiles, as the authors' GPU program asserts), the CTA 32 threads wide and ``block[1]`` a divisor
of 32.
"""

from __future__ import annotations

import numpy as np

from ndpsim.workloads.base import Device, Workload, register
from ndpsim.workloads.conv import TILE, check_tiled, to_tile_slices


def transposed_from_tile_slices(flat: np.ndarray, rows: int, cols: int, slice_rows: int):
    """The cols x rows output of a device array whose tile t = i (cols / 32) + j, laid out as
    :func:`to_tile_slices` lays out tiles, holds output tile (j, i) (ttrans.cu)."""
    parts = flat.reshape(TILE // slice_rows, rows // TILE, cols // TILE, slice_rows, TILE)
    # (slice, i, j, row in slice, column) -> (j, slice, row in slice, i, column)
    return np.ascontiguousarray(parts.transpose(2, 0, 3, 1, 4)).reshape(cols, rows)


@register
class TiledTranspose(Workload):
    name = "ttrans"
    title = "matrix transposition through padded 32 x 32 shared tiles (MPU-Sim's matrixtrans)"
    papers = ("mpu",)
    sizes = {
        "tiny": {"rows": 96, "cols": 160, "block": (32, 4), "grid": 4},
        "small": {"rows": 512, "cols": 1024, "block": (32, 4), "grid": 512},
        "paper": {"rows": 4096, "cols": 4096, "block": (32, 4), "grid": 512},
    }
    # Elements are copied, never computed: the output must equal the reference bit for bit.
    rtol = 0.0
    atol = 0.0

    def _check(self) -> None:
        p = self.params
        check_tiled(("rows", p["rows"]), ("cols", p["cols"]), p["block"])

    def inputs(self, rng):
        self._check()
        rows, cols = self.params["rows"], self.params["cols"]
        return {"matrix": rng.random((rows, cols), dtype=np.float32)}

    def run(self, device: Device, inputs):
        self._check()
        rows, cols = self.params["rows"], self.params["cols"]
        grid, block = self.params["grid"], self.params["block"]
        slice_rows = block[1]
        source = device.to_device(to_tile_slices(inputs["matrix"], slice_rows), "in")
        target = device.zeros(rows * cols, np.float32, "out")
        tiles = (rows // TILE) * (cols // TILE)
        device.launch("ttrans", grid, block, [source, target, np.int32(tiles)])
        flat = device.from_device(target, np.float32, rows * cols)
        return {"transposed": transposed_from_tile_slices(flat, rows, cols, slice_rows)}

    def reference(self, inputs):
        return {"transposed": np.ascontiguousarray(inputs["matrix"].T)}
