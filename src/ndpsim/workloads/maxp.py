"""MAXP: 2x2 max-pooling with stride 2 as TensorFlow's ``tf.nn.max_pool`` computes it with
VALID padding, over a height x width x channels float32 tensor (NHWC, batch 1), with the input
stored in four planes as the MPU authors' benchmark stores it.

What it computes: output (y, x, c) is the largest of the four inputs (2y + dy, 2x + dx, c) for
dy, dx in {0, 1}; an odd last row or column is dropped, as VALID padding does (``reference()``
is that, on the logical tensor). The input is standard normal, so that about half of it is
negative: the authors' kernel starts its maximum from 0, which is right only for their
non-negative inputs; this one takes the largest of the four, so that a pooling starting from zero
would be caught.

Why the layout: MPU (Xie et al., HPCA 2021) runs each CTA on one of 128 cores, and a core owns
the DRAM banks of every 512 consecutive bytes in turn (``near-bank`` mapping); data in other
cores' banks is reached over a slow mesh. The authors' MAXP benchmark (GitHub
GD06/mpu-sim_distribution, benchmark/maxpool: maxpool_kernel.cu, maxpool_sim.py, cta_config.h)
writes the row-major output in chunks of ``block`` consecutive floats (128: 512 bytes, one
core's unit), CTA b taking chunks b, b + grid, ... (a grid-stride loop), and stores the input
so that each output chunk's windows are next to it: the 2 x ``block`` input floats above an
output chunk in each of its two input rows are cut into halves of ``block`` floats and stored in
four planes, one per (input row, half), each plane as long as the output. Input chunk c then sits
at the same offset of its plane as output chunk c, so with an output of a multiple of 128 chunks
(64 KiB) and a grid that is a multiple of 128 every chunk a CTA reads or writes lies in its own
core's banks. The CTA stages the two input rows in shared memory and pools from there. The GPU
runs the same kernel and layout, as the authors' GPU program (maxpool_cuda.cu) does. ``run()``
lays the logical tensor out so before copying it to the device (leaving out an odd last row or
column, which VALID padding never reads).

The authors' tensor has one channel; ``channels`` generalizes it: a chunk must then start on a
pixel (``block`` a multiple of ``channels``), and thread t pools channel t mod ``channels``.

Why it is in the suite: MAXP ("Max-pooling", after TensorFlow) is one of the Machine Learning
workloads of MPU's Table I. MPU names no input sizes, so each size here says where it comes from:

- ``tiny``: 39 x 129 x 4, odd sides (so that VALID padding drops a row and a column) and several
  channels, pooled to 19 x 64 x 4: 38 chunks on 12 CTAs, so that the CTAs do different numbers
  of chunks (4 and 3); for the tests.
- ``small``: the ``paper`` tensor with fewer rows, 416 x 2048 x 1, the suite's rule for MPU's
  workloads (docs/workloads.md): the fewest rows for which input and output touch at least
  4 MiB (4.06 MiB) with the output a multiple of 64 KiB (13 x 64 KiB), on the ``paper`` grid.
- ``paper``: 2048 x 2048 x 1 pooled to 1024 x 1024 (16 MiB in, 4 MiB out) by 512 CTAs of 128
  threads: the defaults of the authors' benchmark (maxpool_sim.py's ``num_output_rows``,
  ``num_output_cols``, ``num_blocks``, ``num_threads``). The paper gives no size, so this is an
  assumption. A CNN's pooling layer is the same kernel with more channels (VGG-16's first,
  ``--param height=224 --param width=224 --param channels=64``).

Parameters: ``block`` must be a multiple of ``channels`` and ``(width // 2) * channels`` a
multiple of ``block`` (an output chunk lies in one row and starts on a pixel); other values are
refused.
"""

from __future__ import annotations

import numpy as np

from ndpsim.workloads.base import Device, Workload, register


def to_planes(tensor: np.ndarray, block: int) -> np.ndarray:
    """The four-plane device layout of a height x width x channels tensor (flat): plane
    2 * row + half, position r * (out_width * channels) + m * block + t, holds element
    2 m block + half block + t of input row 2 r + row (rows flattened, channel fastest)."""
    height, width, channels = tensor.shape
    out_height, out_width = height // 2, width // 2
    used = tensor[: 2 * out_height, : 2 * out_width]
    rows = used.reshape(
        out_height, 2, out_width * channels // block, 2, block
    )  # r, row, m, half, t
    return np.ascontiguousarray(rows.transpose(1, 3, 0, 2, 4)).ravel()


@register
class MaxPool2x2(Workload):
    name = "maxp"
    title = "2x2 max-pooling, stride 2, VALID, NHWC, four input planes (MPU-Sim's maxpool)"
    papers = ("mpu",)
    sizes = {
        "tiny": {"height": 39, "width": 129, "channels": 4, "grid": 12, "block": 128},
        "small": {"height": 416, "width": 2048, "channels": 1, "grid": 512, "block": 128},
        "paper": {"height": 2048, "width": 2048, "channels": 1, "grid": 512, "block": 128},
    }
    # Each output is one of its inputs, chosen by comparisons: it must match bit for bit.
    rtol = 0.0
    atol = 0.0

    def _output_shape(self) -> tuple[int, int, int]:
        p = self.params
        return p["height"] // 2, p["width"] // 2, p["channels"]

    def _check_params(self) -> None:
        p = self.params
        block, channels = p["block"], p["channels"]
        if p["height"] < 2 or p["width"] < 2:
            raise ValueError("a 2x2 window needs at least 2 rows and 2 columns")
        if block % channels:
            raise ValueError(
                f"block must be a multiple of channels (a chunk of block outputs must start on a "
                f"pixel), got block={block}, channels={channels}"
            )
        row_floats = (p["width"] // 2) * channels
        if row_floats % block:
            raise ValueError(
                f"(width // 2) * channels, an output row's floats, must be a multiple of block "
                f"(a chunk must lie in one row), got {row_floats} with block={block}"
            )
        if int(np.prod(self._output_shape())) + p["grid"] * block >= 2**31:
            raise ValueError(
                "the kernel numbers output elements with 32-bit integers: the output's size "
                "plus grid * block must be below 2^31"
            )

    def inputs(self, rng):
        self._check_params()
        p = self.params
        shape = (p["height"], p["width"], p["channels"])
        return {"input": rng.standard_normal(shape, dtype=np.float32)}

    def run(self, device: Device, inputs):
        self._check_params()
        p = self.params
        grid, block, channels = p["grid"], p["block"], p["channels"]
        shape = self._output_shape()
        count = int(np.prod(shape))
        d_in = device.to_device(to_planes(inputs["input"], block), "input")
        d_out = device.zeros(count, np.float32, "output")
        device.launch(
            "maxpool2x2_planes", grid, block, [d_in, d_out, np.int32(count), np.int32(channels)],
            shared_bytes=4 * block * 4,
        )  # fmt: skip
        return {"output": device.from_device(d_out, np.float32, count).reshape(shape)}

    def reference(self, inputs):
        oh, ow, c = self._output_shape()
        x = inputs["input"][: 2 * oh, : 2 * ow]
        return {"output": x.reshape(oh, 2, ow, 2, c).max(axis=(1, 3))}
