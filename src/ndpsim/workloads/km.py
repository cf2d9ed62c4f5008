"""KM: k-means clustering, as Rodinia's kmeans in its global-memory variant. The points are
transposed to feature-major order once; each iteration, one thread per point scans every centre
and every feature (coalesced loads of the point, uniform loads of the centre) and writes the
nearest centre; the host counts changed memberships, recomputes the centres and iterates until
nothing changes or the iteration limit is hit. It is the suite's compute-dense, regular kernel
with a large read-only input re-read every iteration.

The inputs are Gaussian blobs around random centres in the unit cube (34 features and 5 clusters,
as Rodinia's kdd_cup runs); as Rodinia, the first k points are the initial centres.
"""

from __future__ import annotations

import numpy as np

from ndpsim.errors import WorkloadError
from ndpsim.workloads.base import Device, Workload, register


def new_centres(points: np.ndarray, membership: np.ndarray, centres: np.ndarray) -> np.ndarray:
    """The host's centre update: the mean of each cluster's points (float64 sums rounded to
    float32); a cluster left empty keeps its centre, as in Rodinia."""
    k, f = centres.shape
    counts = np.bincount(membership, minlength=k)
    sums = np.zeros((k, f), dtype=np.float64)
    np.add.at(sums, membership, points.astype(np.float64))
    out = centres.copy()
    filled = counts > 0
    out[filled] = (sums[filled] / counts[filled, None]).astype(np.float32)
    return out


@register
class KMeans(Workload):
    name = "km"
    title = "k-means clustering, global-memory variant (Rodinia kmeans)"
    papers = ("tom", "sndp", "aimm")
    sizes = {
        "tiny": {"points": 1_024, "features": 34, "clusters": 5, "max_iterations": 5},
        "small": {"points": 32_768, "features": 34, "clusters": 5, "max_iterations": 8},
        # Rodinia's kdd_cup input: 494,020 points of 34 features, 5 clusters
        "paper": {"points": 494_020, "features": 34, "clusters": 5, "max_iterations": 8},
    }
    block = 256
    # Memberships must match exactly and the centres come from them through the same host
    # update, so the centres match bit for bit too.
    rtol = 0.0
    atol = 0.0

    def inputs(self, rng):
        n, f, k = self.params["points"], self.params["features"], self.params["clusters"]
        truth = rng.random((k, f))
        label = rng.integers(0, k, size=n)
        points = truth[label] + rng.normal(0.0, 0.25, size=(n, f))
        return {"points": points.astype(np.float32)}

    def run(self, device: Device, inputs):
        points = inputs["points"]
        n, f = points.shape
        k = self.params["clusters"]
        grid = -(-n // self.block)
        d_points = device.to_device(points, "points")
        d_features = device.zeros(n * f, np.float32, "features")
        device.launch("km_invert_mapping", grid, self.block, [d_points, d_features, *_ints(n, f)])
        centres = points[:k].copy()
        d_centres = device.to_device(centres, "centres")
        d_membership = device.zeros(n, np.int32, "membership")
        membership = np.full(n, -1, dtype=np.int32)
        iterations = 0
        while iterations < self.params["max_iterations"]:
            device.write(d_centres, centres)
            device.launch(
                "km_assign", grid, self.block,
                [d_features, d_centres, d_membership, *_ints(n, k, f)],
            )  # fmt: skip
            iterations += 1
            assigned = device.from_device(d_membership, np.int32, n)
            if assigned.size and not 0 <= assigned.min() <= assigned.max() < k:
                raise WorkloadError(
                    f"km_assign put a point in cluster {int(assigned.min())} or "
                    f"{int(assigned.max())}; there are {k} clusters"
                )
            changed = int(np.count_nonzero(assigned != membership))
            membership = assigned
            centres = new_centres(points, membership, centres)
            if changed == 0:
                break
        return {
            "membership": membership,
            "centres": centres,
            "iterations": np.array([iterations], dtype=np.int32),
        }

    def reference(self, inputs):
        points = inputs["points"]
        k = self.params["clusters"]
        centres = points[:k].copy()
        membership = np.full(len(points), -1, dtype=np.int32)
        iterations = 0
        while iterations < self.params["max_iterations"]:
            # float32 squared distances, summed feature by feature as the kernel does
            dist = np.zeros((len(points), k), dtype=np.float32)
            for j in range(points.shape[1]):
                diff = points[:, j, None] - centres[None, :, j]
                dist = dist + diff * diff
            assigned = np.argmin(dist, axis=1).astype(np.int32)  # first minimum on a tie
            iterations += 1
            changed = np.any(assigned != membership)
            membership = assigned
            centres = new_centres(points, membership, centres)
            if not changed:
                break
        return {
            "membership": membership,
            "centres": centres,
            "iterations": np.array([iterations], dtype=np.int32),
        }


def _ints(*values: int) -> list[np.int32]:
    return [np.int32(v) for v in values]
