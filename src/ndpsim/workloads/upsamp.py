"""UPSAMP: 2x nearest-neighbour upsampling of a float32 image, each input pixel replicated into a
2 x 2 block, with the output stored in four planes as the MPU authors' benchmark stores it.

What it computes: out(Y, X) = in(Y // 2, X // 2) for the 2 height x 2 width output, exactly
(``reference()`` is ``np.repeat`` along both axes). The input is uniform noise in [0, 1).

Why the layout: MPU (Xie et al., HPCA 2021) runs each CTA on one of 128 cores, and a core owns
the DRAM banks of every 512 consecutive bytes in turn (``near-bank`` mapping); data in other
cores' banks is reached over a slow mesh. The authors' UPSAMP benchmark (GitHub
GD06/mpu-sim_distribution, benchmark/upsample: upsample_kernel.cu, upsample_sim.py) reads the
row-major input in chunks of ``block`` consecutive floats (128: 512 bytes, one core's unit),
CTA b taking chunks b, b + grid, ... (a grid-stride loop) and staging each in shared memory.
The 2 x ``block`` output pixels a chunk becomes in each of its two output rows are cut into
halves of ``block`` pixels and stored in four planes, one per (output row, half), each plane as
long as the input: output chunk c sits at the same offset of its plane as input chunk c, so with
an input of a multiple of 128 chunks (64 KiB) and a grid that is a multiple of 128 every chunk a
CTA reads or writes lies in its own core's banks. The GPU runs the same kernel and layout, as the
authors' GPU program (upsample_cuda.cu) does. ``run()`` puts the planes back into the logical
image after copying them from the device.

The authors' benchmark replicates pixels (nearest neighbour), where Halide's upsampling, after
which MPU's Table I names UPSAMP ("Image upsample"), interpolates: this module follows the
authors, whose program MPU's figures measured. Interpolating would read the rows above and
below a chunk, which lie in other cores' banks in this layout.

Why it is in the suite: UPSAMP is one of the Image Processing workloads of MPU's Table I. MPU
names no input sizes, so each size here says where it comes from:

- ``tiny``: a 384 x 20 input (768 x 40 out), three chunks a row, 60 chunks on 16 CTAs so that
  the CTAs do different numbers of chunks (4 and 3); for the tests.
- ``small``: the ``paper`` input with fewer rows, 1024 x 208 (2048 x 416 out), the suite's rule
  for MPU's workloads (docs/workloads.md): input (832 KiB, 13 x 64 KiB) and output touch at
  least 4 MiB (4.06 MiB), on the ``paper`` grid.
- ``paper``: a 1024 x 1024 input (4 MiB) upsampled to 2048 x 2048 (16 MiB) by 512 CTAs of 128
  threads: the defaults of the authors' benchmark (upsample_sim.py's ``num_input_rows``,
  ``num_input_cols``, ``num_blocks``, ``num_threads``). The paper gives no size, so this is an
  assumption.

Parameters: ``width`` must be a multiple of ``block`` (a chunk must not straddle two rows);
other values are refused.
"""

from __future__ import annotations

import numpy as np

from ndpsim.workloads.base import Device, Workload, register


def from_planes(flat: np.ndarray, height: int, width: int, block: int) -> np.ndarray:
    """The 2 height x 2 width output whose four-plane device layout is ``flat``: plane
    2 * row + half, position r * width + m * block + t, holds output pixel
    (2 r + row, 2 m block + half block + t)."""
    planes = flat.reshape(2, 2, height, width // block, block)  # row, half, r, m, t
    return np.ascontiguousarray(planes.transpose(2, 0, 3, 1, 4)).reshape(2 * height, 2 * width)


@register
class Upsample2x(Workload):
    name = "upsamp"
    title = "2x nearest-neighbour image upsampling, four output planes (MPU-Sim's upsample)"
    papers = ("mpu",)
    sizes = {
        "tiny": {"width": 384, "height": 20, "grid": 16, "block": 128},
        "small": {"width": 1024, "height": 208, "grid": 512, "block": 128},
        "paper": {"width": 1024, "height": 1024, "grid": 512, "block": 128},
    }
    # Every output is a copy of an input: it must match bit for bit.
    rtol = 0.0
    atol = 0.0

    def _check_params(self) -> None:
        p = self.params
        if p["width"] % p["block"]:
            raise ValueError(
                f"width must be a multiple of block (a chunk of block pixels must lie in one "
                f"row), got width={p['width']}, block={p['block']}"
            )
        if p["width"] * p["height"] + p["grid"] * p["block"] >= 2**31:
            raise ValueError(
                "the kernel numbers input pixels with 32-bit integers: width * height plus "
                "grid * block must be below 2^31"
            )

    def inputs(self, rng):
        self._check_params()
        p = self.params
        return {"image": rng.random((p["height"], p["width"]), dtype=np.float32)}

    def run(self, device: Device, inputs):
        self._check_params()
        p = self.params
        width, height, grid, block = p["width"], p["height"], p["grid"], p["block"]
        count = width * height
        image = device.to_device(inputs["image"], "image")
        out = device.zeros(4 * count, np.float32, "upsampled")
        device.launch(
            "upsample2x_planes", grid, block, [image, out, np.int32(count)],
            shared_bytes=block * 4,
        )  # fmt: skip
        flat = device.from_device(out, np.float32, 4 * count)
        return {"upsampled": from_planes(flat, height, width, block)}

    def reference(self, inputs):
        return {"upsampled": inputs["image"].repeat(2, axis=0).repeat(2, axis=1)}
