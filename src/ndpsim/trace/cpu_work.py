"""What a CPU core's timing model needs about one launch as CPU threads run it
(:mod:`ndpsim.trace.cpu_threads`): each thread's instructions in order, each with its timing
class, the registers it reads and writes, its memory access, and for a branch whether it was
taken; the same arrays for every core model (:mod:`ndpsim.hw.cpu.core`).

A CPU thread runs its CUDA threads one after another with the same register names. Their
registers are renamed (an out-of-order core's rename stage; an in-order core's scoreboard sees
only true dependences too), so a register read depends on the last write before it, which is
the same CUDA thread's: PTX writes a register before it reads it. The timing classes follow
what an x86 core does with the operation, not the GPU's units: integer multiply and divide,
floating-point add-multiply and divide, and the PTX "special functions" (square root,
reciprocal, transcendental approximations), which a CPU computes with its divider or in
software.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ndpsim.analysis import analyze
from ndpsim.analysis.classify import Access, Kind
from ndpsim.frontend.ir import Function, Module, Space
from ndpsim.trace.cpu_threads import CpuLaunch
from ndpsim.trace.trace import MemorySpace
from ndpsim.trace.work import register_sets

# timing classes of a CPU instruction
(K_INT, K_MUL, K_DIV, K_FP, K_FDIV, K_SFU, K_BRANCH, K_LOAD, K_STORE, K_ATOMIC, K_PARAM,
 K_NOP) = range(12)  # fmt: skip
CLASS_NAMES = ("int", "mul", "div", "fp", "fdiv", "sfu", "branch", "load", "store", "atomic",
               "param", "nop")  # fmt: skip

#: Where a CPU thread's shared and local memory live: its CTAs' ``__shared__`` arrays become one
#: buffer it reuses CTA after CTA, and its CUDA threads' local frames one stack frame, as
#: CUDA-to-CPU compilers allocate them. Thread ``t``'s shared buffer is slot ``2t`` and its
#: local frame slot ``2t + 1`` of a private area above the device memory (whose addresses stay
#: below 2^40); slots are 16 MiB and 68 KiB apart, so that different threads' buffers do not
#: all fall in the same sets of a cache (a power-of-two stride would put them there).
PRIVATE_BASE, PRIVATE_STRIDE, PRIVATE_LIMIT = 1 << 40, (16 << 20) + (68 << 10), 16 << 20

_MULTIPLY = {"mul", "mad", "mul24", "mad24", "fma"}
_DIVIDE = {"div", "rem"}


class CpuWork(NamedTuple):
    """One launch's CPU threads. Thread ``k``'s instructions are ``thread_first[k]`` up to
    ``thread_first[k + 1]``; instruction ``i`` has ``inst_pc[i]``, its access ``inst_mem[i]``
    (-1 for none) and, for a branch, ``inst_taken[i]``."""

    thread_first: np.ndarray  # int64[threads + 1]
    inst_pc: np.ndarray  # int64[instructions]
    inst_mem: np.ndarray  # int64[instructions]: index into mem_*, or -1
    inst_taken: np.ndarray  # int64[instructions]: 1 for a taken branch
    mem_address: np.ndarray  # int64[accesses]
    mem_bytes: np.ndarray  # int64[accesses]
    mem_kind: np.ndarray  # int64[accesses]: MemoryKind
    pc_class: np.ndarray  # int64[pcs]: K_*
    pc_src_first: np.ndarray  # int64[pcs + 1]: registers each pc reads (CSR into pc_src)
    pc_src: np.ndarray
    pc_dst_first: np.ndarray  # int64[pcs + 1]: registers each pc writes
    pc_dst: np.ndarray
    registers: int  # distinct registers of the kernel

    @property
    def threads(self) -> int:
        return len(self.thread_first) - 1


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
    function = module.function(launch.kernel)
    n = len(launch.pc)
    inst_mem = np.full(n, -1, dtype=np.int64)
    inst_mem[launch.mem_inst] = np.arange(len(launch.mem_inst), dtype=np.int64)
    classes = cpu_classes(function)
    # A branch was taken when its thread's next instruction is not the one after it; the last
    # instruction of a CUDA thread is its exit, never a branch.
    following = np.empty(n, dtype=np.int64)
    following[:-1] = launch.pc[1:]
    if n:
        following[-1] = launch.pc[-1] + 1
    taken = ((classes[launch.pc] == K_BRANCH) & (following != launch.pc + 1)).astype(np.int64)
    src_first, src, dst_first, dst, registers = register_sets(function)
    address = launch.mem_address.astype(np.int64)  # a copy: the private buffers move
    thread = np.repeat(np.arange(launch.threads, dtype=np.int64), np.diff(launch.mem_first))
    for space, slot in ((MemorySpace.SHARED, 0), (MemorySpace.LOCAL, 1)):
        private = launch.mem_space == space
        if (address[private] >= PRIVATE_LIMIT).any():
            raise ValueError(f"kernel {launch.kernel!r}: a {space.name.lower()} address beyond "
                             f"{PRIVATE_LIMIT:,} bytes")  # fmt: skip
        address[private] += PRIVATE_BASE + (2 * thread[private] + slot) * PRIVATE_STRIDE
    return CpuWork(
        thread_first=launch.inst_first.astype(np.int64, copy=False),
        inst_pc=launch.pc.astype(np.int64, copy=False),
        inst_mem=inst_mem,
        inst_taken=taken,
        mem_address=address,
        mem_bytes=launch.mem_bytes.astype(np.int64, copy=False),
        mem_kind=launch.mem_kind.astype(np.int64, copy=False),
        pc_class=classes,
        pc_src_first=src_first,
        pc_src=src,
        pc_dst_first=dst_first,
        pc_dst=dst,
        registers=int(registers),
    )


__all__ = ["CLASS_NAMES", "CpuWork", "build_cpu_work", "cpu_classes"]
