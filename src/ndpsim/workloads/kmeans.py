"""KMEANS: one k-means assignment pass (each point's nearest of 4 centroids, 4 float32 features),
as the MPU authors' benchmark runs it (MPU's Table I "KMEANS", machine learning, after Rodinia).

The kernel, the layout and the sizes follow the authors' public MPU-Sim benchmark (GitHub
GD06/mpu-sim_distribution, benchmark/kmeans: kmeans_kernel.cu, kmeans_sim.py and the GPU host
program kmeans_cuda.cu, which runs the same kernel and layout on the V100). Their driver launches
the kernel once, with no host loop and no centroid update, so this is one assignment pass; the
clusters and features are compile-time constants there and in kernels/kmeans.cu.

- Layout: the points are feature-major (feature f of point p at ``f * points + p``), as the
  authors store them, so a warp's load of one feature is 128 consecutive bytes; the centroids
  are feature-major too. ``run()`` transposes the logical (points, features) array before the
  copy, and ``reference()`` works on the logical one.
- Work distribution: a fixed grid (the authors' 512 CTAs of 128 threads) walks the points
  grid-stride, so CTA b reads chunks b, b + grid, ... of 128 points of each feature. On MPU
  (near-bank mapping: a core owns 512 consecutive bytes in turn) a grid that is a multiple of 128
  and a point count that is a multiple of 16,384 (each feature row 64 KiB-aligned) keep every
  chunk of every feature, and the CTA's memberships, in its own core's banks; the 512 CTAs of 4
  warps fill the cores' 16 warp slots in the first wave.
- Each CTA stages the 16 centroid values in shared memory before its points, as the authors do.

Ties and rounding: the kernel keeps the first centroid of least distance (strict ``<``), and so
does ``np.argmin``. The kernel sums each squared distance in float32 (nvcc fuses the
multiply-adds) while the reference uses float64, which could pick another centroid for a point
nearly equidistant from two. The inputs rule that out: a point whose two nearest centroids'
squared distances (in float64) differ by less than ``TIE_MARGIN`` is drawn again. In float32
each squared distance of values in [0, 1) is off by at most about 1.5e-6 (four rounded
differences, squares and sums, each within 2^-24 of at most 4), so 1e-5 leaves a margin of three
on the gap; about one point in 10^5 is redrawn.

The points and the centroids are uniform in [0, 1), as the authors draw them.

Sizes:
- tiny: 10,000 points on 16 CTAs of 128 threads, about five grid-stride passes with a partial
  last one; for the tests.
- small: 212,992 points (13 x 16,384), the suite's rule for MPU's workloads (docs/workloads.md):
  the smallest multiple of 16,384 points whose points (3.25 MiB) and memberships (0.81 MiB) touch
  4 MiB; the authors' grid of 512 CTAs.
- paper: 262,144 points, 512 CTAs of 128 threads: the defaults of the authors' driver
  (benchmark/kmeans/kmeans_sim.py, ``--num_points``, ``--num_blocks``, ``--num_threads``).
"""

from __future__ import annotations

import numpy as np

from ndpsim.workloads.base import Device, Workload, register

#: Fixed in kernels/kmeans.cu (KMEANS_CLUSTERS, KMEANS_FEATURES), as in the authors' benchmark.
CLUSTERS = 4
FEATURES = 4

#: A point's two nearest centroids are at least this far apart in squared distance (see above).
TIE_MARGIN = 1e-5


def squared_distances(points: np.ndarray, centroids: np.ndarray) -> np.ndarray:
    """(points, clusters) squared Euclidean distances in float64."""
    difference = points.astype(np.float64)[:, None, :] - centroids.astype(np.float64)[None]
    return (difference * difference).sum(axis=2)


@register
class KMeansAssign(Workload):
    name = "kmeans"
    title = "k-means assignment pass, 4 centroids in shared memory (MPU-Sim kmeans, after Rodinia)"
    papers = ("mpu",)
    sizes = {
        "tiny": {"points": 10_000, "grid": 16, "block": 128},
        "small": {"points": 212_992, "grid": 512, "block": 128},
        "paper": {"points": 262_144, "grid": 512, "block": 128},
    }
    # Memberships are integers: the check is equality.

    def inputs(self, rng):
        n = self.params["points"]
        if n * FEATURES > 2**31 - 1:
            raise ValueError(
                f"points={n}: the kernel indexes the {FEATURES} feature rows with 32-bit "
                f"integers, so points must be at most {(2**31 - 1) // FEATURES}"
            )
        points = rng.random((n, FEATURES), dtype=np.float32)
        centroids = rng.random((CLUSTERS, FEATURES), dtype=np.float32)
        while True:  # redraw the points nearly equidistant from their two nearest centroids
            nearest_two = np.sort(squared_distances(points, centroids), axis=1)[:, :2]
            tied = nearest_two[:, 1] - nearest_two[:, 0] < TIE_MARGIN
            if not tied.any():
                return {"points": points, "centroids": centroids}
            points[tied] = rng.random((int(tied.sum()), FEATURES), dtype=np.float32)

    def run(self, device: Device, inputs):
        n, grid, block = self.params["points"], self.params["grid"], self.params["block"]
        # The large arrays first, so that each starts on a 64 KiB boundary (core 0).
        d_points = device.to_device(inputs["points"].T, "points")  # feature-major
        d_membership = device.zeros(n, np.int32, "membership")
        d_centroids = device.to_device(inputs["centroids"].T, "centroids")  # feature-major
        device.launch("kmeans_assign", grid, block,
                      [d_points, d_centroids, d_membership, np.int32(n)])  # fmt: skip
        return {"membership": device.from_device(d_membership, np.int32, n)}

    def reference(self, inputs):
        distances = squared_distances(inputs["points"], inputs["centroids"])
        return {"membership": np.argmin(distances, axis=1).astype(np.int32)}
