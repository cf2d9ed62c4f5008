"""FWT: dyadic convolution through the fast Walsh-Hadamard transform, as the CUDA SDK's
fastWalshTransform (TOM and SNDP suites).

The data and the zero-padded kernel are transformed forward, multiplied element-wise (with the
1/N of the inverse) and the product transformed again. A transform is a host loop of global-memory
butterfly stages with large strides, one launch each, followed by one shared-memory kernel doing
the small-stride stages tile by tile: a mix of whole-array streaming passes, with strided pairs,
and on-chip work.
"""

from __future__ import annotations

import numpy as np

from ndpsim.workloads.base import Device, Workload, register


@register
class FastWalshTransform(Workload):
    name = "fwt"
    title = "dyadic convolution by fast Walsh-Hadamard transforms (CUDA SDK fastWalshTransform)"
    papers = ("tom", "sndp")
    sizes = {
        "tiny": {"log2_data": 11, "log2_kernel": 4, "block": 128},
        "small": {"log2_data": 20, "log2_kernel": 7, "block": 256},
        "paper": {"log2_data": 23, "log2_kernel": 7, "block": 256},  # the SDK's default
    }
    # The three transforms add and subtract in float32, log2(N) times per element, in another
    # order than the reference's direct float64 sum of 2^log2_kernel products. Measured relative
    # error: 6e-7 at small, 8e-7 at paper (outputs are sums of ~100 products of [0, 1) values,
    # never near zero); 1e-5 leaves a margin of ten.
    rtol = 1e-5
    atol = 1e-6

    def inputs(self, rng):
        n = 1 << self.params["log2_data"]
        k = 1 << self.params["log2_kernel"]
        return {
            "data": rng.random(n, dtype=np.float32),
            "kernel": rng.random(k, dtype=np.float32),
        }

    def _transform(self, device: Device, array: int, n: int) -> None:
        block = self.params["block"]
        tile = 2 * block
        pairs = n // 2
        stride = pairs
        while stride >= tile:  # large strides in global memory, one stage a launch
            device.launch(
                "fwt_global_stage", -(-pairs // block), block,
                [array, np.int32(stride), np.int32(pairs)],
            )  # fmt: skip
            stride //= 2
        tile = min(tile, n)  # strides below the tile: every remaining stage, in shared memory
        device.launch("fwt_shared_stages", n // tile, tile // 2, [array])

    def run(self, device: Device, inputs):
        data, kernel = inputs["data"], inputs["kernel"]
        n = len(data)
        if n & (n - 1) or n < 2 or len(kernel) > n:
            raise ValueError("the data length must be a power of two, at least the kernel's")
        padded = np.zeros(n, dtype=np.float32)
        padded[: len(kernel)] = kernel
        d_data = device.to_device(data, "data")
        d_kernel = device.to_device(padded, "kernel")
        self._transform(device, d_data, n)
        self._transform(device, d_kernel, n)
        block = self.params["block"]
        device.launch(
            "fwt_modulate", min(-(-n // block), 1_024), block,
            [d_data, d_kernel, np.float32(1.0 / n), np.int32(n)],
        )  # fmt: skip
        self._transform(device, d_data, n)
        return {"convolution": device.from_device(d_data, np.float32, n)}

    def reference(self, inputs):
        """Dyadic (XOR) convolution computed directly: out[i] = sum_j kernel[j] * data[i ^ j]."""
        data = inputs["data"].astype(np.float64)
        kernel = inputs["kernel"].astype(np.float64)
        index = np.arange(len(data))
        out = np.zeros(len(data))
        for j, weight in enumerate(kernel):
            out += weight * data[index ^ j]
        return {"convolution": out.astype(np.float32)}
