"""A kernel launch's dynamic trace seen by CPU threads: the scalar instruction and memory stream
each CPU thread runs when the CUDA program is executed on a CPU.

A CPU runs a CUDA kernel as CUDA-to-CPU compilers do (MCUDA, and the CPU back ends after it): a
CPU thread takes whole CTAs, and runs a CTA's CUDA threads one after another in program order,
each up to the CTA's next barrier (``bar.sync``) before any of them goes past it, so a barrier
becomes a loop boundary rather than a wait. A launch's CTAs are spread over the CPU threads in
contiguous shares (a static schedule), and the launches of a program are its phases, one after
another.

The streams come from the trace the interpreter recorded, so they are what the program computed:
each CUDA thread's path (the runs whose mask holds its lane) and each of its memory accesses
with its own address. What a CPU timing model measures is kept: the dependences between
instructions (a thread's order is its program order), the addresses and their order, and so the
working set and the reuse. What changes is that nothing is SIMD: one PTX instruction of one
thread is one CPU instruction, and the instruction count is the thread instructions of the
trace, not what a vectorising CPU compiler would emit.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ndpsim.analysis.classify import Kind, base_kind
from ndpsim.frontend.ir import Module
from ndpsim.numba_cache import compiled
from ndpsim.trace.trace import Trace, expand_addresses


@dataclass(frozen=True)
class CpuLaunch:
    """One launch as CPU threads run it. Thread ``k``'s instructions are
    ``pc[inst_first[k]:inst_first[k + 1]]`` in order; its memory accesses are
    ``mem_*[mem_first[k]:mem_first[k + 1]]``, each at instruction ``mem_inst`` (an index into
    ``pc``) in order."""

    kernel: str
    pc: np.ndarray  # int64[instructions]: the PTX pc of each instruction, thread after thread
    inst_first: np.ndarray  # int64[threads + 1]
    mem_inst: np.ndarray  # int64[accesses]
    mem_address: np.ndarray  # uint64[accesses]
    mem_bytes: np.ndarray  # int64[accesses]
    mem_kind: np.ndarray  # uint8[accesses]: MemoryKind
    mem_space: np.ndarray  # uint8[accesses]: MemorySpace
    mem_first: np.ndarray  # int64[threads + 1]
    cta_thread: np.ndarray  # int64[ctas]: the CPU thread that runs each CTA of the launch

    @property
    def threads(self) -> int:
        return len(self.inst_first) - 1

    def instructions(self, thread: int) -> np.ndarray:
        return self.pc[self.inst_first[thread] : self.inst_first[thread + 1]]


def cta_shares(ctas: int, threads: int) -> np.ndarray:
    """The CPU thread each of ``ctas`` CTAs goes to: contiguous shares as even as can be (a
    static schedule; their sizes differ by one at most)."""
    return np.arange(ctas, dtype=np.int64) * threads // max(ctas, 1) if ctas else np.zeros(0, int)


@compiled
def _counting_positions(group, first, out):
    """A stable counting sort's destinations: element ``i`` goes to the next free place of its
    ``group``, whose places start at ``first[group]`` (consumed as they are taken)."""
    for i in range(len(group)):
        g = group[i]
        out[i] = first[g]
        first[g] += 1


def cpu_launch(trace: Trace, module: Module, threads: int) -> CpuLaunch:
    """``trace`` (one launch) as ``threads`` CPU threads run it (see the module)."""
    if threads < 1:
        raise ValueError(f"a CPU program needs at least one thread, got {threads}")
    info = trace.info
    function = module.function(info.kernel)
    barrier = np.array([base_kind(i).kind is Kind.BARRIER for i in function.instructions]
                       + [False], dtype=bool)  # fmt: skip
    wpc = info.warps_per_cta
    first_warp = info.cta_begin * wpc
    ctas = info.cta_end - info.cta_begin

    # Every (run, lane) a CUDA thread executes, in each thread's program order.
    order = np.lexsort((trace.run_seq, trace.run_warp))  # runs warp by warp, in order
    run_warp = trace.run_warp.astype(np.int64)[order] - first_warp
    run_pc = trace.run_pc.astype(np.int64)[order]
    run_length = trace.run_length.astype(np.int64)[order]
    run_mask = trace.run_mask.astype(np.uint32)[order]
    # where each run starts, all warps' streams one after another, and in its own warp's
    # stream (the positions memory records give)
    global_start = np.cumsum(run_length) - run_length
    first_run = np.searchsorted(run_warp, np.arange(ctas * wpc))  # each warp's first run
    has_runs = first_run < len(run_warp)
    warp_base = np.zeros(ctas * wpc, dtype=np.int64)
    warp_base[has_runs] = global_start[first_run[has_runs]]
    run_start = global_start - warp_base[run_warp]
    bits = (run_mask[:, None] >> np.arange(32, dtype=np.uint32)) & 1
    pair_run, pair_lane = np.nonzero(bits)  # runs in order, lanes ascending within each
    thread = run_warp[pair_run] * 32 + pair_lane  # CUDA thread within the launch (warp-major)
    by_thread = np.lexsort((pair_run, thread))  # a thread's runs in its warp's order
    pair_run, pair_lane, thread = pair_run[by_thread], pair_lane[by_thread], thread[by_thread]
    lengths = run_length[pair_run]
    starts = np.cumsum(lengths) - lengths  # each pair's first instruction, threads in order
    total = int(lengths.sum())
    pair_of = np.repeat(np.arange(len(pair_run)), lengths)
    pc = run_pc[pair_run][pair_of] + (np.arange(total) - starts[pair_of])
    inst_thread = thread[pair_of]

    # Barrier phases: a thread's instructions up to and including its k-th barrier are phase k.
    flags = barrier[pc].astype(np.int64)
    # A thread's instructions are contiguous (threads in order): each starts where it changes.
    changes = np.flatnonzero(np.diff(inst_thread)) + 1
    firsts = np.concatenate([[0], changes]) if total else np.zeros(0, dtype=np.int64)
    passed = np.cumsum(flags) - flags  # barriers before each instruction, all threads'
    phase = passed - np.repeat(passed[firsts], np.diff(np.append(firsts, total)))
    cta = inst_thread // (wpc * 32)
    cpu = cta_shares(ctas, threads)[cta]
    # A CPU thread: its CTAs in order; in a CTA, phase by phase; in a phase, thread by thread.
    # The instructions are in (CTA, thread, program) order already, and a CPU thread's CTAs are
    # consecutive, so a stable counting sort by (CTA, phase) gives that order in linear time.
    phases = int(phase.max()) + 1 if total else 1
    group = cta * phases + phase
    first = np.zeros(ctas * phases + 1, dtype=np.int64)
    np.cumsum(np.bincount(group, minlength=ctas * phases), out=first[1:])
    new_index = np.empty(total, dtype=np.int64)
    _counting_positions(group, first, new_index)
    new_order = np.empty(total, dtype=np.int64)
    new_order[new_index] = np.arange(total)

    # Memory accesses: each record's lanes, at their thread's instruction.
    rec_warp = trace.mem_warp.astype(np.int64) - first_warp
    record, lane = np.nonzero((trace.mem_mask.astype(np.uint32)[:, None]
                               >> np.arange(32, dtype=np.uint32)) & 1)  # fmt: skip
    address = expand_addresses(trace.mem_mask, trace.mem_form, trace.mem_offset, trace.mem_base,
                               trace.mem_stride, trace.lane_offsets, trace.addresses)  # fmt: skip
    position = trace.mem_seq.astype(np.int64)[record]  # in the warp's stream
    warp = rec_warp[record]
    # the run holding each access's instruction, then that (run, lane)'s pair
    run = np.searchsorted(global_start, warp_base[warp] + position, side="right") - 1
    pair_index = np.full((len(run_pc), 32), -1, dtype=np.int64)
    pair_index[pair_run, pair_lane] = np.arange(len(pair_run))
    pair = pair_index[run, lane]
    if (pair < 0).any():
        raise ValueError(f"kernel {info.kernel!r}: a memory access of a lane the trace shows "
                         "inactive")  # fmt: skip
    old = starts[pair] + (position - run_start[run])
    mem_inst = new_index[old]
    mem_order = np.argsort(mem_inst, kind="stable")
    mem_inst = mem_inst[mem_order]

    cpu_of_inst = cpu[new_order]
    inst_first = np.searchsorted(cpu_of_inst, np.arange(threads + 1))
    mem_first = np.searchsorted(cpu_of_inst[mem_inst], np.arange(threads + 1))
    return CpuLaunch(
        kernel=info.kernel,
        pc=pc[new_order],
        inst_first=inst_first.astype(np.int64),
        mem_inst=mem_inst,
        mem_address=address[mem_order],
        mem_bytes=trace.mem_size.astype(np.int64)[record][mem_order],
        mem_kind=trace.mem_kind[record][mem_order],
        mem_space=trace.mem_space[record][mem_order],
        mem_first=mem_first.astype(np.int64),
        cta_thread=cta_shares(ctas, threads),
    )


def cpu_program(traces: list[Trace], module: Module, threads: int) -> list[CpuLaunch]:
    """A program's launches, its phases one after another, as ``threads`` CPU threads run
    them."""
    return [cpu_launch(trace, module, threads) for trace in traces]
