"""A kernel launch's trace turned into what the GPU timing model consumes.

The functional trace stores runs in execution order; the timing model wants, for every warp, its
instruction stream in program order, and for every memory instruction the cache lines it
touches after coalescing. All of it is computed here, once per launch (NumPy for the streams,
a compiled loop for coalescing, which looks at every lane):

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

from ndpsim.analysis import Kind, analyze
from ndpsim.frontend.ir import Function, Module, Space
from ndpsim.frontend.layout import static_shared_bytes
from ndpsim.numba_cache import compiled
from ndpsim.trace.trace import AFFINE, NARROW, MemoryKind, MemorySpace, Trace, popcount

LINE_BYTES = 128
LINE_SHIFT = 7

# timing classes of static instructions
(C_ALU, C_SFU, C_MEMORY, C_BRANCH, C_BARRIER, C_EXIT, C_CONSTANT) = range(7)


class KernelWork(NamedTuple):
    """Arrays the compiled GPU model reads (one launch, or one chunk of its CTAs)."""

    warp_first: np.ndarray  # int64[warps]: first instruction of each warp's stream
    warp_end: np.ndarray  # int64[warps]
    warp_cta: np.ndarray  # int64[warps]
    inst: np.ndarray  # int64[instructions]: pc, active lanes and memory operation, packed
    # (one load per issue from the one array that is streamed; see inst_pc() and friends)
    mem: np.ndarray  # int64[ops]: kind, space, transactions (first, count) and shared-memory
    # bank conflict degree of each memory operation, packed (see mem_kind() and friends)
    tx: np.ndarray  # int64[transactions]: virtual line (address >> 7) and the bytes the
    # active lanes touch in it, packed (see tx_line(), tx_bytes())
    pc_class: np.ndarray  # int64[pcs]
    pc_src_first: np.ndarray  # int64[pcs + 1]: registers each pc reads (CSR into pc_src)
    pc_src: np.ndarray
    pc_dst_first: np.ndarray  # int64[pcs + 1]: registers each pc writes (CSR into pc_dst)
    pc_dst: np.ndarray
    params: np.ndarray  # int64[WORK_PARAMS]
    cta_launch: np.ndarray  # int64[ctas]: the launch each CTA belongs to (a row of launches)
    launches: np.ndarray  # int64[launches, LAUNCH_FIELDS]: one launch's, or several programs'
    # launches merged (merge_works)


# fields of KernelWork.inst: pc in bits 0-23, active lanes (0-32) in bits 24-29, memory
# operation + 1 (0: none) from bit 30
PC_MASK = (1 << 24) - 1
LANES_SHIFT, MEM_SHIFT = 24, 30


# fields of KernelWork.mem: kind bits 0-2, space 3-5, transactions 6-11, conflict 12-17,
# first transaction from bit 18; of KernelWork.tx: bytes bits 0-7, line from bit 8
KIND_BITS, SPACE_SHIFT, COUNT_SHIFT, CONFLICT_SHIFT, FIRST_SHIFT = 7, 3, 6, 12, 18
TX_BYTES_BITS, TX_LINE_SHIFT = 255, 8


@compiled(inline=True)
def mem_kind(work, m):
    return work.mem[m] & KIND_BITS


@compiled(inline=True)
def mem_space(work, m):
    return (work.mem[m] >> SPACE_SHIFT) & 7


@compiled(inline=True)
def mem_tx_count(work, m):
    return (work.mem[m] >> COUNT_SHIFT) & 63


@compiled(inline=True)
def mem_conflict(work, m):
    """Shared-memory bank conflict degree (>= 1)."""
    return (work.mem[m] >> CONFLICT_SHIFT) & 63


@compiled(inline=True)
def mem_tx_first(work, m):
    return work.mem[m] >> FIRST_SHIFT


@compiled(inline=True)
def tx_line(work, t):
    return work.tx[t] >> TX_LINE_SHIFT


@compiled(inline=True)
def tx_bytes(work, t):
    return work.tx[t] & TX_BYTES_BITS


@compiled(inline=True)
def inst_pc(work, pos):
    return work.inst[pos] & PC_MASK


@compiled(inline=True)
def inst_lanes(work, pos):
    return (work.inst[pos] >> LANES_SHIFT) & 63


@compiled(inline=True)
def inst_mem(work, pos):
    """The memory operation of instruction ``pos``, or -1."""
    return (work.inst[pos] >> MEM_SHIFT) - 1


(W_NUM_WARPS, W_WARPS_PER_CTA, W_NUM_CTAS, W_FIRST_CTA, W_REGISTERS, W_THREADS_PER_CTA,
 W_SHARED_BYTES, W_NUM_REGISTERS) = range(8)  # fmt: skip
WORK_PARAMS = 8

# fields of KernelWork.launches: the program a launch belongs to, its first CTA and warp in the
# work, its CTAs, warps per CTA, registers per thread and shared bytes per CTA
(L_PROGRAM, L_FIRST_CTA, L_FIRST_WARP, L_CTAS, L_WARPS_PER_CTA, L_REGISTERS,
 L_SHARED_BYTES) = range(7)  # fmt: skip
LAUNCH_FIELDS = 7


def _timing_class(function: Function) -> np.ndarray:
    classes = analyze(function).classes
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


def csr(lists: list[list[int]]) -> tuple[np.ndarray, np.ndarray]:
    first = np.zeros(len(lists) + 1, dtype=np.int64)
    first[1:] = np.cumsum([len(x) for x in lists])
    flat = np.array([v for x in lists for v in x], dtype=np.int64)
    return first, flat


def register_numbering(function: Function) -> dict[str, int]:
    """The timing model's number of each register: order of first appearance in the program,
    so the registers of nearby instructions sit together in the per-warp ready-time arrays (a
    kernel may have hundreds; scattered, every issue would miss in the host's caches)."""
    index: dict[str, int] = {}
    for inst in function.instructions:
        for r in (*inst.uses, *inst.defs):
            index.setdefault(r, len(index))
    return index


def register_sets(function: Function):
    """Registers each pc reads (guard included) and writes, as two CSR arrays, and how many
    registers there are (numbered by :func:`register_numbering`)."""
    index = register_numbering(function)
    src = [[index[r] for r in inst.uses] for inst in function.instructions]
    dst = [[index[r] for r in inst.defs] for inst in function.instructions]
    return (*csr(src), *csr(dst), len(index))


def registers_per_thread(function: Function, module_path: str | None) -> int:
    """What ptxas allocates, from the committed ``.resources.json`` when there is one; else the
    most registers live at once (a lower bound close to what register allocation achieves)."""
    if module_path:
        sidecar = Path(module_path).with_suffix(".resources.json")
        if sidecar.exists():
            usage = json.loads(sidecar.read_text()).get(function.name)
            if usage:
                return int(usage["registers"])
    liveness = analyze(function).liveness
    most = max((len(liveness.live_before(pc)) for pc in range(len(function.instructions))),
               default=1)  # fmt: skip
    return max(most, 4)


@compiled(allocates=True)
def _distinct_lines(addresses, first, count, out):
    """Write the distinct 128-byte lines of ``addresses[first : first + count]`` to ``out`` in
    ascending order, with how many lanes touch each; returns how many lines there are."""
    n = 0
    for i in range(first, first + count):
        line = np.int64(addresses[i] >> LINE_SHIFT)
        j = 0
        while j < n and out[j, 0] < line:
            j += 1
        if j < n and out[j, 0] == line:
            out[j, 1] += 1
            continue
        for k in range(n, j, -1):  # insertion: at most 32 lanes
            out[k, 0] = out[k - 1, 0]
            out[k, 1] = out[k - 1, 1]
        out[j, 0] = line
        out[j, 1] = 1
        n += 1
    return n


@compiled(allocates=True)
def _bank_conflict(addresses, first, count, words, per_bank):
    """The most distinct 4-byte words any of the 32 shared-memory banks must serve (lanes
    reading the same word share it). ``words`` and ``per_bank`` are scratch: int64[32]."""
    n = 0
    for i in range(first, first + count):
        word = np.int64(addresses[i] >> 2)
        seen = False
        for j in range(n):
            if words[j] == word:
                seen = True
                break
        if not seen:
            words[n] = word
            n += 1
    worst = 1
    for j in range(n):
        bank = words[j] & 31
        per_bank[bank] += 1
        worst = max(worst, per_bank[bank])
    for j in range(n):
        per_bank[words[j] & 31] = 0
    return worst


@compiled(allocates=True)
def _lane_addresses(columns, r, out):
    """Write record ``r``'s lane addresses, in lane order, to ``out``; returns how many.
    ``columns`` holds the trace's (mem_form, mem_offset, mem_mask, mem_base, mem_stride,
    lane_offsets, addresses), all int64 but the offsets: device addresses are below 2**63."""
    forms, offsets, masks, bases, strides, narrow, wide = columns
    n = 0
    for lane in range(32):
        if (masks[r] >> lane) & 1:
            if forms[r] == AFFINE:
                out[n] = bases[r] + lane * strides[r]
            elif forms[r] == NARROW:
                out[n] = bases[r] + np.int64(narrow[offsets[r] + n])
            else:
                out[n] = wide[offsets[r] + n]
            n += 1
    return n


@compiled(allocates=True)
def _coalesce(columns, sizes, spaces, order, shared_space):
    """Line transactions of the memory records taken in ``order``: per record its first
    transaction and count, each transaction's line and the bytes its lanes touch; and each
    record's shared-memory bank conflict degree (1 for other spaces)."""
    n = order.shape[0]
    lanes = np.empty(32, dtype=np.int64)
    scratch = np.empty((32, 2), dtype=np.int64)
    words = np.empty(32, dtype=np.int64)
    per_bank = np.zeros(32, dtype=np.int64)
    tx_first = np.empty(n, dtype=np.int64)
    tx_count = np.empty(n, dtype=np.int64)
    conflict = np.ones(n, dtype=np.int64)
    total = 0
    for i in range(n):  # first pass: how many transactions
        r = order[i]
        tx_first[i] = total
        count = _lane_addresses(columns, r, lanes)
        if spaces[r] == shared_space:
            tx_count[i] = 0
            conflict[i] = _bank_conflict(lanes, 0, count, words, per_bank)
        else:
            tx_count[i] = _distinct_lines(lanes, 0, count, scratch)
        total += tx_count[i]
    tx_line = np.empty(total, dtype=np.int64)
    tx_bytes = np.empty(total, dtype=np.int64)
    for i in range(n):
        r = order[i]
        if tx_count[i] == 0:
            continue
        count = _lane_addresses(columns, r, lanes)
        _distinct_lines(lanes, 0, count, scratch)
        for k in range(tx_count[i]):
            tx_line[tx_first[i] + k] = scratch[k, 0]
            tx_bytes[tx_first[i] + k] = min(scratch[k, 1] * np.int64(sizes[r]), LINE_BYTES)
    return tx_first, tx_count, tx_line, tx_bytes, conflict


def build_kernel_work(trace: Trace, module: Module) -> KernelWork:
    """Everything the GPU model needs about one launch (or chunk of CTAs) of a kernel of
    ``module``."""
    info = trace.info
    function = module.function(info.kernel)
    first_warp = info.cta_begin * info.warps_per_cta
    num_warps = (info.cta_end - info.cta_begin) * info.warps_per_cta
    # Each warp's stream in order: sort the runs (not the instructions) by warp, then position.
    run_warp = trace.run_warp.astype(np.int64) - first_warp
    order = np.argsort((run_warp << 32) | trace.run_seq, kind="stable")
    lengths = trace.run_length.astype(np.int64)[order]
    counts = np.bincount(run_warp, weights=trace.run_length, minlength=num_warps).astype(np.int64)
    warp_first = np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.int64)
    run_index = np.repeat(np.arange(len(order)), lengths)
    step = np.arange(int(lengths.sum()), dtype=np.int64) - np.repeat(
        np.cumsum(lengths) - lengths, lengths
    )
    inst_pc = trace.run_pc.astype(np.int64)[order][run_index] + step
    inst_lanes = popcount(trace.run_mask[order])[run_index]
    if len(function.instructions) > PC_MASK:
        raise ValueError(f"kernel {info.kernel!r} has more than {PC_MASK} instructions")
    # memory records -> instruction index (stream position of their warp)
    mem_inst = warp_first[trace.mem_warp.astype(np.int64) - first_warp] + trace.mem_seq
    mem_order = np.argsort(mem_inst, kind="stable")
    inst_mem = np.full(len(inst_pc), -1, dtype=np.int64)
    inst_mem[mem_inst[mem_order]] = np.arange(len(mem_order))
    columns = (trace.mem_form.astype(np.int64), trace.mem_offset, trace.mem_mask.astype(np.int64),
               trace.mem_base.view(np.int64), trace.mem_stride, trace.lane_offsets,
               trace.addresses.view(np.int64))  # fmt: skip
    tx_first, tx_count, tx_line, tx_bytes, conflict = _coalesce(
        columns, trace.mem_size, trace.mem_space, mem_order, int(MemorySpace.SHARED)
    )
    src_first, src, dst_first, dst, num_registers = register_sets(function)
    params = np.zeros(WORK_PARAMS, dtype=np.int64)
    params[W_NUM_WARPS] = num_warps
    params[W_WARPS_PER_CTA] = info.warps_per_cta
    params[W_NUM_CTAS] = info.cta_end - info.cta_begin
    params[W_FIRST_CTA] = info.cta_begin
    params[W_REGISTERS] = registers_per_thread(function, info.module)
    params[W_THREADS_PER_CTA] = info.threads_per_cta
    params[W_SHARED_BYTES] = static_shared_bytes(function, module) + info.shared_bytes
    params[W_NUM_REGISTERS] = num_registers
    launch = np.zeros((1, LAUNCH_FIELDS), dtype=np.int64)
    launch[0, [L_CTAS, L_WARPS_PER_CTA, L_REGISTERS, L_SHARED_BYTES]] = params[
        [W_NUM_CTAS, W_WARPS_PER_CTA, W_REGISTERS, W_SHARED_BYTES]
    ]
    return KernelWork(
        warp_first=warp_first,
        warp_end=warp_first + counts,
        warp_cta=np.arange(num_warps, dtype=np.int64) // info.warps_per_cta,
        inst=inst_pc | (inst_lanes << LANES_SHIFT) | ((inst_mem + 1) << MEM_SHIFT),
        mem=trace.mem_kind.astype(np.int64)[mem_order]
        | (trace.mem_space.astype(np.int64)[mem_order] << SPACE_SHIFT)
        | (tx_count << COUNT_SHIFT)
        | (conflict << CONFLICT_SHIFT)
        | (tx_first << FIRST_SHIFT),
        tx=(tx_line << TX_LINE_SHIFT) | tx_bytes,
        pc_class=_timing_class(function),
        pc_src_first=src_first,
        pc_src=src,
        pc_dst_first=dst_first,
        pc_dst=dst,
        params=params,
        cta_launch=np.zeros(params[W_NUM_CTAS], dtype=np.int64),
        launches=launch,
    )


