"""What a CPU core's timing model needs about one launch as CPU threads run it
(:mod:`ndpsim.trace.cpu_threads`): each thread's segments of instructions in order, each pc's
timing class and the registers it reads and writes, and the accesses; the same arrays for every
core model (:mod:`ndpsim.hw.cpu.core`).

A CPU thread runs its CUDA threads one after another with the same register names. Their
registers are renamed (an out-of-order core's rename stage; an in-order core's scoreboard sees
only true dependences too), so a register read depends on the last write before it, which is
the same CUDA thread's: PTX writes a register before it reads it. The timing classes follow
what an x86 core does with the operation, not the GPU's units: integer multiply and divide,
floating-point add-multiply and divide, and the PTX "special functions" (square root,
reciprocal, transcendental approximations), which a CPU computes with its divider or in
software. A branch is taken when its thread's next instruction is not the following pc (a
thread's last instruction has none: not taken).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ndpsim.analysis import analyze
from ndpsim.analysis.classify import Access, Kind
from ndpsim.frontend.ir import Function, Module, Space
from ndpsim.trace.cpu_threads import CpuLaunch
from ndpsim.trace.work import register_sets

# timing classes of a CPU instruction
(K_INT, K_MUL, K_DIV, K_FP, K_FDIV, K_SFU, K_BRANCH, K_LOAD, K_STORE, K_ATOMIC, K_PARAM,
 K_NOP) = range(12)  # fmt: skip
CLASS_NAMES = ("int", "mul", "div", "fp", "fdiv", "sfu", "branch", "load", "store", "atomic",
               "param", "nop")  # fmt: skip

_MULTIPLY = {"mul", "mad", "mul24", "mad24", "fma"}
_DIVIDE = {"div", "rem"}


class CpuWork(NamedTuple):
    """One launch's CPU threads (:class:`~ndpsim.trace.cpu_threads.CpuLaunch`'s segments and
    accesses) with what the cores need about each pc."""

    thread_first: np.ndarray  # int64[threads + 1]: each thread's first segment
    mem_first: np.ndarray  # int64[threads + 1]: each thread's first access
    seg_pc: np.ndarray  # int32[segments]
    seg_length: np.ndarray  # uint16 (or int32)[segments]
    seg_accesses: np.ndarray  # uint16 (or int32)[segments]: how many accesses each makes
    mem_address: np.ndarray  # int64[accesses]
    mem_offset: np.ndarray  # uint16 (or int32)[accesses]: its instruction's place in its segment
    mem_bytes: np.ndarray  # uint16[accesses]
    pc_class: np.ndarray  # int64[pcs]: K_*
    pc_src_first: np.ndarray  # int64[pcs + 1]: registers each pc reads (CSR into pc_src)
    pc_src: np.ndarray
    pc_dst_first: np.ndarray  # int64[pcs + 1]: registers each pc writes
    pc_dst: np.ndarray
    registers: int  # distinct registers of the kernel

    @property
    def threads(self) -> int:
        return len(self.thread_first) - 1

    @property
    def instruction_count(self) -> int:
        return int(self.seg_length.sum(dtype=np.int64))


def cpu_classes(function: Function) -> np.ndarray:
    """Each pc's CPU timing class (K_*)."""
    out = np.empty(len(function.instructions), dtype=np.int64)
    for pc, (inst, cls) in enumerate(zip(function.instructions, analyze(function).classes,
                                         strict=True)):  # fmt: skip
        floating = any(t.kind == "f" for t in inst.types) if inst.types else False
        if cls.kind is Kind.MEMORY:
            if cls.space in (Space.PARAM, Space.CONST):
                out[pc] = K_PARAM  # kernel arguments and constants: a CPU's L1-resident stack
            elif cls.access is Access.LOAD or cls.access is Access.PREFETCH:
                out[pc] = K_LOAD
            elif cls.access is Access.STORE:
                out[pc] = K_STORE
            else:
                out[pc] = K_ATOMIC
        elif cls.kind is Kind.SFU:
            out[pc] = K_SFU
        elif cls.kind is Kind.CONTROL:
            out[pc] = K_BRANCH
        elif cls.kind in (Kind.BARRIER, Kind.FENCE):
            out[pc] = K_NOP  # a loop boundary once the CTA's threads run one after another
        elif inst.opcode in _DIVIDE:
            out[pc] = K_FDIV if floating else K_DIV
        elif floating and (inst.opcode in _MULTIPLY or inst.opcode in ("add", "sub")):
            out[pc] = K_FP
        elif inst.opcode in _MULTIPLY:
            out[pc] = K_MUL
        else:
            out[pc] = K_INT
    return out


def build_cpu_work(launch: CpuLaunch, module: Module) -> CpuWork:
    """``launch``'s CPU threads as the core models read them."""
    src_first, src, dst_first, dst, registers = register_sets(module.function(launch.kernel))
    return CpuWork(
        thread_first=launch.thread_first, mem_first=launch.mem_first, seg_pc=launch.seg_pc,
        seg_length=launch.seg_length, seg_accesses=launch.seg_accesses,
        mem_address=launch.mem_address, mem_offset=launch.mem_offset,
        mem_bytes=launch.mem_bytes, pc_class=cpu_classes(module.function(launch.kernel)),
        pc_src_first=src_first, pc_src=src, pc_dst_first=dst_first, pc_dst=dst,
        registers=int(registers),
    )  # fmt: skip


