"""HIST: 256-bin byte histogram with shared-memory sub-histograms (MPU's suite; CUDA SDK
histogram256).

Each CTA counts its grid-stride share of the input words' bytes into a shared-memory histogram
with shared atomics, then merges it into the global histogram with global atomics. It streams
its input once and its on-chip work is contended read-modify-writes, which makes it a test of
how atomics are placed and costed when the kernel runs near memory.
"""

from __future__ import annotations

import numpy as np

from ndpsim.workloads.base import Device, Workload, register


@register
class Histogram(Workload):
    name = "hist"
    title = "256-bin byte histogram, shared then global atomics (CUDA SDK histogram256)"
    papers = ("mpu",)
    sizes = {
        "tiny": {"bytes": 40_000, "grid": 16, "block": 128},
        "small": {"bytes": 1 << 22, "grid": 240, "block": 256},
        # The SDK's histogram256 counts 64 MiB on 240 CTAs.
        "paper": {"bytes": 1 << 26, "grid": 240, "block": 256},
    }
    # Counts are integers and atomics make them exact: the check is equality.

    def inputs(self, rng):
        count = self.params["bytes"]
        if count % 4:
            raise ValueError("the kernel reads whole 32-bit words: bytes must be a multiple of 4")
        # Uniform bytes, as the SDK sample draws them, with a run of one value so that one bin is
        # hot and its shared atomics collide within warps.
        data = rng.integers(0, 256, count, dtype=np.uint8)
        hot = count // 8
        start = int(rng.integers(0, count - hot + 1))
        data[start : start + hot] = np.uint8(rng.integers(0, 256))
        return {"data": data}

    def run(self, device: Device, inputs):
        grid, block = self.params["grid"], self.params["block"]
        words = inputs["data"].view(np.uint32)  # little-endian: byte k of a word is bits 8k..8k+7
        d_words = device.to_device(words, "words")
        d_hist = device.zeros(256, np.uint32, "histogram")
        device.launch("histogram256", grid, block, [d_words, np.int32(len(words)), d_hist])
        return {"histogram": device.from_device(d_hist, np.uint32, 256)}

    def reference(self, inputs):
        return {"histogram": np.bincount(inputs["data"], minlength=256).astype(np.uint32)}
