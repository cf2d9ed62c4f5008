"""CONV: a 3x3 convolution layer as TensorFlow's ``tf.nn.conv2d`` computes it with SAME
padding and stride 1, batch 1, float32.

The input is height x width x in_channels (NHWC), the filter 3 x 3 x in_channels x
out_channels (HWIO, TensorFlow's layout), the output height x width x out_channels; pixels
outside the image count as zero. Each thread computes one output element (y, x, o) as the
9 x in_channels-term dot product of its input neighbourhood and filter column ``o``. Threads are
numbered in the output's order (output channel fastest), so that the threads of a warp either
share an input value (several output channels of a pixel) or read consecutive ones (one channel
of consecutive pixels), and read consecutive filter values. Inputs are non-negative activations
(uniform in [0, 1), as after a ReLU) and He-normal weights (standard deviation
sqrt(2 / (9 in_channels))), so that outputs are O(1).

Why it is in the suite: CONV ("3x3 conv", after TensorFlow) is one of the Machine Learning
workloads of MPU's Table I (Xie et al., HPCA 2021), a suite MPU characterizes as bound by
memory on a V100 (its Fig. 1: much DRAM bandwidth, little compute used). MPU names no input
sizes, so each size here says where it comes from:

- ``tiny``: 12 rows of 10 pixels, 8 -> 12 channels, so that a warp spans pixels and channels
  and the zero border is a large share of the output; for the tests.
- ``small``: the ``paper`` image with fewer rows, 128 rows of 4096 pixels, the suite's rule
  for MPU's workloads (docs/workloads.md): the fewest rows for which input, filter and output
  touch at least 4 MiB.
- ``paper``: a 4096 x 4096 single-channel image (64 MiB in, 64 MiB out) and one 3x3 filter. An
  assumption, as the paper gives no size: it is the default of the authors' public MPU-Sim CONV
  benchmark (GitHub GD06/mpu-sim_distribution, benchmark/conv), a 3x3 convolution of a
  single-channel image (over 32 x 32 tiles, with CTAs of 32 x 4 = 128 threads). One channel in
  and out keeps the layer memory-bound, like the rest of MPU's suite; a CNN layer with many
  channels is not: a 64 -> 64 layer does 576 multiply-adds per output, and the same 4 MiB of
  data would take some 55 million warp-instructions to interpret (36 rows of 224 pixels; 8 rows
  took 12.2 million). Such layers are a ``--param`` away (VGG-16's conv1_2: ``--param
  height=224 --param width=224 --param in_channels=64 --param out_channels=64``); a ResNet 3x3
  layer at batch 1 (at most 56 x 56 x 64, 0.8 MiB each way) would fit in the L2 of the papers
  reproduced.
"""

from __future__ import annotations

import numpy as np

from ndpsim.workloads.base import Device, Workload, register

K = 3  # the filter's side (conv.cu)


@register
class Conv3x3(Workload):
    name = "conv"
    title = "3x3 convolution layer, SAME padding, stride 1, NHWC (TensorFlow conv2d)"
    papers = ("mpu",)
    sizes = {
        "tiny": {"height": 12, "width": 10, "in_channels": 8, "out_channels": 12, "block": 128},
        "small": {"height": 128, "width": 4096, "in_channels": 1, "out_channels": 1,
                  "block": 128},
        "paper": {"height": 4096, "width": 4096, "in_channels": 1, "out_channels": 1,
                  "block": 128},
    }  # fmt: skip
    # Each output is a chain of n = 9 in_channels float32 fused multiply-adds (9 in small and
    # paper, 72 in tiny) whose partial sums are O(1), compared with a float64 reference: the
    # rounding error grows like sqrt(n) * 6e-8, under 1e-6 here (measured: 6e-7 at tiny, 3e-7
    # for one channel) and about 2e-6 for a 64 -> 64 layer given by --param (measured 2e-6).
    # 1e-5 leaves a margin of five over the largest of these.
    rtol = 1e-5
    atol = 1e-5

    def inputs(self, rng):
        p = self.params
        h, w, ci, co = p["height"], p["width"], p["in_channels"], p["out_channels"]
        if h * w * max(ci, co) >= 2**31 or K * K * ci * co >= 2**31:
            raise ValueError("the kernel numbers elements with 32-bit integers: a tensor of "
                             "2^31 elements or more does not fit")  # fmt: skip
        scale = np.float32(np.sqrt(2.0 / (K * K * ci)))
        return {
            "input": rng.random((h, w, ci), dtype=np.float32),
            "filter": rng.standard_normal((K, K, ci, co), dtype=np.float32) * scale,
        }

    def run(self, device: Device, inputs):
        p = self.params
        h, w, ci, co = p["height"], p["width"], p["in_channels"], p["out_channels"]
        block = p["block"]
        d_in = device.to_device(inputs["input"], "input")
        d_filter = device.to_device(inputs["filter"], "filter")
        total = h * w * co
        d_out = device.zeros(total, np.float32, "output")
        device.launch(
            "conv3x3", -(-total // block), block,
            [d_in, d_filter, d_out, np.int32(h), np.int32(w), np.int32(ci), np.int32(co)],
        )  # fmt: skip
        return {"output": device.from_device(d_out, np.float32, total).reshape(h, w, co)}

    def reference(self, inputs):
        x = inputs["input"].astype(np.float64)
        f = inputs["filter"].astype(np.float64)
        h, w, _ = x.shape
        padded = np.pad(x, ((1, 1), (1, 1), (0, 0)))
        out = np.zeros((h, w, f.shape[3]))
        for ky in range(K):
            for kx in range(K):
                out += padded[ky : ky + h, kx : kx + w] @ f[ky, kx]
        return {"output": out}
