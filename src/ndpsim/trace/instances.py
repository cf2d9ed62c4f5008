"""The dynamic instances of a launch's offload blocks in its warp streams, and the lines each
touches.

A candidate is a static pc range ``[begin, end]`` that control enters only at ``begin`` and
leaves only after ``end`` (the offload passes guarantee it). So in a warp's stream an *instance*
is a maximal run of consecutive instructions inside the range, starting at ``begin``; a loop
inside the range keeps the run going (its back edge stays inside). Everything here is NumPy
over the whole launch, computed once before the run.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from ndpsim.trace.trace import MemorySpace
from ndpsim.trace.work import (
    COUNT_SHIFT,
    FIRST_SHIFT,
    MEM_SHIFT,
    PC_MASK,
    SPACE_SHIFT,
    TX_LINE_SHIFT,
    KernelWork,
)


class OffloadCandidate(Protocol):
    """What the timing model needs of a candidate block (:mod:`ndpsim.analysis.tom`,
    :mod:`ndpsim.analysis.sndp`); SNDP blocks also give each instruction's ``roles``."""

    begin: int
    end: int  # last pc, inclusive
    live_in: tuple[str, ...]
    live_out: tuple[str, ...]
    n_ld: int  # load and store instructions (static; an SNDP block reserves a buffer entry
    n_st: int  # for each)
    tag: int  # offload.SAVES_TX | offload.SAVES_RX
    threshold: int | None  # minimum trip count of a conditional candidate
    loop_header_pc: int | None  # pc whose executions count its loop's iterations


@dataclass
class Instances:
    """The dynamic instances of a launch's candidates, ordered by stream position."""

    start: np.ndarray  # int64: stream position of the first instruction
    end: np.ndarray  # int64: stream position after the last
    candidate: np.ndarray  # int64
    trips: np.ndarray  # int64: executions of the candidate's loop header (1 without a loop)
    warp: np.ndarray  # int64: warp of the launch

    def __len__(self) -> int:
        return len(self.start)


def find_instances(work: KernelWork, candidates: Sequence[OffloadCandidate]) -> Instances:
    """Every instance of every candidate in the launch's warp streams."""
    pcs = work.inst & PC_MASK
    n = len(pcs)
    warp_start = np.zeros(n, dtype=bool)
    warp_start[work.warp_first[work.warp_first < n]] = True
    parts = []
    for c, cand in enumerate(candidates):
        inside = (pcs >= cand.begin) & (pcs <= cand.end)
        if not inside.any():
            continue
        before = np.concatenate([[False], inside[:-1]]) & ~warp_start
        after = np.concatenate([inside[1:], [False]]) & ~np.concatenate([warp_start[1:], [True]])
        starts = np.flatnonzero(inside & ~before)
        ends = np.flatnonzero(inside & ~after) + 1
        bad = pcs[starts] != cand.begin
        if bad.any():
            pos = int(starts[np.argmax(bad)])
            raise ValueError(
                f"a warp enters candidate block [{cand.begin}, {cand.end}] at pc {pcs[pos]} "
                "instead of its first instruction: the offload pass let a branch into the block"
            )
        if cand.loop_header_pc is None:
            trips = np.ones(len(starts), dtype=np.int64)
        else:
            headers = np.concatenate([[0], np.cumsum(pcs == cand.loop_header_pc)])
            trips = headers[ends] - headers[starts]
        parts.append((starts, ends, np.full(len(starts), c, dtype=np.int64), trips))
    if not parts:
        empty = np.zeros(0, dtype=np.int64)
        return Instances(empty, empty, empty, empty, empty)
    start, end, cand, trips = (np.concatenate(x).astype(np.int64) for x in zip(*parts, strict=True))
    order = np.argsort(start, kind="stable")
    start, end, cand, trips = start[order], end[order], cand[order], trips[order]
    warp = np.searchsorted(work.warp_first, start, side="right") - 1
    return Instances(start, end, cand, trips, warp.astype(np.int64))


def instance_lines(work: KernelWork, instances: Instances):
    """The line transactions of each instance's global and local memory accesses, in stream
    order: the instance index of each, its virtual line, and the stream position of its memory
    instruction."""
    if not len(instances):
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty, empty
    lengths = instances.end - instances.start
    owner = np.repeat(np.arange(len(instances)), lengths)
    positions = np.arange(int(lengths.sum()), dtype=np.int64) - np.repeat(
        np.cumsum(lengths) - lengths, lengths
    ) + np.repeat(instances.start, lengths)  # fmt: skip
    ops = (work.inst[positions] >> MEM_SHIFT) - 1
    keep = ops >= 0
    owner, ops, positions = owner[keep], ops[keep], positions[keep]
    words = work.mem[ops]
    keep = ((words >> SPACE_SHIFT) & 7) != MemorySpace.SHARED
    owner, words, positions = owner[keep], words[keep], positions[keep]
    count = (words >> COUNT_SHIFT) & 63
    first = words >> FIRST_SHIFT
    tx_owner = np.repeat(owner, count)
    tx = np.arange(int(count.sum()), dtype=np.int64) - np.repeat(np.cumsum(count) - count, count)
    tx += np.repeat(first, count)
    return tx_owner, work.tx[tx] >> TX_LINE_SHIFT, np.repeat(positions, count)


def first_access(tx_owner: np.ndarray, values: np.ndarray, instances: int) -> np.ndarray:
    """Of each instance's first line transaction (they come in stream order), the value in
    ``values`` (its line, or its stream position), or -1 for an instance without one."""
    out = np.full(instances, -1, dtype=np.int64)
    if len(tx_owner):
        owners, first = np.unique(tx_owner, return_index=True)
        out[owners] = values[first]
    return out
