"""UPSAMP: 2x upsampling of a float32 image by bilinear interpolation, as Halide's
tutorial-style upsample computes it.

The output is twice as wide and twice as tall. Output pixel (x, y) samples the input at
((x + 0.5) / 2 - 0.5, (y + 0.5) / 2 - 0.5), so that pixel centres line up, by interpolating
between the four input pixels around that point (the weights are 1/4 and 3/4); an index outside
the input is clamped to the edge. Each thread of a 2D grid of 32 x 8 CTAs writes one output
pixel: it computes the sample point with a floor, clamps four indices, reads four inputs (a warp
reads 17 consecutive floats of each of two rows, each read shared by neighbouring threads) and
interpolates three times. The output is four times the input, so writes dominate the traffic,
and the index arithmetic before the loads is a chain of dependent instructions, which is why MPU
finds it speeds up less than its memory intensity predicts. The input is uniform noise in
[0, 1).

Why it is in the suite: UPSAMP ("Image upsample", after Halide) is one of the Image Processing
workloads of MPU's Table I (Xie et al., HPCA 2021). MPU names no input sizes, so each size here
says where it comes from:

- ``tiny``: a 40 x 27 input (80 x 54 out), so that partial CTAs and all four clamped borders
  are exercised; for the tests.
- ``small``: the ``paper`` input with fewer rows, 1024 x 208 (2048 x 416 out), the suite's rule
  for MPU's workloads (docs/workloads.md): input and output touch at least 4 MiB, in whole rows
  of CTAs (205 rows would do, in a partial one).
- ``paper``: a 1024 x 1024 input (4 MiB) upsampled to 2048 x 2048 (16 MiB). An assumption, as
  the paper gives no size: it is the default of the authors' public MPU-Sim UPSAMP benchmark
  (GitHub GD06/mpu-sim_distribution, benchmark/upsample), which replicates each pixel into a
  2 x 2 block (nearest neighbour) with CTAs of 128 threads, where this interpolates as Halide
  does.
"""

from __future__ import annotations

import numpy as np

from ndpsim.workloads.base import Device, Workload, register


def _taps(n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For the 2n output positions along an axis of n inputs: the clamped indices of the two
    inputs each one interpolates between, and the weight of the second."""
    s = (np.arange(2 * n) + 0.5) / 2 - 0.5
    first = np.floor(s)
    weight = s - first
    first = first.astype(np.int64)
    return np.clip(first, 0, n - 1), np.clip(first + 1, 0, n - 1), weight


@register
class Upsample2x(Workload):
    name = "upsamp"
    title = "2x bilinear image upsampling, clamped borders (Halide upsample)"
    papers = ("mpu",)
    sizes = {
        "tiny": {"width": 40, "height": 27, "block": (32, 8)},
        "small": {"width": 1024, "height": 208, "block": (32, 8)},
        "paper": {"width": 1024, "height": 1024, "block": (32, 8)},
    }
    # The sample points and weights (1/4, 3/4) are exact in float32; what differs from the
    # float64 reference is the rounding of three interpolations (a subtraction and a fused
    # multiply-add each) of values in [0, 1), at most a few units of 6e-8: 1e-6 leaves margin.
    rtol = 1e-6
    atol = 1e-6

    def inputs(self, rng):
        p = self.params
        if 2 * max(p["width"], p["height"]) >= 2**31:
            raise ValueError("the kernel numbers output pixels with 32-bit integers")
        return {"image": rng.random((p["height"], p["width"]), dtype=np.float32)}

    def run(self, device: Device, inputs):
        p = self.params
        width, height = p["width"], p["height"]
        bx, by = p["block"]
        image = device.to_device(inputs["image"], "image")
        count = 4 * width * height
        out = device.zeros(count, np.float32, "upsampled")
        grid = (-(-2 * width // bx), -(-2 * height // by))
        device.launch("upsample2x", grid, (bx, by), [image, out, np.int32(width), np.int32(height)])
        upsampled = device.from_device(out, np.float32, count).reshape(2 * height, 2 * width)
        return {"upsampled": upsampled}

    def reference(self, inputs):
        image = inputs["image"].astype(np.float64)
        height, width = image.shape
        xa, xb, wx = _taps(width)
        ya, yb, wy = _taps(height)
        row_a, row_b = image[ya], image[yb]
        top = row_a[:, xa] + wx * (row_a[:, xb] - row_a[:, xa])
        bottom = row_b[:, xa] + wx * (row_b[:, xb] - row_b[:, xa])
        return {"upsampled": top + wy[:, None] * (bottom - top)}
