"""MPU's multiple activated row buffers (Xie et al., HPCA 2021, sec. IV-D, after MASA): a bank
keeps one open row per subarray, consecutive rows in consecutive subarrays, so that warps
working on neighbouring rows stop closing each other's. On the memory streams of MPU's own
workloads at ``tiny``, more row buffers never add row conflicts (a new row closing an open
one), and add at most 2% to the accesses that miss the row buffer: FR-FCFS serves hits first
and so in another order, and refreshes fall elsewhere, so a few more first accesses find their
subarray closed (docs/timing.md gives the figures)."""

from __future__ import annotations

import numpy as np
import pytest

from ndpsim.hw.dram.spec import load_dram_preset
from ndpsim.systems.dram_trace import run_dram_trace
from ndpsim.trace.trace import MemoryKind, MemorySpace
from ndpsim.trace.work import (
    LINE_BYTES,
    build_kernel_work,
    inst_mem,
    mem_kind,
    mem_space,
    mem_tx_count,
    mem_tx_first,
    tx_line,
)
from ndpsim.workloads import kernel_module, run_workload

MPU_WORKLOADS = ("axpy", "blur", "conv", "gemv", "hist", "kmeans", "knn", "maxp", "nw", "pr",
                 "ttrans", "upsamp")  # fmt: skip


def memory_stream(workload: str) -> tuple[np.ndarray, np.ndarray]:
    """Every global line transaction of the workload's launches, warps interleaved as many
    resident warps issue them: each warp's first memory instruction, then each one's second,
    and so on (the order in which warps working on neighbouring data meet at the banks)."""
    run = run_workload(workload, "tiny", 0)
    module = kernel_module(run.workload.module_name)
    addresses, writes = [], []
    for trace in run.traces:
        work = build_kernel_work(trace, module)
        per_warp = []
        for first, end in zip(work.warp_first, work.warp_end, strict=True):
            ops = []
            for pos in range(first, end):
                m = inst_mem(work, pos)
                if m < 0 or mem_space(work, m) == MemorySpace.SHARED:
                    continue
                lines = [tx_line(work, t) for t in range(mem_tx_first(work, m),
                                                         mem_tx_first(work, m)
                                                         + mem_tx_count(work, m))]  # fmt: skip
                ops.append((lines, mem_kind(work, m) != MemoryKind.LOAD))
            per_warp.append(ops)
        for step in range(max(map(len, per_warp), default=0)):
            for ops in per_warp:
                if step < len(ops):
                    lines, write = ops[step]
                    addresses += [line * LINE_BYTES for line in lines]
                    writes += [write] * len(lines)
    return np.array(addresses, dtype=np.int64), np.array(writes, dtype=np.uint8)


def row_outcomes(addresses, writes, row_buffers: int) -> tuple[int, int]:
    """(accesses that missed the row buffer, row conflicts among them)."""
    preset = load_dram_preset("mpu", {"organization": {"subarrays": row_buffers}})
    stats = run_dram_trace(preset, addresses, writes).stats
    assert stats["row_hits"] + stats["row_misses"] + stats["row_conflicts"] == len(addresses)
    return stats["row_misses"] + stats["row_conflicts"], stats["row_conflicts"]


@pytest.mark.parametrize("workload", MPU_WORKLOADS)
def test_more_row_buffers_never_add_row_conflicts_and_barely_change_misses(workload):
    addresses, writes = memory_stream(workload)
    assert len(addresses) > 0
    (one, one_conflicts), (two, two_conflicts), (four, four_conflicts) = (
        row_outcomes(addresses, writes, k) for k in (1, 2, 4))  # fmt: skip
    assert four_conflicts <= two_conflicts <= one_conflicts
    if one_conflicts:  # rows reused (NW at tiny): four row buffers remove some conflicts
        assert four_conflicts < one_conflicts
    assert four <= 1.02 * two and two <= 1.02 * one


def test_consecutive_rows_of_a_bank_open_in_different_subarrays():
    """Two rows of one bank used in turn: with one row buffer they take turns in it (the
    scheduler batches each row's hits, yet reopens each row); with two, consecutive rows sit
    in different subarrays and each is opened once."""
    preset = load_dram_preset("mpu")
    org = preset.organization
    row_stride = org.columns * org.access_bytes * org.banks * org.channels  # next row, same bank
    addresses = np.array([0, row_stride] * 64, dtype=np.int64)
    writes = np.zeros(len(addresses), dtype=np.uint8)
    assert row_outcomes(addresses, writes, 2)[0] == 2 < row_outcomes(addresses, writes, 1)[0]
