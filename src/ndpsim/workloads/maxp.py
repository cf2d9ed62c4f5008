"""MAXP: 2x2 max-pooling with stride 2 as TensorFlow's ``tf.nn.max_pool`` computes it with
VALID padding, over a height x width x channels float32 tensor (NHWC, batch 1).

Each thread writes one output element (y, x, c), the largest of the four inputs
(2y + dy, 2x + dx, c) for dy, dx in {0, 1}; an odd last row or column is dropped, as VALID
padding does. Threads are numbered in the output's order (channel fastest), so a warp's reads of
each of its four inputs are consecutive. Every input is read once and a quarter as much is
written, with three comparisons per output: a purely bandwidth-bound kernel. The input is
standard normal, so that about half of it is negative (a pooling that started from zero would
be caught).

Why it is in the suite: MAXP ("Max-pooling", after TensorFlow) is one of the Machine Learning
workloads of MPU's Table I (Xie et al., HPCA 2021). MPU names no input sizes, so each size here
says where it comes from:

- ``tiny``: 15 x 17 x 8, odd sides (so that VALID padding drops a row and a column) and
  several channels; for the tests.
- ``small``: the ``paper`` tensor with fewer rows, 410 x 2048 x 1, the suite's rule for MPU's
  workloads (docs/workloads.md): the fewest (even) rows for which input and output touch at
  least 4 MiB.
- ``paper``: 2048 x 2048 x 1 pooled to 1024 x 1024 (16 MiB in, 4 MiB out). An assumption, as
  the paper gives no size: it is the default of the authors' public MPU-Sim MAXP benchmark
  (GitHub GD06/mpu-sim_distribution, benchmark/maxpool), which pools a 2D tensor of that size
  with CTAs of 128 threads, as here. A CNN's pooling layer is the same kernel with more
  channels (VGG-16's first, ``--param height=224 --param width=224 --param channels=64``).
"""

from __future__ import annotations

import numpy as np

from ndpsim.workloads.base import Device, Workload, register


@register
class MaxPool2x2(Workload):
    name = "maxp"
    title = "2x2 max-pooling, stride 2, VALID padding, NHWC (TensorFlow max_pool)"
    papers = ("mpu",)
    sizes = {
        "tiny": {"height": 15, "width": 17, "channels": 8, "block": 128},
        "small": {"height": 410, "width": 2048, "channels": 1, "block": 128},
        "paper": {"height": 2048, "width": 2048, "channels": 1, "block": 128},
    }
    # Each output is one of its inputs, chosen by comparisons: it must match bit for bit.
    rtol = 0.0
    atol = 0.0

    def _output_shape(self) -> tuple[int, int, int]:
        p = self.params
        return p["height"] // 2, p["width"] // 2, p["channels"]

    def inputs(self, rng):
        p = self.params
        if p["height"] < 2 or p["width"] < 2:
            raise ValueError("a 2x2 window needs at least 2 rows and 2 columns")
        if p["height"] * p["width"] * p["channels"] >= 2**31:
            raise ValueError("the kernel numbers elements with 32-bit integers: a tensor of "
                             "2^31 elements or more does not fit")  # fmt: skip
        shape = (p["height"], p["width"], p["channels"])
        return {"input": rng.standard_normal(shape, dtype=np.float32)}

    def run(self, device: Device, inputs):
        p = self.params
        block = p["block"]
        shape = self._output_shape()
        total = int(np.prod(shape))
        d_in = device.to_device(inputs["input"], "input")
        d_out = device.zeros(total, np.float32, "output")
        device.launch(
            "maxpool2x2", -(-total // block), block,
            [d_in, d_out, np.int32(p["height"]), np.int32(p["width"]), np.int32(p["channels"])],
        )  # fmt: skip
        return {"output": device.from_device(d_out, np.float32, total).reshape(shape)}

    def reference(self, inputs):
        oh, ow, c = self._output_shape()
        x = inputs["input"][: 2 * oh, : 2 * ow]
        return {"output": x.reshape(oh, 2, ow, 2, c).max(axis=(1, 3))}
