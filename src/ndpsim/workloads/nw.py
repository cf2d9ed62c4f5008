"""NW: Needleman-Wunsch alignment scores of a batch of independent 32 x 32 tiles, one CTA of 32
threads per tile sweeping its anti-diagonals in shared memory (MPU's Table I, bioinformatics,
after Rodinia's nw).

The kernel, the layout, the inputs and the sizes follow the MPU authors' public MPU-Sim benchmark
(GitHub GD06/mpu-sim_distribution, benchmark/nw: nw_kernel.cu, nw_sim.py and the GPU host
program nw_cuda.cu, which runs the same kernel and layout on the V100). Where it differs from
Rodinia's nw, which computes one large score matrix block by block with one launch per
anti-diagonal of blocks, the authors' benchmark aligns ``pairs`` independent tiles in one launch:

- Each pair is one 32 x 32 tile (Rodinia's in-block wave, at the authors' SEQ_LEN 32) with its
  own top border row, left border column and substitution scores, all inputs; there is no
  dependency between tiles and no host loop.
- A fixed grid of CTAs of 32 threads (one warp; the authors' 2048) walks the pairs grid-stride;
  thread t owns tile column t + 1 and the CTA sweeps the tile's 63 anti-diagonals with a barrier
  after each, the borders and the substitution scores staged in shared memory first.
- Layout: the borders are pair-major (32 ints of pair q at ``q * 32``); the substitution scores
  and the output scores are row-interleaved over the pairs, row y of pair q at
  ``(y * pairs + q) * 32``, as the authors store them, so one row is a warp's 128-byte access.
  ``run()`` lays the logical (pairs, 32, 32) arrays out so and back; ``reference()`` works on
  the logical ones.
- Locality on MPU (near-bank mapping: a core owns 512 consecutive bytes in turn, 4 pairs' rows;
  with ``pairs`` a multiple of 512 each pair's rows are 64 KiB apart, all in one core's banks):
  the authors' driver places CTA i on core (i // 4) % 128, the core holding pair i. ndpsim's MPU
  hands CTAs out breadth-first (CTA b on core b % 128 in the first wave), so the kernel renumbers
  the pairs instead: within each complete group of 512, slot 128 a + c computes pair 4 c + a,
  whose rows core c holds (kernels/nw.cu, ``stored_pair``). That keeps the first wave's CTAs on
  their own core's banks; a warp's NBU is its warp index modulo 4, which for one-warp CTAs
  matches the row's NBU for a quarter of the pairs only, so most accesses go split but local.

Inputs as the authors draw them: every border value and substitution score is
``int((u - 0.5) * 10)`` for u uniform in [0, 1) (integers -4 to 4, truncated toward zero), and
the gap penalty is 1.

Sizes:
- tiny: 600 pairs on 64 CTAs: one complete group of 512 (renumbered) and a partial one of 88
  (in order), 9 or 10 pairs per CTA; 19,200 threads' worth of cells; for the tests.
- small: 512 pairs on 256 CTAs: the suite's rule for MPU's workloads (docs/workloads.md), the
  smallest multiple of 512 pairs (so every array is a multiple of 64 KiB) whose 2 MiB of
  substitution scores, 2 MiB of output and 128 KiB of borders touch 4 MiB; 2 pairs per CTA as at
  the paper size, every CTA in the first wave.
- paper: 4,096 pairs on 2,048 CTAs of 32 threads, penalty 1: the defaults of the authors' driver
  (benchmark/nw/nw_sim.py, ``--num_pairs``, ``--num_blocks``, ``--num_threads``; SEQ_LEN 32 in
  benchmark/nw/cta_config.h). On ndpsim's MPU only 7 of these CTAs fit a core (their 8,452 bytes
  of shared memory each, 64 KiB a core), so the CTAs after the first 896 start wherever a core
  frees up and mostly read other cores' banks.
"""

from __future__ import annotations

import numpy as np

from ndpsim.workloads.base import Device, Workload, register

LENGTH = 32  # NW_LENGTH in kernels/nw.cu: the tile's side and the CTA's threads


def authors_integers(rng: np.random.Generator, shape) -> np.ndarray:
    """``int((u - 0.5) * 10)`` for uniform u: the benchmark's integers, -4 to 4."""
    return np.trunc((rng.random(shape) - 0.5) * 10.0).astype(np.int32)


@register
class NeedlemanWunsch(Workload):
    name = "nw"
    title = "Needleman-Wunsch scores of a batch of 32 x 32 tiles, one CTA each (MPU-Sim nw)"
    papers = ("mpu",)
    sizes = {
        "tiny": {"pairs": 600, "grid": 64, "penalty": 1},
        "small": {"pairs": 512, "grid": 256, "penalty": 1},
        "paper": {"pairs": 4096, "grid": 2048, "penalty": 1},
    }
    # Scores are integers: the check is equality.

    def inputs(self, rng):
        pairs = self.params["pairs"]
        if pairs * LENGTH * LENGTH > 2**31 - 1:
            raise ValueError(
                f"pairs={pairs}: the kernel indexes the {LENGTH} x {LENGTH} tiles with 32-bit "
                f"integers, so pairs must be at most {(2**31 - 1) // (LENGTH * LENGTH)}"
            )
        return {
            "top": authors_integers(rng, (pairs, LENGTH)),
            "left": authors_integers(rng, (pairs, LENGTH)),
            "substitution": authors_integers(rng, (pairs, LENGTH, LENGTH)),  # [pair, y, x]
        }

    def run(self, device: Device, inputs):
        pairs, grid, penalty = self.params["pairs"], self.params["grid"], self.params["penalty"]
        # Row y of pair q at (y * pairs + q) * 32: the logical [pair, y, x] as [y, pair, x].
        d_substitution = device.to_device(inputs["substitution"].transpose(1, 0, 2), "substitution")
        d_scores = device.zeros(pairs * LENGTH * LENGTH, np.int32, "scores")
        d_top = device.to_device(inputs["top"], "top")
        d_left = device.to_device(inputs["left"], "left")
        device.launch("nw_tiles", grid, LENGTH,
                      [d_top, d_left, d_substitution, d_scores, np.int32(pairs),
                       np.int32(penalty)])  # fmt: skip
        scores = device.from_device(d_scores, np.int32, pairs * LENGTH * LENGTH)
        return {"scores": scores.reshape(LENGTH, pairs, LENGTH).transpose(1, 0, 2)}

    def reference(self, inputs):
        penalty = self.params["penalty"]
        pairs = len(inputs["top"])
        substitution = inputs["substitution"].astype(np.int64)
        cell = np.zeros((pairs, LENGTH + 1, LENGTH + 1), dtype=np.int64)
        cell[:, 0, 1:] = inputs["top"]
        cell[:, 1:, 0] = inputs["left"]
        # Cell (y, x) needs only cells of the two anti-diagonals before y + x: one vector step
        # per anti-diagonal, over every pair at once.
        for d in range(2, 2 * LENGTH + 1):
            y = np.arange(max(1, d - LENGTH), min(LENGTH, d - 1) + 1)
            x = d - y
            diagonal = cell[:, y - 1, x - 1] + substitution[:, y - 1, x - 1]
            gap = np.maximum(cell[:, y, x - 1], cell[:, y - 1, x]) - penalty
            cell[:, y, x] = np.maximum(diagonal, gap)
        return {"scores": cell[:, 1:, 1:].astype(np.int32)}