def stream_work(pcs, classes, sources, destinations, addresses=None, access_bytes=8) -> CpuWork:
    """One CPU thread running a hand-made program (a microbenchmark, a test): instructions
    ``pcs`` in order, pc ``p`` of class ``classes[p]`` reading registers ``sources[p]`` and
    writing ``destinations[p]``; each load, store or atomic takes the next of ``addresses``
    (default: a new 64-byte line each). A branch is taken when the next pc is not ``p + 1``."""
    pcs = np.asarray(pcs, dtype=np.int64)
    classes = np.asarray(classes, dtype=np.int64)
    memory = np.flatnonzero(np.isin(classes[pcs], (K_LOAD, K_STORE, K_ATOMIC)))
    if addresses is None:
        addresses = 64 * np.arange(len(memory))
    # a segment starts wherever the pcs stop counting up by one
    starts = np.flatnonzero(np.concatenate([[True], np.diff(pcs) != 1])) if len(pcs) else \
        np.zeros(0, np.int64)  # fmt: skip
    lengths = np.diff(np.append(starts, len(pcs)))
    segment = np.searchsorted(starts, memory, side="right") - 1

    def csr(lists):
        first = np.concatenate([[0], np.cumsum([len(x) for x in lists])]).astype(np.int64)
        return first, np.array([r for x in lists for r in x], dtype=np.int64)

    src_first, src = csr(sources)
    dst_first, dst = csr(destinations)
    within = np.uint16 if len(pcs) < 1 << 16 else np.int32  # as cpu_threads stores them
    return CpuWork(
        thread_first=np.array([0, len(starts)], dtype=np.int64),
        mem_first=np.array([0, len(memory)], dtype=np.int64),
        seg_pc=pcs[starts].astype(np.int32), seg_length=lengths.astype(within),
        seg_accesses=np.bincount(segment, minlength=len(starts)).astype(within),
        mem_address=np.asarray(addresses, dtype=np.int64),
        mem_offset=(memory - starts[segment]).astype(within),
        mem_bytes=np.full(len(memory), access_bytes, dtype=np.uint16), pc_class=classes,
        pc_src_first=src_first, pc_src=src, pc_dst_first=dst_first, pc_dst=dst,
        registers=1 + max([r for x in (*sources, *destinations) for r in x], default=0),
    )  # fmt: skip


def merge_cpu_works(
    launches: list[list[CpuWork]], program_of: np.ndarray
) -> tuple[CpuWork, np.ndarray]:
    """Several programs' launches as one work for all cores: core ``c`` of program
    ``program_of[c]`` (-1: none) runs, launch after launch of its program (``launches[p]``, each
    with as many threads as the program has cores), the thread of its rank among the program's
    cores. Returns the work and ``launch_end[c, k]``, one past core ``c``'s last segment of its
    program's launch ``k`` (where it waits for the program's other cores)."""
    tables = [w for program in launches for w in program]
    pc_base = np.cumsum([0] + [len(w.pc_class) for w in tables])
    src_base = np.cumsum([0] + [len(w.pc_src) for w in tables])
    dst_base = np.cumsum([0] + [len(w.pc_dst) for w in tables])
    table_of = np.cumsum([0] + [len(program) for program in launches])  # program's first table
    most = max(len(program) for program in launches)
    seg_pc, seg_length, seg_accesses, address, offset, size = [], [], [], [], [], []
    thread_first, mem_first = [0], [0]
    launch_end = np.zeros((len(program_of), most), dtype=np.int64)
    segments = accesses = 0
    for c, p in enumerate(program_of):
        rank = int((program_of[:c] == p).sum())
        for k, w in enumerate(launches[p] if p >= 0 else []):
            s0, s1 = w.thread_first[rank], w.thread_first[rank + 1]
            a0, a1 = w.mem_first[rank], w.mem_first[rank + 1]
            seg_pc.append(w.seg_pc[s0:s1] + pc_base[table_of[p] + k])
            seg_length.append(w.seg_length[s0:s1])
            seg_accesses.append(w.seg_accesses[s0:s1])
            address.append(w.mem_address[a0:a1])
            offset.append(w.mem_offset[a0:a1])
            size.append(w.mem_bytes[a0:a1])
            segments += s1 - s0
            accesses += a1 - a0
            launch_end[c, k] = segments
        launch_end[c, len(launches[p]) if p >= 0 else 0 :] = segments
        thread_first.append(segments)
        mem_first.append(accesses)
    within = np.result_type(*(w.seg_length for w in tables))

    def joined(parts, dtype):
        return np.concatenate(parts).astype(dtype, copy=False) if parts else np.zeros(0, dtype)

    def tables_csr(first: str, flat: str, base):
        starts = [getattr(w, first)[:-1] + base[i] for i, w in enumerate(tables)]
        return (np.concatenate([*starts, [base[-1]]]).astype(np.int64),
                np.concatenate([getattr(w, flat) for w in tables]).astype(np.int64))  # fmt: skip

    src_first, src = tables_csr("pc_src_first", "pc_src", src_base)
    dst_first, dst = tables_csr("pc_dst_first", "pc_dst", dst_base)
    work = CpuWork(
        thread_first=np.array(thread_first, dtype=np.int64),
        mem_first=np.array(mem_first, dtype=np.int64), seg_pc=joined(seg_pc, np.int32),
        seg_length=joined(seg_length, within), seg_accesses=joined(seg_accesses, within),
        mem_address=joined(address, np.int64), mem_offset=joined(offset, within),
        mem_bytes=joined(size, np.uint16),
        pc_class=np.concatenate([w.pc_class for w in tables]).astype(np.int64),
        pc_src_first=src_first, pc_src=src, pc_dst_first=dst_first, pc_dst=dst,
        registers=max(w.registers for w in tables),
    )  # fmt: skip
    return work, launch_end


__all__ = ["CLASS_NAMES", "CpuWork", "build_cpu_work", "cpu_classes", "merge_cpu_works",
           "stream_work"]  # fmt: skip
