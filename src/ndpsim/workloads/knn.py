"""KNN: k nearest neighbours, as Rodinia's nn (MPU's suite, Table I: machine learning), laid out
and split among CTAs as the MPU authors' own benchmark does it.

The kernel computes the Euclidean distance of every record's (latitude, longitude) pair of
float32 to the target point; the host copies the distances back and picks the k nearest, as
Rodinia's host does. The kernel streams 8 bytes in and 4 bytes out per record with a few
instructions between them: a purely bandwidth-bound kernel, one MPU finds sensitive to
row-buffer conflicts.

Layout and work split, after the authors' benchmark (GitHub GD06/mpu-sim_distribution,
benchmark/knn: knn_kernel.cu and the driver knn_sim.py, the source of the layout, the CTA, the
grid and the ``paper`` size). MPU's cores each own their DRAM banks and reach other cores' banks
over a slow mesh; with MPU's address mapping a core owns 512 consecutive bytes in turn. The
latitudes and the longitudes are two arrays of their own (``run()`` splits Rodinia's array of
pairs, whose 8-byte records would put a CTA's 128 records across two cores), and a fixed grid
strides over the records: CTA b handles the chunks b, b + grid, b + 2 grid, ... of ``block``
records, 512 bytes of each array for the authors' 128 threads, so with a grid that is a multiple
of 128 (the authors' 512) each CTA reads and writes only its own core's banks. One difference
from the authors' kernel, which stores squared distances: ours takes the square root, as
Rodinia's does (one instruction more per record; the neighbours are the same).

The records stand for Rodinia's hurricane records: latitudes uniform in [7, 70) and longitudes
in [0, 358) degrees, the ranges of Rodinia's record generator as we recall them (an assumption;
no data set is downloaded). The target and k are Rodinia's run command,
``nn filelist_4 -r 5 -lat 30 -lng 90`` (the authors' driver draws points uniform in [0, 1) and
targets (0.5, 0.5); the kernel does the same work either way).

Sizes:
- ``tiny``: 4,000 records on 8 CTAs, so the grid-stride loop runs a partial last round and a
  partial last chunk; for the tests.
- ``small``: 360,448 records (22 x 16,384), the suite's rule for MPU's workloads
  (docs/workloads.md): the fewest records whose three arrays (12 bytes a record) touch 4 MiB with
  every array a whole multiple of 64 KiB, so that each starts on core 0.
- ``paper``: 16,777,216 records on 512 CTAs of 128 threads, the defaults of the authors' driver
  (knn_sim.py) and their GPU run script (run.sh). (Rodinia's own input, some 43,000 records or
  0.5 MiB, would fit in a GPU's L2.)
"""

from __future__ import annotations

import numpy as np

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
        "tiny": {"records": 4_000, "k": 5, "lat": 30.0, "lng": 90.0, "block": 128, "grid": 8},
        "small": {"records": 360_448, "k": 5, "lat": 30.0, "lng": 90.0, "block": 128,
                  "grid": 512},
        "paper": {"records": 16_777_216, "k": 5, "lat": 30.0, "lng": 90.0, "block": 128,
                  "grid": 512},
    }  # fmt: skip
    # The kernel rounds each operation as float32 NumPy does (subtractions, two products kept
    # apart from the sum by __fmul_rn/__fadd_rn, a correctly rounded sqrt.rn): the distances
    # match bit for bit, so the nearest indices do too.
    rtol = 0.0
    atol = 0.0

    def _check(self) -> None:
        n, k = self.params["records"], self.params["k"]
        threads = self.params["grid"] * self.params["block"]
        if k > n:
            raise ValueError(f"k={k} is more than records={n}: there are not k neighbours")
        if n + threads >= 2**31:
            raise ValueError(
                f"the kernel's record index, a 32-bit integer, would pass 2^31 on its last "
                f"stride: records + grid x block must be below 2^31, got {n + threads:,}"
            )

    def inputs(self, rng):
        self._check()
        n = self.params["records"]
        records = np.empty((n, 2), dtype=np.float32)  # Rodinia's (latitude, longitude) pairs
        records[:, 0] = rng.uniform(7.0, 70.0, n)
        records[:, 1] = rng.uniform(0.0, 358.0, n)
        return {"records": records}

    def run(self, device: Device, inputs):
        self._check()
        records = inputs["records"]
        n, grid, block = len(records), self.params["grid"], self.params["block"]
        d_lats = device.to_device(records[:, 0], "latitudes")
        d_lngs = device.to_device(records[:, 1], "longitudes")
        d_distances = device.zeros(n, np.float32, "distances")
        device.launch(
            "knn_distances", grid, block,
            [d_lats, d_lngs, d_distances, np.int32(n), np.float32(self.params["lat"]),
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
