"""From a launch's warp streams and a kernel's offload candidates to what the timing model
offloads: the dynamic instances of each candidate block and where each would run.

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

from ndpsim.hw.gpu import offload as ofl
from ndpsim.hw.gpu.work import (
    COUNT_SHIFT,
    FIRST_SHIFT,
    MEM_SHIFT,
    PC_MASK,
    SPACE_SHIFT,
    TX_LINE_SHIFT,
    KernelWork,
    csr,
)
from ndpsim.trace.trace import MemorySpace


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


def target_stacks(tx_owner: np.ndarray, tx_position: np.ndarray, tx_stack: np.ndarray,
                  instances: int, stacks: int, policy: str) -> np.ndarray:  # fmt: skip
    """SNDP's target NSU of each instance (sec. 4.1): the stack its first memory instruction
    touches most (``"first"``), or the stack holding most of all its accesses (``"optimal"``,
    Figure 5's comparison); -1 for an instance without accesses. The transactions come in
    stream order (:func:`instance_lines`), and a tie goes to the tied stack the block touches
    first: breaking ties towards the lower-numbered stack would send an unfair share of the
    blocks to the first HMCs (of the blocks whose three accesses fall in three different random
    HMCs of eight, HMC 0 would get 3/8 instead of 1/8)."""
    out = np.full(instances, -1, dtype=np.int64)
    if not len(tx_owner):
        return out
    keep = np.ones(len(tx_owner), dtype=bool)
    if policy == "first":
        owners, first = np.unique(tx_owner, return_index=True)
        first_position = np.full(instances, -1, dtype=np.int64)
        first_position[owners] = tx_position[first]
        keep = tx_position == first_position[tx_owner]
    cell = tx_owner[keep] * stacks + tx_stack[keep]
    n = len(cell)
    counts = np.bincount(cell, minlength=instances * stacks)
    cells, first_seen = np.unique(cell, return_index=True)
    earliest = np.full(instances * stacks, n, dtype=np.int64)
    earliest[cells] = first_seen
    # most accesses first, then the earliest first access
    score = (counts * (n + 1) + (n - earliest)).reshape(instances, stacks)
    touched = counts.reshape(instances, stacks).sum(axis=1) > 0
    out[touched] = score[touched].argmax(axis=1)
    return out


def build_offload_state(work: KernelWork, candidates: Sequence[OffloadCandidate],
                        instances: Instances, dest: np.ndarray, registers: dict[str, int],
                        params: np.ndarray, tx_link: np.ndarray, rx_link: np.ndarray,
                        sms: int, credits: Sequence[int] = (0, 0, 0), seed: int = 0,
                        observe: int = 0, probe: np.ndarray | None = None,
                        ) -> ofl.OffloadState:  # fmt: skip
    """The compiled model's view of one launch: instances with their destination stacks
    (``dest``, -1 when an instance touches no memory) and the stream position of their first
    memory access (``probe``, where TOM learns the destination), candidates with their
    registers in the timing model's numbering. For SNDP (partitioned execution) also each block
    instruction's role, the NSU buffers' ``credits`` per stack (command, read data, write
    address) and the ``seed`` of the random offload-ratio draws. ``observe`` > 0 starts the
    launch in TOM's learning phase, which still wants that many instances."""
    cubes = int(params[ofl.O_CUBES])
    partitioned = params[ofl.O_MODE] == ofl.MODE_SNDP
    pos_instance = np.full(len(work.inst), -1, dtype=np.int64)
    pos_instance[instances.start] = np.arange(len(instances))
    live_in = csr([[registers[r] for r in c.live_in] for c in candidates])
    live_out = csr([[registers[r] for r in c.live_out] for c in candidates])
    n = len(instances)
    empty = np.zeros(0, dtype=np.int64)
    pc_role = empty
    if partitioned:
        pc_role = np.zeros(len(work.pc_class), dtype=np.int64)
        for c in candidates:
            pc_role[c.begin : c.end + 1] = [ofl.ROLE_CODES[r] for r in c.roles]
    credit_table = np.tile(np.asarray(credits, dtype=np.int64), (cubes, 1))
    control = np.zeros(ofl.CONTROL_FIELDS, dtype=np.int64)
    control[ofl.C_RATIO_PERMILLE] = 1000
    # xorshift needs a nonzero state; splitmix-like scrambling spreads nearby seeds apart
    control[ofl.C_RANDOM] = (seed * 0x9E3779B97F4A7C15 + 0x2545F4914F6CDD1D) % (1 << 63) or 1
    control[ofl.C_LEARNING] = int(observe > 0)
    control[ofl.C_LEARN_LEFT] = observe
    return ofl.OffloadState(
        params=params,
        pos_instance=pos_instance,
        inst_start=instances.start,
        inst_end=instances.end,
        inst_candidate=instances.candidate,
        inst_dest=dest.astype(np.int64),
        inst_trips=instances.trips,
        inst_probe=np.full(n, -1, dtype=np.int64) if probe is None else probe.astype(np.int64),
        inst_next=np.full(n, -1, dtype=np.int64),
        inst_home=np.full(n, -1, dtype=np.int64),
        inst_runner=np.full(n, -1, dtype=np.int64),
        inst_acked=np.zeros(n, dtype=np.bool_),
        cand_threshold=np.array([c.threshold or 0 for c in candidates], dtype=np.int64),
        cand_tag=np.array([c.tag for c in candidates], dtype=np.int64),
        cand_live_in_first=live_in[0],
        cand_live_in=live_in[1],
        cand_live_out_first=live_out[0],
        cand_live_out=live_out[1],
        cand_loads=np.array([c.n_ld for c in candidates], dtype=np.int64),
        cand_stores=np.array([c.n_st for c in candidates], dtype=np.int64),
        cand_offloaded=np.zeros(len(candidates), dtype=np.int64),
        cand_rdf=np.zeros(len(candidates), dtype=np.int64),
        cand_rdf_hits=np.zeros(len(candidates), dtype=np.int64),
        pc_role=pc_role,
        pos_arrived=np.zeros(len(work.inst) if partitioned else 0, dtype=np.int64),
        credits=credit_table,
        credits_low=credit_table.copy(),
        credit_head=np.full(cubes, -1, dtype=np.int64),
        credit_tail=np.full(cubes, -1, dtype=np.int64),
        ready_packets=np.zeros(sms, dtype=np.int64),
        control=control,
        pending=np.zeros(cubes, dtype=np.int64),
        queue_head=np.full(cubes, -1, dtype=np.int64),
        queue_tail=np.full(cubes, -1, dtype=np.int64),
        tx_link=tx_link,
        rx_link=rx_link,
        monitor=np.zeros(2 + 2 * cubes, dtype=np.int64),
        busy=np.zeros(2 * cubes, dtype=np.bool_),
        stats=np.zeros((cubes, len(ofl.OFFLOAD_STAT_NAMES)), dtype=np.int64),
    )


__all__ = ["Instances", "OffloadCandidate", "build_offload_state", "find_instances",
           "first_access", "instance_lines", "target_stacks"]  # fmt: skip
