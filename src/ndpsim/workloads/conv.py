"""CONV: a 3x3 convolution of a single-channel float32 image, tile by tile, laid out and split
among CTAs as the MPU authors' own benchmark does it.

What the kernel computes, exactly: the height x width image is cut into 32 x 32 tiles, and each
tile is filtered on its own, as a 32 x 32 image whose edge pixels repeat outward (``clamp`` to
the tile's edge). It is NOT the 3x3 convolution of the whole image: an output pixel on a tile's
border uses its own tile's edge pixels where the whole-image convolution would use the
neighbouring tile's pixels (or zeros, at the image's edge). ``reference()`` computes this tiled
operation, so the check verifies what the kernel computes. The filter is applied as TensorFlow's
conv2d applies it (a cross-correlation, weight (ky, kx) on pixel (r + ky - 1, c + kx - 1)). We
keep the authors' per-tile edge handling because it is what makes their layout work: no tile
reads another, so every byte a CTA touches is in its own core's banks.

Layout and work split, after the authors' benchmark (GitHub GD06/mpu-sim_distribution,
benchmark/conv: conv_kernel.cu, its cta_config.h and the driver conv_sim.py, the source of the
layout, the CTA shape, the grid and the ``paper`` size). MPU's cores each own their DRAM banks
and reach other cores' banks over a slow mesh; with MPU's address mapping a core owns 512
consecutive bytes in turn. A tile is cut into slices of ``block[1]`` rows (4 rows of 32 floats,
512 bytes, for the authors' 32 x 4 CTA), and the device array holds slice 0 of every tile, then
slice 1 of every tile, and so on (``to_tile_slices``): tile t's slices lie whole strides of
``tiles`` x 512 bytes apart, so with a tile count that is a multiple of 128 all of them are in
core t % 128's banks. CTA b filters tiles b, b + grid, b + 2 grid, ... (a grid-stride loop), so
with a grid that is a multiple of 128 (the authors' 512) each CTA reads and writes only its own
core's banks. The nine weights are read into shared memory once per CTA, as the authors do; the
filter is allocated after the image and the output, so that both of those start on core 0.
``run()`` re-lays the image out before copying it in and the output back after copying it out
(tile t is tile row t // (width / 32), tile column t % (width / 32) of the image), so
``reference()`` works on ordinary row-major images.

Channels: our earlier CONV was a TensorFlow layer with ``in_channels`` and ``out_channels``; the
authors' benchmark has one channel in and out, and so has this one. A layer with channels would
need every input channel's tile in shared memory at once (64 channels x 4 KiB = 256 KiB, more
than a CTA gets) or a different kernel than the authors', and with many channels it is bound by
compute, not by memory like the rest of MPU's suite; so the parameters are gone.

Inputs: pixels and weights uniform in [0, 1), as the authors' driver draws them.

Why it is in the suite: CONV ("3x3 conv", after TensorFlow) is one of the Machine Learning
workloads of MPU's Table I (Xie et al., HPCA 2021). The paper names no input sizes:

- ``tiny``: 96 x 160, 15 tiles on 4 CTAs, so the last round of the grid-stride loop is partial;
  for the tests.
- ``small``: 128 x 4096 (512 tiles, one per CTA of the authors' grid of 512), the suite's rule
  for MPU's workloads (docs/workloads.md): the fewest rows of the ``paper`` width whose image and
  output touch 4 MiB (2 MiB each, whole multiples of 64 KiB).
- ``paper``: 4096 x 4096 (64 MiB in, 64 MiB out), 512 CTAs of 32 x 4 threads: the defaults of
  the authors' driver (conv_sim.py) and their GPU run script (run.sh).

Sizes the kernel cannot do are refused: ``height`` and ``width`` must be multiples of 32 (whole
tiles, as the authors' kernel assumes), the CTA 32 threads wide and ``block[1]`` a divisor of 32.
"""

from __future__ import annotations

import numpy as np

from ndpsim.workloads.base import Device, Workload, register

TILE = 32  # the tile's side (conv.cu)


