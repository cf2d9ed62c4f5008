"""STN: 3D 7-point Jacobi stencil (Parboil's stencil): each thread owns an (x, y) column and
walks z, reading the point and its 6 neighbours from one grid and writing the other; the host
swaps the two grids between time steps. Regular, streaming, with reuse across neighbouring
columns and planes: the structured-grid entry of the SNDP suite."""

from __future__ import annotations

import numpy as np

from ndpsim.workloads.base import Device, Workload, register

#: Jacobi weights of the centre and of each neighbour. Parboil passes its two coefficients the
#: same way; a convex average (0.4 + 6 * 0.1 = 1) keeps the values O(1) over many steps.
C0, C1 = 0.4, 0.1


@register
class Stencil7(Workload):
    name = "stn"
    title = "3D 7-point Jacobi stencil (Parboil stencil)"
    papers = ("sndp",)
    sizes = {
        "tiny": {"nx": 37, "ny": 11, "nz": 6, "steps": 2, "block": (32, 4)},
        # Parboil's "small" grid (128 x 128 x 32) made twice as deep, and its "default" grid;
        # Parboil runs 100 steps of the same launch.
        "small": {"nx": 128, "ny": 128, "nz": 64, "steps": 4, "block": (32, 4)},
        "paper": {"nx": 512, "ny": 512, "nz": 64, "steps": 5, "block": (32, 4)},
    }
    # Each step is a 7-term float32 weighted sum (rounding ~1e-7 relative) of values in [0, 1);
    # the averaging does not amplify earlier errors, so a few steps stay far below 1e-5.
    rtol = 1e-5
    atol = 1e-6

    def inputs(self, rng):
        p = self.params
        return {"grid": rng.random((p["nz"], p["ny"], p["nx"]), dtype=np.float32)}

    def run(self, device: Device, inputs):
        p = self.params
        nx, ny, nz = p["nx"], p["ny"], p["nz"]
        bx, by = p["block"]
        # Both buffers start as the input, so the boundary (never written) stays as it was.
        buffers = [
            device.to_device(inputs["grid"], "grid_a"),
            device.to_device(inputs["grid"], "grid_b"),
        ]
        grid = (-(-(nx - 2) // bx), -(-(ny - 2) // by))
        for _ in range(p["steps"]):
            source, target = buffers
            device.launch(
                "stencil7", grid, (bx, by),
                [source, target, np.int32(nx), np.int32(ny), np.int32(nz),
                 np.float32(C0), np.float32(C1)],
            )  # fmt: skip
            buffers = [target, source]
        result = device.from_device(buffers[0], np.float32, nx * ny * nz)
        return {"grid": result.reshape(nz, ny, nx)}

    def reference(self, inputs):
        u = inputs["grid"].astype(np.float64)
        for _ in range(self.params["steps"]):
            nxt = u.copy()
            nxt[1:-1, 1:-1, 1:-1] = C0 * u[1:-1, 1:-1, 1:-1] + C1 * (
                u[:-2, 1:-1, 1:-1] + u[2:, 1:-1, 1:-1]
                + u[1:-1, :-2, 1:-1] + u[1:-1, 2:, 1:-1]
                + u[1:-1, 1:-1, :-2] + u[1:-1, 1:-1, 2:]
            )  # fmt: skip
            u = nxt
        return {"grid": u}
