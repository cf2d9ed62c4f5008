"""LIB: LIBOR market model Monte Carlo (GPGPU-Sim's LIBOR benchmark, after Mike Giles), one
thread per path: evolve the forward rates over Nmat steps, price a swaption portfolio and get its
sensitivities by an adjoint sweep. It is in the suite for TOM, whose compiler analysis picks the
portfolio's loops whose trip count is known at loop entry (Figure 4 of the TOM paper); the
per-path arrays are in global memory, coalesced across a warp."""

from __future__ import annotations

import numpy as np

from ndpsim.workloads.base import Device, Workload, register

#: Giles' portfolio: 15 swaptions, maturities in periods after Nmat (for N - Nmat = 40) and rates.
MATURITIES = (4, 4, 4, 8, 8, 8, 20, 20, 20, 28, 28, 28, 40, 40, 40)
SWAPRATES = (0.045, 0.05, 0.055) * 5
DELTA = 0.25  # period length in years
L0 = 0.051  # initial forward rate
LAMBDA = 0.2  # volatility of every forward rate
KINK_MARGIN = 1e-4  # paths with a swap value this close to 0 are redrawn (float32 error ~1e-6)


def evolve_rates(z: np.ndarray, lam: np.ndarray, n_rates: int, n_mat: int) -> np.ndarray:
    """Forward rates L[n, path] after Nmat steps of the LIBOR market model, in float64."""
    z = z.astype(np.float64)
    lam = lam.astype(np.float64)
    L = np.full((n_rates, z.shape[1]), L0, dtype=np.float64)
    for n in range(n_mat):
        sqez = np.sqrt(DELTA) * z[n]
        drift = np.zeros(z.shape[1])
        for i in range(n + 1, n_rates):
            con1 = DELTA * lam[i - n - 1]
            drift += con1 * L[i] / (1.0 + DELTA * L[i])
            L[i] *= np.exp(con1 * drift + lam[i - n - 1] * (sqez - 0.5 * con1))
    return L


def discounts_and_annuities(L: np.ndarray, n_mat: int) -> tuple[np.ndarray, np.ndarray]:
    """B[k] = prod_{j<=k} 1/(1 + delta*L[Nmat+j]) and S[k] = delta * sum_{j<=k} B[j]."""
    B = np.cumprod(1.0 / (1.0 + DELTA * L[n_mat:]), axis=0)
    return B, DELTA * np.cumsum(B, axis=0)


@register
class LiborMonteCarlo(Workload):
    name = "lib"
    title = "LIBOR market model Monte Carlo with adjoint greeks (GPGPU-Sim LIB)"
    papers = ("tom",)
    sizes = {
        "tiny": {"paths": 200, "N": 16, "Nmat": 8, "block": 64},
        "small": {"paths": 6144, "N": 40, "Nmat": 20, "block": 64},
        # the benchmark's own problem: 80 forward rates, 40 time steps, 4096 paths
        "paper": {"paths": 4096, "N": 80, "Nmat": 40, "block": 64},
    }
    # float32 kernel vs float64 reference: each rate goes through up to Nmat multiplicative
    # expf updates whose drift sums up to N terms, and the payoffs 100*(1 - B - r*S) cancel about
    # half of B; measured errors stay below 1e-4 relative plus 5e-5 absolute (v and L_b are
    # O(1..300)), so 1e-4 relative plus 1e-3 absolute leaves a 20x margin.
    rtol = 1e-4
    atol = 1e-3

    def maturities(self) -> np.ndarray:
        """Giles' maturities scaled to the periods after Nmat (unchanged at the paper size)."""
        span = self.params["N"] - self.params["Nmat"]
        return np.array([max(1, (m * span) // 40) for m in MATURITIES], dtype=np.int32)

    def inputs(self, rng):
        p = self.params
        lam = np.full(p["N"], LAMBDA, dtype=np.float32)
        maturities = self.maturities()
        rates = np.array(SWAPRATES, dtype=np.float32)
        z = rng.standard_normal((p["Nmat"], p["paths"]), dtype=np.float32)
        # A payoff is not differentiable where a swap value crosses 0: a path within rounding
        # of that kink could take the other branch in float32 and change L_b by O(10), so such
        # paths are redrawn (a few percent of them) to keep the check well posed.
        while True:
            L = evolve_rates(z, lam, p["N"], p["Nmat"])
            B, S = discounts_and_annuities(L, p["Nmat"])
            swapvals = np.stack(
                [
                    B[m - 1] + float(r) * S[m - 1] - 1.0
                    for m, r in zip(maturities, rates, strict=True)
                ]
            )
            near_kink = (np.abs(swapvals) < KINK_MARGIN).any(axis=0)
            if not near_kink.any():
                break
            z[:, near_kink] = rng.standard_normal(
                (p["Nmat"], int(near_kink.sum())), dtype=np.float32
            )
        return {"z": z, "lambda": lam, "maturities": maturities, "swaprates": rates}

    def run(self, device: Device, inputs):
        p = self.params
        paths, n_rates, n_mat, block = p["paths"], p["N"], p["Nmat"], p["block"]
        z = device.to_device(inputs["z"], "z")
        lam = device.to_device(inputs["lambda"], "lambda")
        mats = device.to_device(inputs["maturities"], "maturities")
        rates = device.to_device(inputs["swaprates"], "swaprates")
        per_path = {
            key: device.zeros(n_rates * paths, np.float32, key)
            for key in ("L", "L_b", "B", "S", "B_b", "S_b")
        }
        v = device.zeros(paths, np.float32, "v")
        device.launch(
            "lib_path_portfolio", -(-paths // block), block,
            [z, lam, mats, rates, *per_path.values(), v,
             np.int32(n_rates), np.int32(n_mat), np.int32(len(inputs["maturities"])),
             np.float32(DELTA), np.float32(L0), np.int32(paths)],
        )  # fmt: skip
        return {
            "v": device.from_device(v, np.float32, paths),
            "L_b": device.from_device(per_path["L_b"], np.float32, n_rates * paths).reshape(
                n_rates, paths
            ),
        }

    def reference(self, inputs):
        p = self.params
        n_rates, n_mat = p["N"], p["Nmat"]
        L = evolve_rates(inputs["z"], inputs["lambda"], n_rates, n_mat)
        B, S = discounts_and_annuities(L, n_mat)
        # Portfolio value and its gradient in closed form (forward mode, not the kernel's
        # backward sweep): B[m] = prod_{j<=m} d_j, S[m] = delta * sum_{j<=m} B[j], so
        # d payoff / d L_n = 100 * delta * d_n * (B[m] + r * (S[m] - S[n-1])) for n <= m.
        d = 1.0 / (1.0 + DELTA * L)
        S_before = S - DELTA * B
        discount = np.prod(d[:n_mat], axis=0)
        value = np.zeros(p["paths"])
        grad = np.zeros((n_rates - n_mat, p["paths"]))
        for maturity, rate in zip(inputs["maturities"], inputs["swaprates"], strict=True):
            m = maturity - 1
            rate = float(rate)
            swapval = B[m] + rate * S[m] - 1.0
            itm = swapval < 0.0
            value += np.where(itm, -100.0 * swapval, 0.0)
            term = (
                100.0
                * DELTA
                * d[n_mat : n_mat + m + 1]
                * (B[m] + rate * (S[m] - S_before[: m + 1]))
            )
            grad[: m + 1] += np.where(itm, term, 0.0)
        v = discount * value
        L_b = np.empty_like(L)
        L_b[:n_mat] = -v * DELTA * d[:n_mat]
        L_b[n_mat:] = discount * grad
        return {"v": v, "L_b": L_b}
