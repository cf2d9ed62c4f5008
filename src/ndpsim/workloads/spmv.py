"""SPMV: scalar-CSR sparse matrix-vector products inside a conjugate-gradient solve on a
MiniFE-like matrix, the 27-point stencil of a structured hexahedral mesh (one row per mesh node,
diagonal 26, off-diagonals -1). One thread per row with an indirect load of x[col] per entry;
the host runs the rest of CG (dot products, vector updates), so every iteration is one launch.
It stands for MiniFE in the SNDP suite and for SPMV in AIMM's."""

from __future__ import annotations

import numpy as np

from ndpsim.errors import WorkloadError
from ndpsim.workloads.base import Device, Workload, register
from ndpsim.workloads.generators import CSR, csr_from_edges


def stencil27_csr(nx: int, ny: int, nz: int) -> CSR:
    """The 27-point stencil matrix on the (nx+1) x (ny+1) x (nz+1) nodes of an nx*ny*nz
    hexahedral mesh, as MiniFE assembles it: node (i, j, k) is row i + (nx+1)*(j + (ny+1)*k),
    coupled to itself (26.0) and to each existing neighbour in its 3x3x3 box (-1.0), so
    boundary rows have fewer entries. float32 values, columns sorted within each row."""
    dims = (nz + 1, ny + 1, nx + 1)
    k, j, i = (a.reshape(-1) for a in np.indices(dims))
    rows, cols, vals = [], [], []
    for dk in (-1, 0, 1):
        for dj in (-1, 0, 1):
            for di in (-1, 0, 1):
                kk, jj, ii = k + dk, j + dj, i + di
                inside = (
                    (kk >= 0) & (kk < dims[0]) & (jj >= 0) & (jj < dims[1])
                    & (ii >= 0) & (ii < dims[2])
                )  # fmt: skip
                node = np.flatnonzero(inside)
                rows.append(node)
                cols.append(ii[inside] + dims[2] * (jj[inside] + dims[1] * kk[inside]))
                centre = dk == 0 and dj == 0 and di == 0
                vals.append(np.full(len(node), 26.0 if centre else -1.0, dtype=np.float32))
    num_rows = dims[0] * dims[1] * dims[2]
    return csr_from_edges(
        num_rows, np.concatenate(rows), np.concatenate(cols), np.concatenate(vals)
    )


def apply_stencil27(u: np.ndarray) -> np.ndarray:
    """26*u minus the sum of the (up to) 26 neighbours of every node of a 3D array (float64),
    computed on the grid with zero padding: the reference's own matrix-free product."""
    padded = np.pad(u, 1)
    box = np.zeros_like(u)
    nz, ny, nx = u.shape
    for dk in range(3):
        for dj in range(3):
            for di in range(3):
                box += padded[dk : dk + nz, dj : dj + ny, di : di + nx]
    return 27.0 * u - box


def conjugate_gradient(matvec, b: np.ndarray, iterations: int):
    """Plain CG from x = 0 for a fixed number of iterations; returns x and the residual norms."""
    x = np.zeros_like(b)
    r = b.copy()
    p = r.copy()
    rr = float(r @ r)
    norms = [np.sqrt(rr)]
    for i in range(iterations):
        Ap = matvec(p)
        curvature = float(p @ Ap)
        if curvature == 0 or not np.isfinite(curvature) or rr == 0:
            raise WorkloadError(
                f"conjugate gradient broke down in iteration {i + 1}: p.Ap = {curvature}, "
                f"r.r = {rr} (the matrix is symmetric positive definite, so the SpMV is wrong)"
            )
        alpha = rr / curvature
        x += alpha * p
        r -= alpha * Ap
        rr_new = float(r @ r)
        p = r + (rr_new / rr) * p
        rr = rr_new
        norms.append(np.sqrt(rr))
    return x, np.array(norms)


@register
class SparseMatVec(Workload):
    name = "spmv"
    title = "scalar-CSR SpMV in CG on a MiniFE 27-point stencil matrix"
    papers = ("sndp", "aimm")
    sizes = {
        "tiny": {"nx": 5, "iterations": 3, "block": 128},
        "small": {"nx": 34, "iterations": 10, "block": 128},  # a little above MiniFE's default 30^3
        "paper": {"nx": 100, "iterations": 20, "block": 128},  # a 100^3 MiniFE run, 1M rows
    }
    # Each iteration rounds p to float32 and sums 27 float32 products (relative error ~1e-7);
    # CG carries such errors along with a growth of a few times per iteration at this
    # conditioning. Measured x differs by < 2e-6 relative after 10 iterations; 1e-5 is safe.
    rtol = 1e-5
    atol = 1e-7

    def mesh(self) -> tuple[int, int, int]:
        n = self.params["nx"]
        return n, n, n

    def inputs(self, rng):
        nx, ny, nz = self.mesh()
        return {
            "matrix": stencil27_csr(nx, ny, nz),
            "b": rng.random((nx + 1) * (ny + 1) * (nz + 1)),  # right-hand side, float64 on host
        }

    def run(self, device: Device, inputs):
        A, block = inputs["matrix"], self.params["block"]
        n = A.num_rows
        rows = device.to_device(A.row_offsets, "row_offsets")
        cols = device.to_device(A.columns, "columns")
        vals = device.to_device(A.values, "values")
        d_p = device.zeros(n, np.float32, "p")
        d_Ap = device.zeros(n, np.float32, "Ap")

        def matvec(p: np.ndarray) -> np.ndarray:
            device.write(d_p, p.astype(np.float32))
            device.launch(
                "spmv_csr_scalar", -(-n // block), block, [rows, cols, vals, d_p, d_Ap, np.int32(n)]
            )
            return device.from_device(d_Ap, np.float32, n).astype(np.float64)

        x, norms = conjugate_gradient(matvec, inputs["b"], self.params["iterations"])
        return {"x": x, "residual_norms": norms}

    def reference(self, inputs):
        nx, ny, nz = self.mesh()
        shape = (nz + 1, ny + 1, nx + 1)

        def matvec(p: np.ndarray) -> np.ndarray:
            return apply_stencil27(p.reshape(shape)).reshape(-1)

        x, norms = conjugate_gradient(matvec, inputs["b"], self.params["iterations"])
        return {"x": x, "residual_norms": norms}
