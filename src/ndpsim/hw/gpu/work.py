"""A kernel launch's trace turned into what the GPU timing model consumes.

The functional trace stores runs in execution order; the timing model wants, for every warp, its
instruction stream in program order, and for every memory instruction the cache lines it
touches after coalescing. All of it is computed here with NumPy, once per launch:

* each warp's instructions (pc and active lane count), in stream order;
* per memory instruction: kind, space, and the 128-byte line transactions its lanes coalesce
  into, with the bytes each transaction actually moves (only the active lanes' data);
* per shared-memory instruction, its bank-conflict degree (the most distinct words any of the 32
  banks must serve);
* per static instruction, its timing class and the registers it reads and writes.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import NamedTuple

import numpy as np

from ndpsim.analysis import FunctionAnalysis, Kind
from ndpsim.frontend.ir import Function, Module, Space
from ndpsim.simt.interpreter import compile_program
from ndpsim.trace.trace import MemoryKind, MemorySpace, Trace, popcount

LINE_BYTES = 128
LINE_SHIFT = 7

# timing classes of static instructions
(C_ALU, C_SFU, C_MEMORY, C_BRANCH, C_BARRIER, C_EXIT, C_CONSTANT) = range(7)


class KernelWork(NamedTuple):
    """Arrays the compiled GPU model reads (one launch, or one chunk of its CTAs)."""

    warp_first: np.ndarray  # int64[warps]: first instruction of each warp's stream
    warp_end: np.ndarray  # int64[warps]
    warp_cta: np.ndarray  # int64[warps]
    inst_pc: np.ndarray  # int64[instructions]
    inst_lanes: np.ndarray  # int64[instructions]: active lanes
    inst_mem: np.ndarray  # int64[instructions]: memory operation, or -1
    mem_kind: np.ndarray  # int64[ops]: MemoryKind
    mem_space: np.ndarray  # int64[ops]: MemorySpace
    mem_tx_first: np.ndarray  # int64[ops]
    mem_tx_count: np.ndarray  # int64[ops]
    mem_conflict: np.ndarray  # int64[ops]: shared-memory bank conflict degree (>= 1)
    tx_line: np.ndarray  # int64[transactions]: virtual line address (address >> 7)
    tx_bytes: np.ndarray  # int64[transactions]: bytes the active lanes touch in the line
    pc_class: np.ndarray  # int64[pcs]
    pc_src_first: np.ndarray  # int64[pcs + 1]: registers each pc reads (CSR into pc_src)
    pc_src: np.ndarray
    pc_dst_first: np.ndarray  # int64[pcs + 1]: registers each pc writes (CSR into pc_dst)
    pc_dst: np.ndarray
    params: np.ndarray  # int64[WORK_PARAMS]


(W_NUM_WARPS, W_WARPS_PER_CTA, W_NUM_CTAS, W_FIRST_CTA, W_REGISTERS, W_THREADS_PER_CTA,
 W_SHARED_BYTES, W_NUM_REGISTERS) = range(8)  # fmt: skip
WORK_PARAMS = 8


def _timing_class(function: Function) -> np.ndarray:
    classes = FunctionAnalysis(function).classes
    out = np.empty(len(classes), dtype=np.int64)
    for pc, (inst, cls) in enumerate(zip(function.instructions, classes, strict=True)):
        if inst.is_exit:
            out[pc] = C_EXIT
        elif cls.kind is Kind.MEMORY:
            out[pc] = C_CONSTANT if cls.space in (Space.PARAM, Space.CONST) else C_MEMORY
        elif cls.kind is Kind.SFU:
            out[pc] = C_SFU
        elif cls.kind is Kind.CONTROL:
            out[pc] = C_BRANCH
        elif cls.kind is Kind.BARRIER:
            out[pc] = C_BARRIER
        else:
            out[pc] = C_ALU
    return out


def _csr(lists: list[list[int]]) -> tuple[np.ndarray, np.ndarray]:
    first = np.zeros(len(lists) + 1, dtype=np.int64)
    first[1:] = np.cumsum([len(x) for x in lists])
    flat = np.array([v for x in lists for v in x], dtype=np.int64)
    return first, flat


def _register_sets(function: Function, register_index: dict[str, int]):
    """Registers each pc reads (guard included) and writes, as two CSR arrays."""
    src = [[register_index[r] for r in inst.uses] for inst in function.instructions]
    dst = [[register_index[r] for r in inst.defs] for inst in function.instructions]
    return (*_csr(src), *_csr(dst))


def registers_per_thread(function: Function, module_path: str | None) -> int:
    """What ptxas allocates, from the committed ``.resources.json`` when there is one; else the
    most registers live at once (a lower bound close to what register allocation achieves)."""
    if module_path:
        sidecar = Path(module_path).with_suffix(".resources.json")
        if sidecar.exists():
            usage = json.loads(sidecar.read_text()).get(function.name)
            if usage:
                return int(usage["registers"])
    liveness = FunctionAnalysis(function).liveness
    most = max((len(liveness.live_before(pc)) for pc in range(len(function.instructions))),
               default=1)  # fmt: skip
    return max(most, 4)


def _coalesce(trace: Trace, mem_order: np.ndarray):
    """Line transactions of the memory records, in ``mem_order``; and shared bank conflicts."""
    counts = popcount(trace.mem_mask)
    record_of_lane = np.repeat(np.arange(len(counts)), counts)
    spaces = trace.mem_space
    global_like = spaces != MemorySpace.SHARED
    # Transactions: unique (record, line) pairs of global-like records, in record order.
    lane_global = global_like[record_of_lane]
    lines = (trace.addresses >> np.uint64(LINE_SHIFT)).astype(np.int64)
    size = trace.mem_size.astype(np.int64)[record_of_lane]
    rec = record_of_lane[lane_global]
    keys = np.stack([rec, lines[lane_global]])
    if rec.size:
        order = np.lexsort(keys[::-1])
        rec_sorted, line_sorted = rec[order], keys[1][order]
        bytes_sorted = size[lane_global][order]
        changes = (rec_sorted[1:] != rec_sorted[:-1]) | (line_sorted[1:] != line_sorted[:-1])
        first = np.r_[True, changes]
        group = np.cumsum(first) - 1
        tx_rec = rec_sorted[first]
        tx_line = line_sorted[first]
        tx_bytes = np.minimum(np.bincount(group, weights=bytes_sorted).astype(np.int64), LINE_BYTES)
    else:
        tx_rec = tx_line = tx_bytes = np.zeros(0, dtype=np.int64)
    n_rec = len(counts)
    tx_count = np.bincount(tx_rec, minlength=n_rec).astype(np.int64)
    tx_start = np.concatenate([[0], np.cumsum(tx_count)[:-1]]).astype(np.int64)
    # Shared-memory bank conflicts: per record, the most distinct 4-byte words in any bank.
    conflict = np.ones(n_rec, dtype=np.int64)
    shared = ~lane_global
    if shared.any():
        words = (trace.addresses[shared] >> np.uint64(2)).astype(np.int64)
        srec = record_of_lane[shared]
        banks = words & 31
        triples = np.unique(np.stack([srec, banks, words]), axis=1)
        per_bank = np.unique(triples[:2], axis=1, return_counts=True)
        np.maximum.at(conflict, per_bank[0][0], per_bank[1])
    # Put the records (and their transactions) in instruction order.
    old_first = tx_start[mem_order]
    count = tx_count[mem_order]
    new_first = np.concatenate([[0], np.cumsum(count)[:-1]]).astype(np.int64)
    gather = np.repeat(old_first - new_first, count) + np.arange(int(count.sum()))
    return new_first, count, tx_line[gather], tx_bytes[gather], conflict[mem_order]


def build_kernel_work(trace: Trace, module: Module) -> KernelWork:
    """Everything the GPU model needs about one launch (or chunk of CTAs) of a kernel of
    ``module``."""
    info = trace.info
    function = module.function(info.kernel)
    rows = trace.instructions()
    order = np.lexsort((rows["seq"], rows["warp"]))
    warp = rows["warp"][order].astype(np.int64)
    first_warp = info.cta_begin * info.warps_per_cta
    num_warps = (info.cta_end - info.cta_begin) * info.warps_per_cta
    local_warp = warp - first_warp
    counts = np.bincount(local_warp, minlength=num_warps).astype(np.int64)
    warp_first = np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.int64)
    inst_pc = rows["pc"][order].astype(np.int64)
    inst_lanes = popcount(rows["mask"][order])
    # memory records -> instruction index (stream position of their warp)
    mem_inst = warp_first[trace.mem_warp.astype(np.int64) - first_warp] + trace.mem_seq
    mem_order = np.argsort(mem_inst, kind="stable")
    inst_mem = np.full(len(inst_pc), -1, dtype=np.int64)
    inst_mem[mem_inst[mem_order]] = np.arange(len(mem_order))
    tx_first, tx_count, tx_line, tx_bytes, conflict = _coalesce(trace, mem_order)
    program = compile_program(function, module)
    src_first, src, dst_first, dst = _register_sets(function, program.register_index)
    params = np.zeros(WORK_PARAMS, dtype=np.int64)
    params[W_NUM_WARPS] = num_warps
    params[W_WARPS_PER_CTA] = info.warps_per_cta
    params[W_NUM_CTAS] = info.cta_end - info.cta_begin
    params[W_FIRST_CTA] = info.cta_begin
    params[W_REGISTERS] = registers_per_thread(function, info.module)
    params[W_THREADS_PER_CTA] = info.threads_per_cta
    params[W_SHARED_BYTES] = program.shared_static_bytes + info.shared_bytes
    params[W_NUM_REGISTERS] = len(program.register_index)
    return KernelWork(
        warp_first=warp_first,
        warp_end=warp_first + counts,
        warp_cta=np.arange(num_warps, dtype=np.int64) // info.warps_per_cta,
        inst_pc=inst_pc,
        inst_lanes=inst_lanes,
        inst_mem=inst_mem,
        mem_kind=trace.mem_kind.astype(np.int64)[mem_order],
        mem_space=trace.mem_space.astype(np.int64)[mem_order],
        mem_tx_first=tx_first,
        mem_tx_count=tx_count,
        mem_conflict=conflict,
        tx_line=tx_line.astype(np.int64),
        tx_bytes=tx_bytes.astype(np.int64),
        pc_class=_timing_class(function),
        pc_src_first=src_first,
        pc_src=src,
        pc_dst_first=dst_first,
        pc_dst=dst,
        params=params,
    )


__all__ = ["KernelWork", "MemoryKind", "build_kernel_work"]
