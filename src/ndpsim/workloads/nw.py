"""NW: Needleman-Wunsch global sequence alignment scores, as Rodinia's nw organises the work
(MPU's suite, Table I: bioinformatics).

The (n+1) x (n+1) score matrix of two sequences of length n is cut into b x b blocks (b = 16,
Rodinia's BLOCK_SIZE). One CTA of b threads computes one block: it loads the block's
substitution scores and the row and column of scores bordering it into shared memory, sweeps
the block's anti-diagonals there (thread t owns row t) and writes the block back. The host
launches one kernel per anti-diagonal of blocks, first ``nw_upper_left`` for the upper-left
triangle, then ``nw_lower_right`` for the lower-right one: 2n/b - 1 launches, few CTAs each, and
a dependency chain through global memory from one launch to the next. Unlike Rodinia, whose
BLOCK_SIZE is a compile-time constant, b is the CTA size and the tiles are dynamic shared
memory, so ``--param block=B`` runs other block sizes (n must be a multiple of B).

MPU singles NW out, with HIST, for low bandwidth utilisation on the GPU: it is bound by memory
latency, not bandwidth.

As in Rodinia, the host fills the n x n matrix of substitution scores (``sub[i, j]`` is the table
entry of symbol i of the first sequence and symbol j of the second) and the gap borders of the
score matrix (-i * penalty), and the kernels read both. The substitution table is an assumption:
a symmetric 24 x 24 BLOSUM-like integer table drawn from the seed (diagonal 4 to 11, elsewhere -4
to 3, BLOSUM62's ranges), not BLOSUM62 itself; the sequences are uniform over its 24 symbols.

Sizes:
- tiny: n = 128 (8 x 8 blocks), to run in well under a second.
- small: n = 736, the shortest multiple of 16 whose score and substitution matrices (about
  2 x 2.1 MB) touch the 4 MiB the suite asks of MPU's workloads.
- paper: Rodinia's example, ``needle 2048 10``: 2048-long sequences, gap penalty 10.
"""

from __future__ import annotations

import numpy as np

from ndpsim.errors import WorkloadError
from ndpsim.workloads.base import Device, Workload, register


def substitution_table(rng: np.random.Generator, symbols: int = 24) -> np.ndarray:
    """A symmetric BLOSUM-like table: diagonal 4 to 11, off the diagonal -4 to 3."""
    upper = np.triu(rng.integers(-4, 4, size=(symbols, symbols)), 1)
    table = upper + upper.T
    table[np.diag_indices(symbols)] = rng.integers(4, 12, size=symbols)
    return table.astype(np.int32)


def initial_scores(n: int, penalty: int) -> np.ndarray:
    """The (n+1) x (n+1) score matrix before the kernels run: gap borders, zeros inside."""
    score = np.zeros((n + 1, n + 1), dtype=np.int32)
    border = -penalty * np.arange(n + 1, dtype=np.int32)
    score[0, :] = border
    score[:, 0] = border
    return score


@register
class NeedlemanWunsch(Workload):
    name = "nw"
    title = "Needleman-Wunsch alignment scores, blocked by anti-diagonals (Rodinia nw)"
    papers = ("mpu",)
    sizes = {
        "tiny": {"n": 128, "penalty": 10, "block": 16},
        "small": {"n": 736, "penalty": 10, "block": 16},
        "paper": {"n": 2048, "penalty": 10, "block": 16},  # Rodinia: needle 2048 10
    }
    # Scores are integers: the check is equality.

    def _check_params(self) -> None:
        n, block = self.params["n"], self.params["block"]
        if n % block:
            raise WorkloadError(
                f"nw: n={n} is not a multiple of block={block} (one CTA computes one "
                "block x block tile of the score matrix)"
            )

    def inputs(self, rng):
        self._check_params()
        n = self.params["n"]
        table = substitution_table(rng)
        first = rng.integers(0, len(table), size=n)
        second = rng.integers(0, len(table), size=n)
        return {"table": table, "first": first, "second": second}

    def run(self, device: Device, inputs):
        self._check_params()
        n, penalty, block = self.params["n"], self.params["penalty"], self.params["block"]
        sub = inputs["table"][np.ix_(inputs["first"], inputs["second"])]  # the host's part
        d_score = device.to_device(initial_scores(n, penalty), "score")
        d_sub = device.to_device(sub, "substitution")
        shared = 4 * ((block + 1) ** 2 + block**2)
        blocks = n // block
        for diagonal in range(blocks):  # upper-left triangle: diagonal d holds d + 1 blocks
            device.launch(
                "nw_upper_left", diagonal + 1, block,
                [d_score, d_sub, np.int32(n), np.int32(penalty), np.int32(diagonal)],
                shared_bytes=shared,
            )  # fmt: skip
        for diagonal in range(blocks, 2 * blocks - 1):  # lower-right triangle
            device.launch(
                "nw_lower_right", 2 * blocks - 1 - diagonal, block,
                [d_score, d_sub, np.int32(n), np.int32(penalty), np.int32(diagonal)],
                shared_bytes=shared,
            )  # fmt: skip
        score = device.from_device(d_score, np.int32, (n + 1) ** 2)
        return {"score": score.reshape(n + 1, n + 1)}

    def reference(self, inputs):
        n, penalty = self.params["n"], self.params["penalty"]
        sub = inputs["table"][np.ix_(inputs["first"], inputs["second"])].astype(np.int64)
        score = initial_scores(n, penalty).astype(np.int64)
        # Cell (i, j) needs only cells of the two anti-diagonals before i + j: one vector
        # step per anti-diagonal.
        for d in range(2, 2 * n + 1):
            i = np.arange(max(1, d - n), min(n, d - 1) + 1)
            j = d - i
            match = score[i - 1, j - 1] + sub[i - 1, j - 1]
            gap = np.maximum(score[i - 1, j], score[i, j - 1]) - penalty
            score[i, j] = np.maximum(match, gap)
        return {"score": score.astype(np.int32)}