def check_tiled(rows: tuple[str, int], cols: tuple[str, int], block: tuple[int, int]) -> None:
    """Refuse a shape the tiled kernels (conv.cu, ttrans.cu) cannot do: sides of whole tiles,
    32-bit element numbers, and a CTA one tile row wide whose height divides the tile.
    ``rows`` and ``cols`` are (parameter name, value)."""
    (rows_name, n_rows), (cols_name, n_cols) = rows, cols
    if n_rows % TILE or n_cols % TILE:
        raise ValueError(
            f"{rows_name} and {cols_name} must be multiples of {TILE} (whole {TILE} x {TILE} "
            f"tiles, as the authors' kernels assume); got {rows_name}={n_rows}, "
            f"{cols_name}={n_cols}"
        )
    if n_rows * n_cols >= 2**31:
        raise ValueError(
            f"the kernel numbers elements with 32-bit integers; {rows_name} x {cols_name} must "
            f"be below 2^31, got {n_rows * n_cols:,}"
        )
    block_x, block_y = block
    if block_x != TILE or TILE % block_y:
        raise ValueError(
            f"the CTA must be {TILE} threads wide (a tile row) and its height a divisor of "
            f"{TILE} (a tile moves in slices of that many rows); got block={block_x},{block_y}"
        )


def to_tile_slices(image: np.ndarray, slice_rows: int) -> np.ndarray:
    """The device layout of a row-major image: slice s of every 32 x 32 tile, tiles in row-major
    order, before slice s + 1 of any (conv.cu)."""
    height, width = image.shape
    parts = image.reshape(height // TILE, TILE // slice_rows, slice_rows, width // TILE, TILE)
    # (tile row, slice, row in slice, tile column, column) -> (slice, tile row, tile column, ...)
    return np.ascontiguousarray(parts.transpose(1, 0, 3, 2, 4)).reshape(-1)


def from_tile_slices(flat: np.ndarray, height: int, width: int, slice_rows: int) -> np.ndarray:
    """The row-major image of a device array laid out by :func:`to_tile_slices`."""
    parts = flat.reshape(TILE // slice_rows, height // TILE, width // TILE, slice_rows, TILE)
    return np.ascontiguousarray(parts.transpose(1, 0, 3, 2, 4)).reshape(height, width)


@register
class Conv3x3(Workload):
    name = "conv"
    title = "3x3 convolution of 32 x 32 tiles, edges clamped per tile (MPU-Sim's conv)"
    papers = ("mpu",)
    sizes = {
        "tiny": {"height": 96, "width": 160, "block": (32, 4), "grid": 4},
        "small": {"height": 128, "width": 4096, "block": (32, 4), "grid": 512},
        "paper": {"height": 4096, "width": 4096, "block": (32, 4), "grid": 512},
    }
    # Each output is a float32 chain of nine fused multiply-adds of non-negative terms (sums up
    # to 9), against a float64 reference: the relative error is at most about 9 * 2^-24 = 5e-7.
    # 1e-5 leaves a margin of twenty; a wrong neighbour (another tile's pixel, or a zero for a
    # clamped one) moves a sum by a weight times a pixel difference, typically 0.1 to 0.3.
    rtol = 1e-5
    atol = 1e-6

    def _check(self) -> None:
        p = self.params
        check_tiled(("height", p["height"]), ("width", p["width"]), p["block"])

    def inputs(self, rng):
        self._check()
        p = self.params
        return {
            "input": rng.random((p["height"], p["width"]), dtype=np.float32),
            "filter": rng.random((3, 3), dtype=np.float32),
        }

    def run(self, device: Device, inputs):
        self._check()
        p = self.params
        height, width, grid, block = p["height"], p["width"], p["grid"], p["block"]
        slice_rows = block[1]
        # The filter last: a 36-byte array still takes a 4 KiB page, which placed between the
        # image and the output would shift the output off core 0.
        d_in = device.to_device(to_tile_slices(inputs["input"], slice_rows), "input")
        d_out = device.zeros(height * width, np.float32, "output")
        d_filter = device.to_device(inputs["filter"], "filter")
        tiles = (height // TILE) * (width // TILE)
        device.launch("conv3x3", grid, block, [d_in, d_filter, d_out, np.int32(tiles)])
        flat = device.from_device(d_out, np.float32, height * width)
        return {"output": from_tile_slices(flat, height, width, slice_rows)}

    def reference(self, inputs):
        image = inputs["input"].astype(np.float64)
        weights = inputs["filter"].astype(np.float64)
        height, width = image.shape
        # (tile row, tile column, row, column), each tile padded by repeating its own edge
        tiles = image.reshape(height // TILE, TILE, width // TILE, TILE).transpose(0, 2, 1, 3)
        padded = np.pad(tiles, ((0, 0), (0, 0), (1, 1), (1, 1)), mode="edge")
        out = np.zeros_like(tiles)
        for ky in range(3):
            for kx in range(3):
                out += weights[ky, kx] * padded[:, :, ky : ky + TILE, kx : kx + TILE]
        return {"output": out.transpose(0, 2, 1, 3).reshape(height, width)}
