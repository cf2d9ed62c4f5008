"""HIST: 256-bin histogram of float32 values binned by value, per-CTA shared-memory histograms
written out as partials and reduced by a second kernel (MPU's Table I, image processing, after
CUB's histogram).

The kernels, the input and the sizes follow the MPU authors' public MPU-Sim benchmark (GitHub
GD06/mpu-sim_distribution, benchmark/histogram: histogram_kernel.cu, histogram_sim.py and the
GPU host program histogram_cuda.cu, which runs the same kernels on the V100):

- ``histogram_partial``: a fixed grid (the authors' 128 CTAs of 128 threads) walks the values
  grid-stride, so CTA b reads chunks b, b + grid, ... of 128 values. On MPU (near-bank mapping:
  a core owns 512 consecutive bytes in turn) a grid that is a multiple of 128 keeps every chunk
  a CTA reads in its own core's banks, each warp's 128 bytes beside its own near-bank unit. A
  value v goes to bin ``int(255 * v)`` (single-precision product, truncated, clamped to 0..255),
  counted with shared-memory atomics in the CTA's own 256 bins; the CTA then writes its 256
  counts to ``partials[cta * 256 + bin]``, the authors' layout.
- ``histogram_reduce``: one thread per bin sums it over the partials, on ceil(256 / block) CTAs
  (the authors' simulation driver launches 2 of 128 threads).

The input follows the authors, not our earlier byte histogram (CUDA SDK histogram256, four
bytes per 32-bit word): the values are uniform float32 in [0, 1) as they draw them, so each
thread handles one 4-byte element per pass, the 512-byte chunks above line up with the cores,
and the instruction mix per element (a multiply, a conversion, a clamp and one shared atomic) is
the benchmark MPU ran. The authors' product is in double precision (a ``255.0`` literal); here it
is single precision, as a GPU histogram would compute it, and the reference bins the same
float32 products, so the counts match exactly. Uniform values fill bins 0..254; bin 255 gets
only products that round up to 255.

Sizes:
- tiny: 20,000 values on 16 CTAs of 128 threads (about ten grid-stride passes, the last partial;
  16 partials to reduce); for the tests.
- small: 1,015,808 values (62 x 16,384, 3.875 MiB) on the authors' 128 CTAs: the suite's rule for
  MPU's workloads (docs/workloads.md), the smallest multiple of 16,384 values (so every array
  starts on a 64 KiB boundary) whose values, 128 KiB of partials and 1 KiB histogram touch 4 MiB.
- paper: 16,777,216 values (64 MiB), 128 CTAs of 128 threads: the defaults of the authors' driver
  (benchmark/histogram/histogram_sim.py, ``--num_elements``, ``--num_blocks``,
  ``--num_threads``).
"""

from __future__ import annotations

import numpy as np

from ndpsim.workloads.base import Device, Workload, register

BINS = 256  # HIST_BINS in kernels/hist.cu


def bins_of(values: np.ndarray) -> np.ndarray:
    """The kernel's bin of each value: the float32 product 255 * v truncated toward zero, clamped
    to 0..255 (clamping before the conversion gives the same bins for every finite value)."""
    product = np.float32(255.0) * values.astype(np.float32)
    return np.clip(np.trunc(product), 0, BINS - 1).astype(np.int64)


@register
class Histogram(Workload):
    name = "hist"
    title = "256-bin histogram of floats, per-CTA partials then a reduction (MPU-Sim histogram)"
    papers = ("mpu",)
    sizes = {
        "tiny": {"n": 20_000, "grid": 16, "block": 128},
        "small": {"n": 1_015_808, "grid": 128, "block": 128},
        "paper": {"n": 1 << 24, "grid": 128, "block": 128},
    }
    # Counts are integers and atomics make them exact: the check is equality.

    def inputs(self, rng):
        return {"values": rng.random(self.params["n"], dtype=np.float32)}

    def run(self, device: Device, inputs):
        n, grid, block = self.params["n"], self.params["grid"], self.params["block"]
        # The large arrays first, so that each starts on a 64 KiB boundary (core 0).
        d_values = device.to_device(inputs["values"], "values")
        d_partials = device.zeros(grid * BINS, np.uint32, "partials")
        d_histogram = device.zeros(BINS, np.uint32, "histogram")
        device.launch("histogram_partial", grid, block, [d_values, np.int32(n), d_partials])
        device.launch("histogram_reduce", -(-BINS // block), block,
                      [d_partials, np.int32(grid), d_histogram])  # fmt: skip
        return {"histogram": device.from_device(d_histogram, np.uint32, BINS)}

    def reference(self, inputs):
        counts = np.bincount(bins_of(inputs["values"]), minlength=BINS)
        return {"histogram": counts.astype(np.uint32)}
