"""STCL: streamcluster's facility-location local search (Rodinia streamcluster, pgain). For each
candidate point the device computes every point's weighted distance to it (a dim-long loop of
coalesced loads, dimension-major coordinates), whether the point would switch, and per-centre
partial costs of closing; the host reduces them, decides whether opening the candidate (and
closing the centres it makes redundant) lowers the total cost, and applies the reassignments
as Rodinia's host code does. It is in the suite as a streaming distance kernel with an indirect
per-centre scatter and a large per-call read-back.

The points are Gaussian blobs with integer weights (as the weighted centres streamcluster
re-clusters); a few random points are the opening centres and every point starts assigned to
the nearest one.
"""

from __future__ import annotations

import numpy as np

from ndpsim.workloads.base import Device, Workload, register

POINT = np.dtype([("weight", "<f4"), ("assign", "<i4"), ("cost", "<f4")])


def squared_distances(coords: np.ndarray, x: int, which=slice(None)) -> np.ndarray:
    """float32 squared distances from points ``which`` to point ``x``, summed dimension by
    dimension with one rounding per operation (the order of the kernel and of Rodinia's host)."""
    centre = coords[:, x]
    rows = coords[:, which]
    dist = np.zeros(rows.shape[1], dtype=np.float32)
    for d in range(coords.shape[0]):
        diff = rows[d] - centre[d]
        dist = dist + diff * diff
    return dist


@register
class StreamCluster(Workload):
    name = "stcl"
    title = "streamcluster gain of opening a centre (Rodinia streamcluster pgain)"
    papers = ("sndp",)
    sizes = {
        "tiny": {"points": 1_024, "dim": 16, "blobs": 8, "centres": 4, "candidates": 6},
        "small": {"points": 65_536, "dim": 32, "blobs": 16, "centres": 6, "candidates": 20},
        # Rodinia's run: 65,536 points of 256 dimensions
        "paper": {"points": 65_536, "dim": 256, "blobs": 20, "centres": 10, "candidates": 20},
    }
    block = 256
    # Decisions and costs must match exactly (the distances are reproduced bit for bit); the
    # gains are float64 sums of the same float32 terms in another order.
    rtol = 1e-9
    atol = 1e-9

    def inputs(self, rng):
        n, dim = self.params["points"], self.params["dim"]
        truth = rng.random((self.params["blobs"], dim))
        label = rng.integers(0, len(truth), size=n)
        points = truth[label] + rng.normal(0.0, 0.15, size=(n, dim))
        coords = np.ascontiguousarray(points.T, dtype=np.float32)  # dimension-major
        weight = rng.integers(1, 5, size=n).astype(np.float32)
        order = rng.permutation(n)
        centres = np.sort(order[: self.params["centres"]])
        candidates = order[len(centres) : len(centres) + self.params["candidates"]]
        # every point starts at its nearest opening centre (the first one on a tie)
        dists = np.stack([squared_distances(coords, c) for c in centres])
        nearest = np.argmin(dists, axis=0)
        cost = dists[nearest, np.arange(n)] * weight
        # the facility cost: a tenth of the opening solution's cost per centre
        z = float(np.sum(cost, dtype=np.float64)) / (10 * len(centres))
        return {
            "coords": coords,
            "weight": weight,
            "assign": centres[nearest].astype(np.int32),
            "cost": cost.astype(np.float32),
            "centres": centres.astype(np.int32),
            "candidates": candidates.astype(np.int32),
            "z": z,
        }

    def run(self, device: Device, inputs):
        coords, z = inputs["coords"], inputs["z"]
        dim, n = coords.shape
        points = np.zeros(n, dtype=POINT)
        points["weight"] = inputs["weight"]
        points["assign"] = inputs["assign"]
        points["cost"] = inputs["cost"]
        is_center = np.zeros(n, dtype=bool)
        is_center[inputs["centres"]] = True
        most = len(inputs["centres"]) + len(inputs["candidates"])

        d_coords = device.to_device(coords, "coords")
        d_points = device.to_device(points, "points")
        d_table = device.zeros(n, np.int32, "center_table")
        d_work = device.zeros(n * (most + 1), np.float32, "work_mem")
        d_switch = device.zeros(n, np.uint8, "switch_membership")
        grid = -(-n // self.block)
        gains = []
        for x in inputs["candidates"]:
            x = int(x)
            centres = np.flatnonzero(is_center)
            k = len(centres)
            table = np.zeros(n, dtype=np.int32)
            table[centres] = np.arange(k, dtype=np.int32)
            device.write(d_points, points)
            device.write(d_table, table)
            device.write(d_work, np.zeros(n * (k + 1), dtype=np.float32))
            device.write(d_switch, np.zeros(n, dtype=np.uint8))
            device.launch(
                "stcl_pgain", grid, self.block,
                [d_coords, d_points, d_table, d_work, d_switch,
                 np.int32(x), np.int32(n), np.int32(dim), np.int32(k)],
            )  # fmt: skip
            work = device.from_device(d_work, np.float32, n * (k + 1)).reshape(n, k + 1)
            switch = device.from_device(d_switch, np.uint8, n).astype(bool)

            # Host, as Rodinia's: close every centre whose points would rather move to x
            # (its partial costs, plus the facility cost saved, come out positive) ...
            lower = z + np.sum(work[:, :k], axis=0, dtype=np.float64)
            close = lower > 0
            cost_of_opening = z + np.sum(work[:, k], dtype=np.float64) - np.sum(lower[close])
            # ... and open x if that lowers the total cost.
            if cost_of_opening < 0:
                move = switch | close[table[points["assign"]]]
                moved = np.flatnonzero(move)
                points["cost"][moved] = (
                    squared_distances(coords, x, moved) * points["weight"][moved]
                )
                points["assign"][moved] = x
                is_center[centres[close]] = False
                is_center[x] = True
                gains.append(-cost_of_opening)
            else:
                gains.append(0.0)
        return {
            "assign": points["assign"].copy(),
            "cost": points["cost"].copy(),
            "is_center": is_center.astype(np.uint8),
            "gains": np.array(gains),
        }

    def reference(self, inputs):
        coords, z = inputs["coords"], inputs["z"]
        weight = inputs["weight"]
        assign = inputs["assign"].copy()
        cost = inputs["cost"].copy()
        is_center = np.zeros(len(cost), dtype=bool)
        is_center[inputs["centres"]] = True
        gains = []
        for x in inputs["candidates"]:
            x_cost = squared_distances(coords, int(x)) * weight
            switch = x_cost < cost
            centres = np.flatnonzero(is_center)
            slot = np.searchsorted(centres, assign)  # each point's centre, 0..k-1
            stay = ~switch
            loss = (cost[stay] - x_cost[stay]).astype(np.float64)
            lower = z + np.bincount(slot[stay], weights=loss, minlength=len(centres))
            close = lower > 0
            saving = (x_cost[switch] - cost[switch]).astype(np.float64).sum()
            total = z + saving - lower[close].sum()
            if total < 0:
                move = switch | close[slot]
                cost[move] = x_cost[move]
                assign[move] = x
                is_center[centres[close]] = False
                is_center[x] = True
                gains.append(-total)
            else:
                gains.append(0.0)
        return {
            "assign": assign,
            "cost": cost,
            "is_center": is_center.astype(np.uint8),
            "gains": np.array(gains),
        }
