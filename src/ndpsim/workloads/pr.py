"""PR: float32 sum of a vector by parallel reduction in two launches, with the work distribution
of the MPU authors' own benchmark (MPU's Table I "PR", after CUB).

The first launch runs a fixed grid of CTAs over the input in a grid-stride loop: each thread
adds its elements in a register, the CTA adds its threads' sums with a tree in shared memory, and
thread 0 writes one partial sum per CTA. The second launch is the same kernel on one CTA over the
``grid`` partial sums, which writes the total. So the launch sequence is a streaming pass over the
whole input followed by a short, latency-bound pass on a single core.

Why the distribution: MPU (Xie et al., HPCA 2021) runs each CTA on one of 128 cores that owns its
DRAM banks; with the near-bank mapping a core owns 512 consecutive bytes in turn, and the
breadth-first scheduler puts CTA b on core b % 128. CTA b reads chunks b, b + grid, ... of
``block`` elements; at 128 threads a chunk is 512 bytes, and with ``grid`` a multiple of 128 (and
the input starting on core 0) every chunk it reads lies in its own core's banks. The
distribution, the two launches of one kernel (the second on one CTA, skipped when ``grid`` is 1),
the element type and the default sizes are the authors' (MPU-Sim, GitHub
GD06/mpu-sim_distribution, benchmark/vectorsum: vectorsum_kernel.cu for the kernel,
vectorsum_sim.py for the two launches, the sizes and the grid, vectorsum_cuda.cu for the same
launches on the GPU). Launching the same kernel again, rather than a second kernel of its own,
keeps the program the authors ran on both machines and needs no second code path to check. The
input is in its logical order: the authors do not re-lay it out. Unlike ``rd`` (the CUDA SDK's
reduction on int32, which TOM and AIMM run), the sum is float32 and every CTA's tree stays in
shared memory down to one value, as the authors' kernel does.

MPU names no input sizes, so each size here says where it comes from:

- ``tiny``: 45,000 elements on 160 CTAs of 128 threads, for the tests: the grid-stride loop ends
  with a partial chunk (72 of 128 elements), and the second launch's 128 threads stride over 160
  partial sums, so it has a remainder too.
- ``small``: 2^20 elements (4 MiB, a multiple of 64 KiB), the suite's rule for MPU's workloads
  (docs/workloads.md); 512 CTAs as at ``paper``.
- ``paper``: 2^24 = 16,777,216 elements (64 MiB) on 512 CTAs of 128 threads, the defaults of the
  authors' simulation driver (benchmark/vectorsum/vectorsum_sim.py: ``--vector_length``,
  ``--num_blocks``, ``--num_threads``); their GPU run script (run.sh) sums the same length.
"""

from __future__ import annotations

import numpy as np

from ndpsim.workloads.base import Device, Workload, register


@register
class ParallelReduction(Workload):
    name = "pr"
    title = "float32 vector sum, grid-stride CTAs then one CTA over their sums (MPU-Sim vectorsum)"
    papers = ("mpu",)
    sizes = {
        "tiny": {"n": 45_000, "block": 128, "grid": 160},
        "small": {"n": 1 << 20, "block": 128, "grid": 512},
        "paper": {"n": 1 << 24, "block": 128, "grid": 512},
    }

    # The total is a float32 sum of n values in [0, 1), all positive, against NumPy's float64 sum.
    # Each value passes through a chain of at most n / (grid * block) additions in its thread's
    # register, a log2(block)-level tree, grid / block additions in the second launch and its
    # tree: 274 roundings of 2^-24 at the paper size. Random inputs round both ways, so the error
    # grows like the square root of the chain: emulating the kernel's order in NumPy gave 3.5e-8
    # at tiny, 1.1e-7 at small and paper, 4.7e-7 to 7.4e-7 with --param grid=1 at the paper length
    # (131,072 additions per thread) and 2.8e-5 with grid=1 block=1 at 2^20. The tolerance is 5e-6
    # or four times sqrt(chain) * 2^-24, whichever is larger: 45 times the error at the defaults,
    # and still failing a lost element at tiny (the sum is ~22,500, so one value above 0.11) or a
    # lost chunk at paper (64 / 8.4e6 = 7.6e-6). The sum is never near zero.
    @property
    def rtol(self) -> float:
        n, block, grid = self.params["n"], self.params["block"], self.params["grid"]
        levels = max(block, 2).bit_length()
        chain = -(-n // (grid * block)) + levels + -(-grid // block) + levels
        return max(5e-6, 4 * chain**0.5 * 2.0**-24)

    atol = 1e-6

    def inputs(self, rng):
        return {"values": rng.random(self.params["n"], dtype=np.float32)}

    def run(self, device: Device, inputs):
        n, block, grid = self.params["n"], self.params["block"], self.params["grid"]
        if block & (block - 1):
            raise ValueError(
                f"block must be a power of two (the CTA's shared-memory tree halves it), "
                f"got {block}"
            )
        shared_bytes = 4 * block  # one float per thread for the tree
        values = device.to_device(inputs["values"], "values")
        block_sums = device.zeros(grid, np.float32, "block_sums")
        device.launch("pr", grid, block, [values, block_sums, np.int32(n)], shared_bytes)
        total = block_sums  # one CTA has already summed everything
        if grid > 1:
            total = device.zeros(1, np.float32, "sum")
            device.launch("pr", 1, block, [block_sums, total, np.int32(grid)], shared_bytes)
        return {"sum": device.from_device(total, np.float32, 1)}

    def reference(self, inputs):
        return {"sum": np.array([inputs["values"].sum(dtype=np.float64)])}