def merge_works(works: list[KernelWork], programs: list[int],
                line_offsets: list[int]) -> KernelWork:  # fmt: skip
    """Launches of several programs as one work, one after another in its arrays: launch ``i``
    (``works[i]``) of program ``programs[i]``, its virtual lines moved by ``line_offsets[i]``
    (each program's address space its own). Each launch keeps its own pcs, registers, warps
    and CTAs, numbered after the launches before it; ``launches`` says which are whose."""
    inst, mem, tx, warp_first, warp_end, warp_cta = [], [], [], [], [], []
    pc_class, src_first, src, dst_first, dst, cta_launch = [], [], [], [], [], []
    table = np.zeros((len(works), LAUNCH_FIELDS), dtype=np.int64)
    n_inst = n_mem = n_tx = n_pc = n_src = n_dst = n_cta = n_warp = 0
    for i, work in enumerate(works):
        pcs = len(work.pc_class)
        if n_pc + pcs > PC_MASK:
            raise ValueError(f"the merged launches have more than {PC_MASK} instructions")
        memory_op = work.inst >> MEM_SHIFT  # memory operation + 1, or 0
        inst.append(((work.inst & PC_MASK) + n_pc) | (work.inst & (63 << LANES_SHIFT))
                    | np.where(memory_op > 0, memory_op + n_mem, 0) << MEM_SHIFT)  # fmt: skip
        mem.append(work.mem + (n_tx << FIRST_SHIFT))
        tx.append(work.tx + (line_offsets[i] << TX_LINE_SHIFT))
        warp_first.append(work.warp_first + n_inst)
        warp_end.append(work.warp_end + n_inst)
        warp_cta.append(work.warp_cta + n_cta)
        pc_class.append(work.pc_class)
        src_first.append(work.pc_src_first[:-1] + n_src)
        src.append(work.pc_src)
        dst_first.append(work.pc_dst_first[:-1] + n_dst)
        dst.append(work.pc_dst)
        ctas = int(work.params[W_NUM_CTAS])
        cta_launch.append(np.full(ctas, i, dtype=np.int64))
        table[i] = work.launches[0]
        table[i, [L_PROGRAM, L_FIRST_CTA, L_FIRST_WARP]] = programs[i], n_cta, n_warp
        n_inst += len(work.inst)
        n_mem += len(work.mem)
        n_tx += len(work.tx)
        n_pc += pcs
        n_src += len(work.pc_src)
        n_dst += len(work.pc_dst)
        n_cta += ctas
        n_warp += int(work.params[W_NUM_WARPS])
    params = works[0].params.copy()
    params[W_NUM_WARPS], params[W_NUM_CTAS], params[W_FIRST_CTA] = n_warp, n_cta, 0
    params[W_NUM_REGISTERS] = max(int(w.params[W_NUM_REGISTERS]) for w in works)
    join = lambda parts: np.concatenate(parts).astype(np.int64)  # noqa: E731
    return KernelWork(
        warp_first=join(warp_first), warp_end=join(warp_end), warp_cta=join(warp_cta),
        inst=join(inst), mem=join(mem), tx=join(tx), pc_class=join(pc_class),
        pc_src_first=join([*src_first, [n_src]]), pc_src=join(src),
        pc_dst_first=join([*dst_first, [n_dst]]), pc_dst=join(dst), params=params,
        cta_launch=join(cta_launch), launches=table,
    )  # fmt: skip


__all__ = ["KernelWork", "MemoryKind", "build_kernel_work", "merge_works"]
