"""SNDP's Figure 5 (Kim et al., SC 2017, sec. 4.1): how much memory-network traffic the target
NSU choice costs.

SNDP runs an offload block on the NSU of the HMC its *first* memory instruction accesses (the
HMC with most of that instruction's accesses if it touches several), because choosing the
traffic-optimal NSU would need every address of the block before the block starts. The paper
assumes 8 HMCs and accesses mapped to them at random, and reports that the first-instruction
choice costs at most 15% more traffic than the optimal one, less as blocks grow.

The model here, a seeded Monte Carlo:

- A block makes ``N`` line accesses, each to an HMC drawn uniformly and independently (random
  4 KB page mapping, sec. 5). Its memory instructions touch ``lines_per_instruction`` lines
  each (1: a coalesced warp access of 4-byte words is one 128 B line); the first instruction's
  lines are the block's first ones.
- The data of every access moves between the HMC that owns it and the target NSU: a load's
  line is forwarded to the target, a store's data goes from the target to its owner. Traffic
  is the number of memory-network link crossings (hops on the network's deterministic routes)
  times the bytes of an access; with equal bytes per access the ratio of two policies is the
  ratio of their hop sums. The GPU-side packets (offload command, read-and-forward and
  write-address requests, acknowledgment) cross one GPU link whichever NSU is chosen and are
  left out: they do not depend on the policy.
- Policies: ``first`` (the paper's), ``optimal`` (the NSU minimizing the block's traffic, over
  all 8) and ``majority`` (the NSU holding most of the block's accesses: optimal when every
  remote access costs the same, as in a fully connected network).
- Ratios are of mean traffic over the blocks (a block's own ratio is undefined when all its
  accesses share one HMC). ``first`` and ``majority`` are the engine's ``target_stacks``
  (policies ``"first"`` and ``"optimal"``), so ties go to the tied HMC reached first.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ndpsim.errors import ConfigError
from ndpsim.experiments.paper import LineFigure, Rows, Table
from ndpsim.hw.network import build_network
from ndpsim.policy.offload.sndp import target_stacks
from ndpsim.seeding import generator

#: SNDP sec. 4.1: 8 HMCs; the first-instruction target costs "at most 15%" more traffic.
CUBES = 8
PAPER_MAX_RATIO = 1.15
POLICIES = ("first", "optimal", "majority")


@dataclass(frozen=True)
class TargetPoint:
    """Mean memory-network traffic per block, in bytes, of each policy for blocks of
    ``accesses`` line accesses."""

    accesses: int
    first_bytes: float
    optimal_bytes: float
    majority_bytes: float

    @property
    def ratio(self) -> float:
        """Traffic of the first-instruction target over the optimal target's (1 when neither
        moves anything)."""
        return self.first_bytes / self.optimal_bytes if self.optimal_bytes else 1.0

    @property
    def majority_ratio(self) -> float:
        return self.majority_bytes / self.optimal_bytes if self.optimal_bytes else 1.0

    def as_dict(self) -> dict[str, float]:
        return {"accesses": self.accesses, "first_bytes": self.first_bytes,
                "optimal_bytes": self.optimal_bytes, "majority_bytes": self.majority_bytes,
                "ratio": self.ratio, "majority_ratio": self.majority_ratio}  # fmt: skip


def hop_matrix(cubes: int = CUBES, topology: str = "hypercube") -> np.ndarray:
    """Link crossings between every pair of HMCs on the memory network's routes."""
    network = build_network(cubes, host=True, topology=topology)
    _, hops = network.route_table()
    return hops[:cubes, :cubes].copy()


def block_traffic(owners: np.ndarray, hops: np.ndarray,
                  lines_per_instruction: int = 1) -> dict[str, np.ndarray]:  # fmt: skip
    """Per block (a row of ``owners``: the HMC of each of its line accesses, in program
    order), the link crossings of every policy's target: {policy: crossings per block}."""
    if owners.ndim != 2 or owners.shape[1] < 1:
        raise ConfigError(f"owners must be blocks x accesses (at least 1), got {owners.shape}")
    if lines_per_instruction < 1:
        raise ConfigError(f"lines_per_instruction must be >= 1, got {lines_per_instruction}")
    blocks, accesses = owners.shape
    cubes = hops.shape[0]
    rows = np.arange(blocks)

    # the engine's own choice (ties included): the first instruction's lines share a position
    first_lines = min(lines_per_instruction, accesses)
    position = np.tile(np.maximum(np.arange(accesses) - first_lines + 1, 0), blocks)
    owner = np.repeat(rows, accesses)

    def target(policy: str) -> np.ndarray:
        return target_stacks(owner, position, owners.ravel(), blocks, cubes, policy)

    # traffic[b, t]: crossings of block b's accesses if its target is HMC t
    per_hmc = np.bincount((rows[:, None] * cubes + owners).ravel(), minlength=blocks * cubes)
    traffic = per_hmc.reshape(blocks, cubes) @ hops
    return {
        "first": traffic[rows, target("first")],
        "optimal": traffic.min(axis=1),
        "majority": traffic[rows, target("optimal")],
    }


