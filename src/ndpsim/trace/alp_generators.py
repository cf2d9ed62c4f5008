"""ALP's generator instructions (Oliveira et al., sec. 3.2.3, Algorithm 1): from a profiling run,
the stores whose lines the next segment reads, which ALP marks ``TRANSFER`` so that the line is
pushed to the consumer's core as it is written.

The profile is a launch as CPU threads run it (:mod:`ndpsim.trace.cpu_threads`). Each thread's
instructions go through a sequence of *segment instances*: a new instance starts whenever the
thread moves on to an instruction of another segment (``segment_of_pc``: a basic block, or a
cluster of them, :mod:`ndpsim.analysis.alp`), so a loop's iterations are one instance. As
Algorithm 1 does, for every access of an instance: if it is the first read of its 64-byte line in
the instance and a store of the previous instance (of the same thread) wrote that line, the last
such store is a generator instruction; the stores of an instance become the next instance's
"previous last writers". An atomic reads, then writes.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ndpsim.numba_cache import compiled
from ndpsim.trace.cpu_threads import CpuLaunch
from ndpsim.trace.trace import MemoryKind

#: ALP's cache line (Table 1).
LINE_SHIFT = 6


@dataclass(frozen=True)
class Generators:
    """Generator instructions of one kernel: their pcs, and for each how many times one of its
    stores fed the next segment a line (the profile's inter-segment lines)."""

    pcs: tuple[int, ...]
    lines_fed: dict[int, int]  # pc -> lines

    @property
    def inter_segment_lines(self) -> int:
        return sum(self.lines_fed.values())


@compiled
def _instances(thread_first, seg_pc, seg_length, seg_accesses, mem_offset, segment_of_pc,
               access_instance, access_pc):  # fmt: skip
    """Each access's segment instance (counted per thread) and its instruction's pc."""
    m = 0
    for t in range(len(thread_first) - 1):
        instance, current = -1, -1
        for s in range(thread_first[t], thread_first[t + 1]):
            start = np.int64(seg_pc[s])
            last = m + np.int64(seg_accesses[s])
            for o in range(np.int64(seg_length[s])):
                segment = segment_of_pc[start + o]
                if segment != current:
                    instance += 1
                    current = segment
                while m < last and np.int64(mem_offset[m]) == o:
                    access_instance[m] = instance
                    access_pc[m] = start + o
                    m += 1
            if m != last:
                return False
    return True


def generator_instructions(launch: CpuLaunch, segment_of_pc: np.ndarray) -> Generators:
    """Algorithm 1 over ``launch`` (a profiling run), with ``segment_of_pc`` the segment of
    every pc of its kernel."""
    n = len(launch.mem_address)
    instance = np.empty(n, dtype=np.int64)
    pc = np.empty(n, dtype=np.int64)
    if not _instances(launch.thread_first, launch.seg_pc, launch.seg_length,
                      launch.seg_accesses, launch.mem_offset,
                      np.asarray(segment_of_pc, dtype=np.int64), instance, pc):  # fmt: skip
        raise ValueError(f"kernel {launch.kernel!r}: an access outside its segment")
    thread = np.repeat(np.arange(launch.threads), np.diff(launch.mem_first))
    line = launch.mem_address >> LINE_SHIFT
    writes = np.flatnonzero(launch.mem_kind != MemoryKind.LOAD)  # stores, atomics, reductions
    reads = np.flatnonzero(launch.mem_kind != MemoryKind.STORE)
    # a write is keyed by the instance after its own (the one whose reads it may feed), a read
    # by its own: (thread, instance, line)
    keys = np.concatenate([np.stack([thread[writes], instance[writes] + 1, line[writes]], 1),
                           np.stack([thread[reads], instance[reads], line[reads]], 1)])  # fmt: skip
    _, key = np.unique(keys, axis=0, return_inverse=True)
    key = key.reshape(-1)
    last_write = np.full(int(key.max(initial=-1)) + 1, -1, dtype=np.int64)
    np.maximum.at(last_write, key[: len(writes)], writes)  # each key's last store
    # every key a read has, once (its first read of the line in the instance), that a store fed
    read_keys = np.unique(key[len(writes) :])
    feeders = last_write[read_keys]
    generator, count = np.unique(pc[feeders[feeders >= 0]], return_counts=True)
    fed = {int(g): int(n) for g, n in zip(generator, count, strict=True)}
    return Generators(tuple(sorted(fed)), fed)


__all__ = ["LINE_SHIFT", "Generators", "generator_instructions"]
