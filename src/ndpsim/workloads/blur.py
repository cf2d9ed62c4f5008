"""BLUR: Halide's classic 3x3 box blur of a float32 image, as two separable passes.

``blur_x`` averages each pixel with its left and right neighbours into a temporary image, and
``blur_y`` averages each pixel of that image with the ones above and below it: together the
mean of the 3 x 3 neighbourhood, the example the Halide paper (Ragan-Kelley et al., PLDI 2013)
opens with. A neighbour outside the image is clamped to the edge (Halide's ``repeat_edge``).
Each thread of a 2D grid of 32 x 8 CTAs writes one pixel, so a warp reads and writes one
128-byte run of a row; the three reads of a pixel's neighbours overlap those of the warp's
other threads (``blur_x``) or of the rows next to it (``blur_y``). Every pixel is read about
three times and written once per pass, with two additions and a division: a streaming,
bandwidth-bound stencil whose temporary image goes through memory between the two launches.
The input is uniform noise in [0, 1).

Why it is in the suite: BLUR ("3x3 blur", after Halide) is one of the Image Processing
workloads of MPU's Table I (Xie et al., HPCA 2021). MPU names no input sizes, so each size here
says where it comes from:

- ``tiny``: 70 x 45, sides that are not multiples of the CTA's, so that partial CTAs and all
  four clamped borders are exercised; for the tests.
- ``small``: the ``paper`` image with fewer rows, 4096 x 88, the suite's rule for MPU's
  workloads (docs/workloads.md): input, temporary and output touch at least 4 MiB (4.1 MiB),
  in whole rows of CTAs (86 rows would do, in a partial one).
- ``paper``: 4096 x 4096 (64 MiB per image). An assumption, as the paper gives no size: it is
  the default image of the authors' public MPU-Sim BLUR benchmark (GitHub
  GD06/mpu-sim_distribution, benchmark/blur), which blurs in one pass over 32 x 32 tiles with
  CTAs of 32 x 4 threads, where this is Halide's two-pass form (``--param block=32,4`` gives
  their CTA shape).
"""

from __future__ import annotations

import numpy as np

from ndpsim.workloads.base import Device, Workload, register


@register
class Blur3x3(Workload):
    name = "blur"
    title = "3x3 box blur in two separable passes, clamped borders (Halide blur)"
    papers = ("mpu",)
    sizes = {
        "tiny": {"width": 70, "height": 45, "block": (32, 8)},
        "small": {"width": 4096, "height": 88, "block": (32, 8)},
        "paper": {"width": 4096, "height": 4096, "block": (32, 8)},
    }
    # The kernels add three float32 values left to right and divide by 3 with IEEE division
    # (nvcc contracts nothing here: there is no multiplication), and the reference does the same
    # operations in the same order in float32, so the output must match bit for bit.
    rtol = 0.0
    atol = 0.0

    def inputs(self, rng):
        p = self.params
        return {"image": rng.random((p["height"], p["width"]), dtype=np.float32)}

    def run(self, device: Device, inputs):
        p = self.params
        width, height = p["width"], p["height"]
        bx, by = p["block"]
        image = device.to_device(inputs["image"], "image")
        tmp = device.zeros(width * height, np.float32, "blur_x")
        out = device.zeros(width * height, np.float32, "blur_y")
        grid = (-(-width // bx), -(-height // by))
        device.launch("blur_x", grid, (bx, by), [image, tmp, np.int32(width), np.int32(height)])
        device.launch("blur_y", grid, (bx, by), [tmp, out, np.int32(width), np.int32(height)])
        blurred = device.from_device(out, np.float32, width * height)
        return {"blurred": blurred.reshape(height, width)}

    def reference(self, inputs):
        three = np.float32(3)
        x = np.pad(inputs["image"], ((0, 0), (1, 1)), mode="edge")
        tmp = (x[:, :-2] + x[:, 1:-1] + x[:, 2:]) / three
        t = np.pad(tmp, ((1, 1), (0, 0)), mode="edge")
        return {"blurred": (t[:-2] + t[1:-1] + t[2:]) / three}
