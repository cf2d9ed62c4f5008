"""KNN: k nearest neighbours, as Rodinia's nn (MPU's suite, Table I: machine learning).

One thread per record computes the Euclidean distance of its (latitude, longitude) pair of
float32 to the target point; the host copies the distances back and picks the k nearest, as
Rodinia's host does. The kernel streams 8 bytes in and 4 bytes out per record with a few
instructions between them: a purely bandwidth-bound kernel, one MPU finds sensitive to
row-buffer conflicts.

The records stand for Rodinia's hurricane records: latitudes uniform in [7, 70) and longitudes
in [0, 358) degrees, the ranges of Rodinia's record generator as we recall them (an assumption;
no data set is downloaded). The target and k are Rodinia's run command,
``nn filelist_4 -r 5 -lat 30 -lng 90``.

Sizes:
- tiny: 4,000 records.
- small: 350,000 records, the fewest whose records and distances (12 bytes each) touch the
  4 MiB the suite asks of MPU's workloads.
- paper: 42,764 records, the four hurricane files of Rodinia's ``filelist_4`` (the count is from
  memory of Rodinia 3.1's data, an assumption), 256 threads per CTA as Rodinia's default. It is
  smaller than ``small``: Rodinia's own input (0.5 MiB) fits in a GPU's L2.
"""

from __future__ import annotations

import numpy as np

from ndpsim.errors import WorkloadError
from ndpsim.workloads.base import Device, Workload, register


def k_nearest(distances: np.ndarray, k: int) -> np.ndarray:
    """The indices of the k smallest distances, nearest first, ties to the lower index (what
    Rodinia's host gets by k scans for the first minimum)."""
    return np.argsort(distances, kind="stable")[:k].astype(np.int32)


@register
class NearestNeighbours(Workload):
    name = "knn"
    title = "k nearest neighbours: distances on the GPU, top k on the host (Rodinia nn)"
    papers = ("mpu",)
    sizes = {
        "tiny": {"records": 4_000, "k": 5, "lat": 30.0, "lng": 90.0, "block": 256},
        "small": {"records": 350_000, "k": 5, "lat": 30.0, "lng": 90.0, "block": 256},
        "paper": {"records": 42_764, "k": 5, "lat": 30.0, "lng": 90.0, "block": 256},
    }
    # The kernel rounds each operation as float32 NumPy does (subtractions, two products kept
    # apart from the sum by __fmul_rn/__fadd_rn, a correctly rounded sqrt.rn): the distances
    # match bit for bit, so the nearest indices do too.
    rtol = 0.0
    atol = 0.0

    def inputs(self, rng):
        n = self.params["records"]
        if self.params["k"] > n:
            raise WorkloadError(f"knn: k={self.params['k']} is more than records={n}")
        records = np.empty((n, 2), dtype=np.float32)
        records[:, 0] = rng.uniform(7.0, 70.0, n)
        records[:, 1] = rng.uniform(0.0, 358.0, n)
        return {"records": records}

    def run(self, device: Device, inputs):
        records = inputs["records"]
        n, block = len(records), self.params["block"]
        d_records = device.to_device(records, "records")
        d_distances = device.zeros(n, np.float32, "distances")
        device.launch(
            "knn_distances", -(-n // block), block,
            [d_records, d_distances, np.int32(n), np.float32(self.params["lat"]),
             np.float32(self.params["lng"])],
        )  # fmt: skip
        distances = device.from_device(d_distances, np.float32, n)
        return {"distances": distances, "nearest": k_nearest(distances, self.params["k"])}

    def reference(self, inputs):
        records = inputs["records"]
        dlat = np.float32(self.params["lat"]) - records[:, 0]
        dlng = np.float32(self.params["lng"]) - records[:, 1]
        distances = np.sqrt(dlat * dlat + dlng * dlng)
        return {"distances": distances, "nearest": k_nearest(distances, self.params["k"])}
