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

A CPU thread's ``__shared__`` arrays and its CUDA threads' local frames live in a private area
of its own above the device memory (see ``PRIVATE_BASE``), as a CUDA-to-CPU compiler allocates
them.

A stream is stored as *segments*: straight runs of consecutive pcs of one CUDA thread (a
trace run's share of one lane, cut at barriers), each with its accesses, so that a launch of a
hundred million instructions costs a few bytes per segment and per access, not per instruction;
the lowering is one compiled pass over the trace's runs and records.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ndpsim.analysis.classify import Kind, base_kind
from ndpsim.frontend.ir import Module
from ndpsim.numba_cache import compiled
from ndpsim.trace.trace import AFFINE, NARROW, MemorySpace, Trace, popcount

#: Where a CPU thread's shared and local memory live: its CTAs' ``__shared__`` arrays become one
#: buffer it reuses CTA after CTA, and its CUDA threads' local frames one stack frame, as
#: CUDA-to-CPU compilers allocate them. Thread ``t``'s shared buffer is slot ``2t`` and its
#: local frame slot ``2t + 1`` of a private area above the device memory (whose addresses stay
#: below 2^40); slots are 16 MiB and 68 KiB apart, so that different threads' buffers do not
#: all fall in the same sets of a cache (a power-of-two stride would put them there).
PRIVATE_BASE, PRIVATE_STRIDE, PRIVATE_LIMIT = 1 << 40, (16 << 20) + (68 << 10), 16 << 20

# what the lowering's counting pass found wrong (it returns the first)
_OK, _INACTIVE_LANE, _PRIVATE_BEYOND, _OVERFLOW = 0, 1, 2, 3


@dataclass(frozen=True)
class CpuLaunch:
    """One launch as CPU threads run it. Thread ``k`` runs segments ``thread_first[k]`` up to
    ``thread_first[k + 1]`` in order, and makes accesses ``mem_first[k]`` up to ``mem_first[k +
    1]`` in order; segment ``s`` is pcs ``seg_pc[s]`` up to ``seg_pc[s] + seg_length[s]`` and
    makes the next ``seg_accesses[s]`` of its thread's accesses, each by the instruction
    ``mem_offset`` places into the segment. Shared and local addresses are already in the
    thread's private area. Lengths, counts and offsets within a segment are ``uint16`` (a
    kernel's straight runs are shorter than 65,536 instructions; a longer kernel gets
    ``int32``)."""

    kernel: str
    seg_pc: np.ndarray  # int32[segments]
    seg_length: np.ndarray  # uint16[segments]
    seg_accesses: np.ndarray  # uint16[segments]
    thread_first: np.ndarray  # int64[threads + 1]
    mem_address: np.ndarray  # int64[accesses]
    mem_offset: np.ndarray  # uint16[accesses]
    mem_bytes: np.ndarray  # uint16[accesses]
    mem_kind: np.ndarray  # uint8[accesses]: MemoryKind
    mem_space: np.ndarray  # uint8[accesses]: MemorySpace
    mem_first: np.ndarray  # int64[threads + 1]
    cta_thread: np.ndarray  # int64[ctas]: the CPU thread that runs each CTA of the launch

    @property
    def threads(self) -> int:
        return len(self.thread_first) - 1

    @property
    def instruction_count(self) -> int:
        return int(self.seg_length.sum(dtype=np.int64))

    def pcs(self) -> np.ndarray:
        """Every instruction's pc, thread after thread (expanded: for tests and analyses of
        small launches, not for the timing model)."""
        lengths = self.seg_length.astype(np.int64)
        starts = np.cumsum(lengths) - lengths
        segment = np.repeat(np.arange(len(lengths)), lengths)
        return self.seg_pc.astype(np.int64)[segment] + np.arange(len(segment)) - starts[segment]

    def instruction_first(self) -> np.ndarray:
        """Where each thread's instructions start in :meth:`pcs` (and end: ``threads + 1``)."""
        ends = np.concatenate([[0], np.cumsum(self.seg_length, dtype=np.int64)])
        return ends[self.thread_first]

    def access_instructions(self) -> np.ndarray:
        """The index in :meth:`pcs` of each access's instruction."""
        ends = np.concatenate([[0], np.cumsum(self.seg_length, dtype=np.int64)])
        segment = np.repeat(np.arange(len(self.seg_length)), self.seg_accesses)
        return ends[segment] + self.mem_offset


def cta_shares(ctas: int, threads: int) -> np.ndarray:
    """The CPU thread each of ``ctas`` CTAs goes to: contiguous shares as even as can be (a
    static schedule; their sizes differ by one at most)."""
    return np.arange(ctas, dtype=np.int64) * threads // max(ctas, 1) if ctas else np.zeros(0, int)


@compiled(inline=True)
def _lanes_below(mask, lane):
    """How many lanes below ``lane`` ``mask`` holds (a popcount)."""
    x = mask & ((np.int64(1) << lane) - 1)
    x = x - ((x >> 1) & 0x55555555)
    x = (x & 0x33333333) + ((x >> 2) & 0x33333333)
    return (((x + (x >> 4)) & 0x0F0F0F0F) * 0x01010101 & 0xFFFFFFFF) >> 24


@compiled
def _lower(cta_cpu, wpc, run_first, run_pc, run_length, run_mask, run_seq, rec_first,
           rec_seq, rec_mask, rec_form, rec_offset, rec_base, rec_stride, rec_size, rec_kind,
           rec_space, lane_offsets, addresses, next_barrier, device_offset, first_thread, at_run,
           at_offset, at_record,
           seg_pc, seg_length, seg_accesses, thread_end, mem_address, mem_offset, mem_bytes,
           mem_kind, mem_space, mem_end, counts):  # fmt: skip
    """Walk every CTA's threads phase by phase (see the module), writing the segments and
    accesses (the arrays are sized to the most the trace may need: a run's share of a lane
    that falls through from the lane's previous run joins its segment). ``counts`` gets
    (segments, accesses); returns _OK or what was wrong. ``at_*`` are scratch: each CUDA
    thread of the CTA at hand, its next run, its place in that run, and its next record."""
    segments, accesses = 0, 0
    threads_per_cta = wpc * 32
    for cta in range(len(cta_cpu)):
        cpu = cta_cpu[cta]
        for t in range(threads_per_cta):
            w = cta * wpc + t // 32
            at_run[t], at_offset[t], at_record[t] = run_first[w], 0, rec_first[w]
        more = True
        while more:  # one phase of every thread: up to and including its next barrier
            more = False
            for t in range(threads_per_cta):
                w, lane = cta * wpc + t // 32, t % 32
                bit = np.int64(1) << lane
                r, last_run = at_run[t], run_first[w + 1]
                k, last_record = at_record[t], rec_first[w + 1]
                walk = segments  # this thread's first segment of the phase
                while r < last_run:
                    if run_mask[r] & bit == 0:
                        r += 1
                        continue
                    offset = at_offset[t]
                    start, run_end = run_pc[r] + offset, run_pc[r] + run_length[r]
                    barrier = next_barrier[start]
                    stop = min(run_end, barrier + 1)
                    low = run_seq[r] + offset  # the segment's place in its warp's stream
                    high = low + stop - start
                    if segments > walk and seg_pc[segments - 1] + seg_length[segments - 1] == start:
                        # it falls through from the thread's previous run: one segment
                        base = np.int64(seg_pc[segments - 1])
                        seg_length[segments - 1] += stop - start
                        opened = segments - 1
                    else:
                        if segments == len(seg_pc):
                            return _OVERFLOW
                        base = start
                        seg_pc[segments], seg_length[segments] = start, stop - start
                        seg_accesses[segments] = 0
                        opened = segments
                        segments += 1
                    while k < last_record and rec_seq[k] < high:
                        mask = rec_mask[k]
                        if mask & bit:
                            if rec_seq[k] < low:
                                return _INACTIVE_LANE
                            if rec_form[k] == AFFINE:
                                address = rec_base[k] + lane * rec_stride[k]
                            elif rec_form[k] == NARROW:
                                address = rec_base[k] + np.int64(
                                    lane_offsets[rec_offset[k] + _lanes_below(mask, lane)]
                                )
                            else:
                                address = addresses[rec_offset[k] + _lanes_below(mask, lane)]
                            space = rec_space[k]
                            if space == MemorySpace.SHARED or space == MemorySpace.LOCAL:
                                if address < 0 or address >= PRIVATE_LIMIT:
                                    return _PRIVATE_BEYOND
                                slot = 2 * (first_thread + cpu) + (
                                    1 if space == MemorySpace.LOCAL else 0
                                )
                                address += PRIVATE_BASE + slot * PRIVATE_STRIDE
                            else:
                                address += device_offset
                            if accesses == len(mem_address):
                                return _OVERFLOW
                            mem_address[accesses] = address
                            mem_offset[accesses] = start - base + rec_seq[k] - low
                            mem_bytes[accesses] = rec_size[k]
                            mem_kind[accesses] = rec_kind[k]
                            mem_space[accesses] = space
                            seg_accesses[opened] += 1
                            accesses += 1
                        k += 1
                    if stop == run_end:
                        r += 1
                        at_offset[t] = 0
                    else:
                        at_offset[t] = stop - run_pc[r]
                    if barrier < run_end:  # the thread's phase ends at the barrier
                        break
                at_run[t], at_record[t] = r, k
                more = more or r < last_run
        thread_end[cpu] = segments
        mem_end[cpu] = accesses
    counts[0], counts[1] = segments, accesses
    return _OK


def cpu_launch(trace: Trace, module: Module, threads: int, device_offset: int = 0,
               first_thread: int = 0) -> CpuLaunch:  # fmt: skip
    """``trace`` (one launch) as ``threads`` CPU threads run it (see the module). With several
    programs at once, a program's device memory addresses move by ``device_offset`` bytes (its
    place in the address space they share) and its threads are numbered from
    ``first_thread`` (their private buffers' slots)."""
    if threads < 1:
        raise ValueError(f"a CPU program needs at least one thread, got {threads}")
    info = trace.info
    function = module.function(info.kernel)
    pcs = len(function.instructions)
    # the first barrier at or after each pc (pcs: none)
    barrier = np.array([base_kind(i).kind is Kind.BARRIER for i in function.instructions]
                       + [True])  # fmt: skip
    next_barrier = np.flatnonzero(barrier)[np.cumsum(barrier) - barrier]
    next_barrier[next_barrier == pcs] = np.iinfo(np.int64).max // 2
    wpc = info.warps_per_cta
    first_warp = info.cta_begin * wpc
    ctas = info.cta_end - info.cta_begin
    warps = np.arange(ctas * wpc + 1)

    runs = np.lexsort((trace.run_seq, trace.run_warp))  # each warp's runs in its order
    run_first = np.searchsorted(trace.run_warp[runs].astype(np.int64) - first_warp, warps)
    records = np.lexsort((trace.mem_seq, trace.mem_warp))
    rec_first = np.searchsorted(trace.mem_warp[records].astype(np.int64) - first_warp, warps)
    cta_cpu = cta_shares(ctas, threads)

    # Each (run, lane) is at most one segment per barrier in the run, plus one unless the run
    # ends with a barrier; each lane of a record is one access.
    barriers_before = np.concatenate([[0], np.cumsum(barrier[:-1])])
    run_pc, run_length = trace.run_pc.astype(np.int64), trace.run_length.astype(np.int64)
    run_barriers = barriers_before[run_pc + run_length] - barriers_before[run_pc]
    pieces = run_barriers + ~barrier[run_pc + run_length - 1]
    segments = int((popcount(trace.run_mask) * pieces).sum())
    accesses = int(popcount(trace.mem_mask).sum())
    within = np.uint16 if pcs < 1 << 16 else np.int32  # a count or place within a segment
    seg_pc, seg_length = np.empty(segments, np.int32), np.empty(segments, within)
    seg_accesses = np.empty(segments, within)
    mem_address, mem_offset = np.empty(accesses, np.int64), np.empty(accesses, within)
    mem_bytes = np.empty(accesses, np.uint16)
    mem_kind, mem_space = np.empty(accesses, np.uint8), np.empty(accesses, np.uint8)
    thread_end, mem_end = np.zeros(threads, np.int64), np.zeros(threads, np.int64)
    counts = np.zeros(2, dtype=np.int64)
    status = _lower(
        cta_cpu, wpc, run_first, trace.run_pc[runs], trace.run_length[runs],
        trace.run_mask[runs].astype(np.int64), trace.run_seq[runs], rec_first,
        trace.mem_seq[records], trace.mem_mask[records].astype(np.int64),
        trace.mem_form[records], trace.mem_offset[records],
        trace.mem_base[records].view(np.int64), trace.mem_stride[records],
        trace.mem_size[records], trace.mem_kind[records], trace.mem_space[records],
        trace.lane_offsets, trace.addresses.view(np.int64), next_barrier, device_offset,
        first_thread,
        *(np.zeros(wpc * 32, np.int64) for _ in range(3)), seg_pc, seg_length, seg_accesses,
        thread_end, mem_address, mem_offset, mem_bytes, mem_kind, mem_space, mem_end,
        counts)  # fmt: skip
    if status == _INACTIVE_LANE:
        raise ValueError(f"kernel {info.kernel!r}: a memory access of a lane the trace shows "
                         "inactive")  # fmt: skip
    if status == _PRIVATE_BEYOND:
        raise ValueError(f"kernel {info.kernel!r}: a shared or local address beyond "
                         f"{PRIVATE_LIMIT:,} bytes")  # fmt: skip
    if status == _OVERFLOW or counts[1] != accesses:
        raise ValueError(
            f"kernel {info.kernel!r}: the trace's runs and records disagree "
            f"(its CUDA threads make {counts[1]:,} of its {accesses:,} accesses)"
        )
    # a thread without CTAs ends where the one before it did
    return CpuLaunch(
        kernel=info.kernel, seg_pc=seg_pc[: counts[0]], seg_length=seg_length[: counts[0]],
        seg_accesses=seg_accesses[: counts[0]],
        thread_first=np.concatenate([[0], np.maximum.accumulate(thread_end)]),
        mem_address=mem_address, mem_offset=mem_offset, mem_bytes=mem_bytes, mem_kind=mem_kind,
        mem_space=mem_space, mem_first=np.concatenate([[0], np.maximum.accumulate(mem_end)]),
        cta_thread=cta_cpu,
    )  # fmt: skip


def cpu_program(traces: list[Trace], module: Module, threads: int) -> list[CpuLaunch]:
    """A program's launches, its phases one after another, as ``threads`` CPU threads run
    them."""
    return [cpu_launch(trace, module, threads) for trace in traces]