def target_study(accesses: Iterable[int] = range(1, 33), *, samples: int = 50_000,
                 seed: int = 0, lines_per_instruction: int = 1, bytes_per_access: int = 128,
                 topology: str = "hypercube", cubes: int = CUBES,
                 ) -> list[TargetPoint]:  # fmt: skip
    """Figure 5: mean traffic of each target policy for blocks of each number of accesses.
    Each block size draws from its own generator (seeded by ``seed`` and the size), so a point
    does not depend on which other sizes are asked for."""
    if samples < 1:
        raise ConfigError(f"samples must be >= 1, got {samples}")
    hops = hop_matrix(cubes, topology)
    points = []
    for n in accesses:
        if n < 1:
            raise ConfigError(f"a block makes at least one access, got {n}")
        rng = generator(seed, f"sndp-target/accesses-{n}/lines-{lines_per_instruction}")
        owners = rng.integers(0, cubes, size=(samples, n))
        crossings = block_traffic(owners, hops, lines_per_instruction)
        mean = {p: float(crossings[p].mean()) * bytes_per_access for p in POLICIES}
        points.append(TargetPoint(n, mean["first"], mean["optimal"], mean["majority"]))
    return points


#: The studies ``ndpsim reproduce sndp`` reports: (name, lines per instruction, topology).
STUDIES = (
    ("hypercube", 1, "hypercube"),
    ("hypercube, 4 lines per instruction", 4, "hypercube"),
    ("fully connected", 1, "fully-connected"),
)


def figure5(seed: int = 0, samples: int = 50_000, max_accesses: int = 32) -> dict:
    """Every study of :data:`STUDIES` over 1..``max_accesses`` accesses per block, as the
    ``figure5`` section of the results document."""
    studies = {}
    for name, lines, topology in STUDIES:
        points = target_study(range(1, max_accesses + 1), samples=samples, seed=seed,
                              lines_per_instruction=lines, topology=topology)  # fmt: skip
        worst = max(points, key=lambda p: p.ratio)
        studies[name] = {
            "lines_per_instruction": lines,
            "topology": topology,
            "max_ratio": worst.ratio,
            "max_ratio_accesses": worst.accesses,
            "points": [p.as_dict() for p in points],
        }
    return {
        "model": "uniform random HMC per line access, 8 HMCs; traffic = link crossings x "
        "128 B between each access's HMC and the target; ratio of mean traffic",
        "seed": seed,
        "samples": samples,
        "paper_max_ratio": PAPER_MAX_RATIO,
        "studies": studies,
    }


#: The accesses-per-block rows Figure 5's printed table shows (its CSV file has every one).
PRINTED_ACCESSES = (1, 2, 3, 4, 5, 6, 8, 12, 16, 24, 32)


def tables(study: dict[str, Any]) -> list[Table]:
    """Figure 5 as a table: per number of accesses, each study's first-instruction traffic
    (and the hypercube's majority traffic) over the optimal target's, then the largest ratio
    of each study beside the paper's bound."""
    studies = study["studies"]
    columns = [*(f"first: {name}" for name in studies), "majority: hypercube"]
    by_accesses: dict[int, list[float | str | None]] = {}
    for s in studies.values():
        for p in s["points"]:
            by_accesses.setdefault(p["accesses"], []).append(p["ratio"])
    for p in studies["hypercube"]["points"]:
        by_accesses[p["accesses"]].append(p["majority_ratio"])
    rows: Rows = [(str(n), values) for n, values in by_accesses.items()]
    worst = ("max (ours)", [*(s["max_ratio"] for s in studies.values()), None])
    paper = ("max (paper)", [study["paper_max_ratio"]] * len(studies) + [None])
    printed = [r for r in rows if int(r[0]) in PRINTED_ACCESSES]
    title = ("Figure 5: memory-network traffic with the first-instruction (or majority) target "
             f"NSU over the optimal target's, by accesses per block ({study['samples']} blocks "
             "each)")  # fmt: skip
    return [Table(title, columns, [*printed, worst, paper], "accesses", "fig5_target_nsu",
                  [*rows, worst, paper])]  # fmt: skip


def figures(study: dict[str, Any]) -> list[LineFigure]:
    """Figure 5 as lines: first-instruction over optimal traffic against accesses per block."""
    lines = {f"first, {name}": ([p["accesses"] for p in s["points"]],
                                [p["ratio"] for p in s["points"]])
             for name, s in study["studies"].items()}  # fmt: skip
    return [LineFigure("fig5_target_nsu", "Figure 5: target NSU policy, memory-network traffic",
                       "memory accesses per offload block",
                       "traffic over the optimal target's (ratio)", lines,
                       (study["paper_max_ratio"], "paper: at most"))]  # fmt: skip


__all__ = ["CUBES", "PAPER_MAX_RATIO", "POLICIES", "PRINTED_ACCESSES", "STUDIES", "TargetPoint",
           "block_traffic", "figure5", "figures", "hop_matrix", "tables",
           "target_study"]  # fmt: skip
