"""The requests a trace makes of DRAM, for the DRAM model alone (``ndpsim dram-trace``).

From a saved-trace directory: each warp memory instruction outside shared memory, in the order
the launches recorded them, becomes one request per distinct block of the device's access size
its lanes touch (what a GPU's coalescer would send with no cache in between): a load reads, a
store writes, and an atomic or reduction reads and then writes. Any other path is a request
trace read by :func:`ndpsim.traceio.ramulator.read_ldst`. A trace without a request is an error.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from ndpsim.errors import TraceFormatError
from ndpsim.trace.saved import read_saved_trace
from ndpsim.trace.trace import MemoryKind, MemorySpace, Trace, expand_addresses, popcount
from ndpsim.traceio.ramulator import read_ldst

#: Memory records turned into requests at once (bounds the memory the expansion takes).
_RECORDS_PER_STEP = 1 << 16


def read_requests(path: Path, access_bytes: int) -> tuple[np.ndarray, np.ndarray]:
    """(addresses as uint64, is_write as uint8) of a saved-trace directory or a request trace."""
    if not path.is_dir():
        return read_ldst(path)
    saved = read_saved_trace(path)
    addresses, writes = trace_requests(saved.load_traces(), access_bytes)
    if not len(addresses):
        raise TraceFormatError(
            f"no requests in {path}: its {saved.launches} launches access no memory outside "
            "shared memory"
        )
    return addresses, writes


def trace_requests(traces: Sequence[Trace], access_bytes: int) -> tuple[np.ndarray, np.ndarray]:
    """The DRAM requests of ``traces``, launch after launch, each block ``access_bytes`` long
    and named by its first address."""
    addresses, writes = [], []
    for trace in traces:
        for start in range(0, len(trace.mem_mask), _RECORDS_PER_STEP):
            a, w = _requests(trace, slice(start, start + _RECORDS_PER_STEP), access_bytes)
            addresses.append(a)
            writes.append(w)
    if not addresses:
        return np.zeros(0, np.uint64), np.zeros(0, np.uint8)
    return np.concatenate(addresses), np.concatenate(writes)


def _requests(trace: Trace, part: slice, access_bytes: int) -> tuple[np.ndarray, np.ndarray]:
    """The requests of the memory records ``part`` of ``trace``: per record its reads, then
    its writes, each in ascending address order."""
    masks = trace.mem_mask[part]
    lanes = expand_addresses(masks, trace.mem_form[part], trace.mem_offset[part],
                             trace.mem_base[part], trace.mem_stride[part], trace.lane_offsets,
                             trace.addresses)  # fmt: skip
    record = np.repeat(np.arange(len(masks)), popcount(masks))
    kept = trace.mem_space[part][record] != MemorySpace.SHARED
    record = record[kept]
    block = lanes[kept] // np.uint64(access_bytes)
    kind = trace.mem_kind[part][record]
    reads, writes = kind != MemoryKind.STORE, kind != MemoryKind.LOAD
    record = np.concatenate([record[reads], record[writes]])
    is_write = np.concatenate([np.zeros(reads.sum(), np.uint8), np.ones(writes.sum(), np.uint8)])
    block = np.concatenate([block[reads], block[writes]])
    order = np.lexsort((block, is_write, record))
    record, is_write, block = record[order], is_write[order], block[order]
    first = np.ones(len(block), dtype=bool)
    first[1:] = (
        (record[1:] != record[:-1]) | (is_write[1:] != is_write[:-1]) | (block[1:] != block[:-1])
    )
    return block[first] * np.uint64(access_bytes), is_write[first]
