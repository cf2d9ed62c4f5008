"""BICG: the BiCG sub-kernel of the BiCGStab solver (PolyBench/GPU bicg): s = A^T r with one
thread per column (coalesced walk down the rows) and q = A p with one thread per row (strided
walk along a row). Two dense matrix-vector products with opposite access patterns over the same
matrix, both accumulating in global memory: a streaming, bandwidth-bound entry of the SNDP suite.
"""

from __future__ import annotations

import numpy as np

from ndpsim.workloads.base import Device, Workload, register


@register
class BiCGKernel(Workload):
    name = "bicg"
    title = "BiCG sub-kernel s = A^T r, q = A p (PolyBench/GPU)"
    papers = ("sndp",)
    sizes = {
        "tiny": {"nx": 96, "ny": 130, "block": 64},
        "small": {"nx": 1536, "ny": 1536, "block": 128},
        "paper": {"nx": 4096, "ny": 4096, "block": 256},  # PolyBench/GPU's standard size
    }
    # float32 sums of nx (or ny) positive products accumulated in order, against a float64
    # reference: the relative error grows like sqrt(n) * 2^-24 in practice (measured 1.5e-6 at
    # n = 1024, so about 3e-6 at 4096); 2e-5 leaves a wide margin yet catches any wrong term.
    rtol = 2e-5
    atol = 1e-6

    def inputs(self, rng):
        nx, ny = self.params["nx"], self.params["ny"]
        return {
            "A": rng.random((nx, ny), dtype=np.float32),
            "r": rng.random(nx, dtype=np.float32),
            "p": rng.random(ny, dtype=np.float32),
        }

    def run(self, device: Device, inputs):
        nx, ny, block = self.params["nx"], self.params["ny"], self.params["block"]
        A = device.to_device(inputs["A"], "A")
        r = device.to_device(inputs["r"], "r")
        p = device.to_device(inputs["p"], "p")
        s = device.zeros(ny, np.float32, "s")
        q = device.zeros(nx, np.float32, "q")
        size = [np.int32(nx), np.int32(ny)]
        device.launch("bicg_atr", -(-ny // block), block, [A, r, s, *size])
        device.launch("bicg_ap", -(-nx // block), block, [A, p, q, *size])
        return {
            "s": device.from_device(s, np.float32, ny),
            "q": device.from_device(q, np.float32, nx),
        }

    def reference(self, inputs):
        A = inputs["A"].astype(np.float64)
        return {"s": A.T @ inputs["r"].astype(np.float64), "q": A @ inputs["p"].astype(np.float64)}
