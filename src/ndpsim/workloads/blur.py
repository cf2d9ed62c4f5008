"""BLUR: 3x3 box blur of a float32 image cut into square tiles, each tile blurred on its own with
its edges clamped, in the tiled layout of the MPU authors' benchmark.

What it computes: the image (``height`` x ``width``) is cut into tiles of ``side`` x ``side``
pixels, ``side`` being the CTA's width (``block[0]``, 32 as the authors have it). Each output
pixel is the mean of the 3 x 3 neighbourhood of its input pixel WITHIN ITS TILE: a neighbour
outside the tile is clamped to the tile's nearest edge pixel, so pixels on a tile's border
repeat that border instead of reading the next tile. This is not the blur of the whole image
(which would read across tile borders) but what the authors' kernel computes, and
``reference()`` computes exactly that: the per-tile clamped blur of the logical image. Inside a
tile it is the usual 3x3 box blur with clamped borders. The nine taps are added row by row, left
to right, in float32 and the sum multiplied by float32(1/9), in the kernel and the reference
alike. The input is uniform noise in [0, 1).

Why the layout: MPU (Xie et al., HPCA 2021) runs each CTA on one of 128 cores, and a core owns
the DRAM banks of every 512 consecutive bytes in turn (``near-bank`` mapping); data in other
cores' banks is reached over a slow mesh. The authors' BLUR benchmark (GitHub
GD06/mpu-sim_distribution, benchmark/blur: blur_kernel.cu, cta_config.h, blur_sim.py) therefore
stores the image tile by tile. A tile is cut into slices of ``block[1]`` rows (4), so that a
slice of a 32 x 4 CTA is 128 floats, 512 bytes, one core's interleave unit, and the slices are
stored slice-major: slice 0 of every tile, then slice 1 of every tile, and so on. Tile t's
slices then all lie in core t mod 128's banks when the tile count is a multiple of 128, and CTA
b of a grid that is a multiple of 128 blurs tiles b, b + grid, ... (a grid-stride loop), all in
its own core's banks. The CTA stages its tile in shared memory and blurs it from there. The GPU
runs the same kernel and layout, as the authors' GPU program (blur_cuda.cu) does. ``run()``
lays the logical image out so (tiles in row-major order over the image) before copying it to the
device and undoes it on the result.

Why it is in the suite: BLUR ("3x3 blur", after Halide) is one of the Image Processing workloads
of MPU's Table I. MPU names no input sizes, so each size here says where it comes from:

- ``tiny``: 160 x 96 (15 tiles of 32 x 32) on 4 CTAs, so that the CTAs blur different numbers
  of tiles (4, 4, 4, 3) and the image is not square; for the tests.
- ``small``: the ``paper`` image with fewer rows, 4096 x 128, the suite's rule for MPU's
  workloads (docs/workloads.md): input and output are 2 MiB each, 4 MiB touched; 512 tiles on
  the ``paper`` grid of 512 CTAs, one tile each.
- ``paper``: 4096 x 4096 (64 MiB per image) on 512 CTAs of 32 x 4 threads with 32 x 32 tiles:
  the defaults of the authors' benchmark (blur_sim.py's ``num_rows``, ``num_cols``,
  ``num_blocks``, ``num_threads_x``/``_y``; cta_config.h's tile side). The paper gives no size,
  so this is an assumption.

Parameters: ``width`` and ``height`` must be multiples of the tile side ``block[0]``, and
``block[0]`` a multiple of ``block[1]`` (a tile is loaded ``block[1]`` rows at a time); other
values are refused. Only a CTA of 32 x 4 threads keeps a slice within one core's 512 bytes.
"""

from __future__ import annotations

import numpy as np

from ndpsim.workloads.base import Device, Workload, register


def to_tiles(image: np.ndarray, side: int, rows: int) -> np.ndarray:
    """The device layout of a height x width image: tiles of side x side in row-major order over
    the image, each cut into slices of ``rows`` rows, stored slice-major (flat)."""
    height, width = image.shape
    tiles = image.reshape(height // side, side, width // side, side).transpose(0, 2, 1, 3)
    slices = tiles.reshape(-1, side // rows, rows, side)  # tile, slice, row, column
    return np.ascontiguousarray(slices.transpose(1, 0, 2, 3)).ravel()


def from_tiles(flat: np.ndarray, height: int, width: int, side: int, rows: int) -> np.ndarray:
    """The height x width image whose device layout (``to_tiles``) is ``flat``."""
    slices = flat.reshape(side // rows, -1, rows, side).transpose(1, 0, 2, 3)
    tiles = slices.reshape(height // side, width // side, side, side)
    return np.ascontiguousarray(tiles.transpose(0, 2, 1, 3)).reshape(height, width)


@register
class Blur3x3(Workload):
    name = "blur"
    title = "3x3 box blur of 32 x 32 tiles, clamped at tile edges (MPU-Sim's tiled blur)"
    papers = ("mpu",)
    sizes = {
        "tiny": {"width": 160, "height": 96, "grid": 4, "block": (32, 4)},
        "small": {"width": 4096, "height": 128, "grid": 512, "block": (32, 4)},
        "paper": {"width": 4096, "height": 4096, "grid": 512, "block": (32, 4)},
    }
    # The kernel adds nine float32 values in a fixed order and multiplies once by float32(1/9)
    # (nvcc contracts nothing: no multiplication is followed by an addition), and the reference
    # does the same operations in the same order in float32: the output must match bit for bit.
    rtol = 0.0
    atol = 0.0

    def _check_params(self) -> None:
        p = self.params
        side, rows = p["block"]
        if side % rows:
            raise ValueError(
                f"block must be (side, rows) with side a multiple of rows (a tile of side x side "
                f"pixels is loaded rows at a time), got block={side},{rows}"
            )
        if p["width"] % side or p["height"] % side:
            raise ValueError(
                f"width and height must be multiples of the tile side block[0]={side}, "
                f"got width={p['width']}, height={p['height']}"
            )

    def inputs(self, rng):
        self._check_params()
        p = self.params
        return {"image": rng.random((p["height"], p["width"]), dtype=np.float32)}

    def run(self, device: Device, inputs):
        self._check_params()
        p = self.params
        width, height, grid = p["width"], p["height"], p["grid"]
        side, rows = p["block"]
        tiles = (width // side) * (height // side)
        image = device.to_device(to_tiles(inputs["image"], side, rows), "image")
        out = device.zeros(width * height, np.float32, "blurred")
        device.launch(
            "blur3x3_tiles", grid, (side, rows), [image, out, np.int32(tiles)],
            shared_bytes=side * side * 4,
        )  # fmt: skip
        flat = device.from_device(out, np.float32, width * height)
        return {"blurred": from_tiles(flat, height, width, side, rows)}

    def reference(self, inputs):
        image = inputs["image"]
        height, width = image.shape
        side = self.params["block"][0]
        tiles = image.reshape(height // side, side, width // side, side)
        # Each tile padded by its own edge pixels: the clamp inside the tile.
        padded = np.pad(tiles, ((0, 0), (1, 1), (0, 0), (1, 1)), mode="edge")
        total = None
        for dy in range(3):
            for dx in range(3):
                tap = padded[:, dy : dy + side, :, dx : dx + side]
                total = tap.copy() if total is None else total + tap
        ninth = np.float32(1) / np.float32(9)
        return {"blurred": (total * ninth).reshape(height, width)}
