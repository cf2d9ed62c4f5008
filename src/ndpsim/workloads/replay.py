"""A workload run kept as a saved-trace directory (:mod:`ndpsim.trace.saved`): written after
the run was interpreted, and read back as what a system simulates, namely its launches, its PTX
module and a device memory laid out as the run left it (the allocations' names, addresses and
sizes; the timing model reads no data). A replay therefore gives the result the run gave."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ndpsim.errors import TraceFormatError
from ndpsim.frontend.ir import Module
from ndpsim.simt.memory import BASE_ADDRESS, DeviceMemory
from ndpsim.trace.saved import (
    MANIFEST,
    MemoryLayout,
    SavedAllocation,
    SavedTrace,
    write_saved_trace,
)
from ndpsim.trace.trace import Trace
from ndpsim.workloads.base import WorkloadRun, ptx_file_module


def save_run(run: WorkloadRun, directory: Path) -> Path:
    """Write ``run`` (its launches, PTX, allocations and identity) to ``directory``."""
    memory = run.memory
    layout = MemoryLayout(
        base_address=BASE_ADDRESS,
        alignment_bytes=memory.alignment_bytes,
        size_bytes=memory.size_bytes,
        allocations=tuple(
            SavedAllocation(a.name, a.address, a.size_bytes) for a in memory.allocations
        ),
    )
    workload = run.workload
    return write_saved_trace(
        directory, run.traces, workload=workload.name, size=workload.size, seed=workload.seed,
        parameters=workload.params, check_passed=run.check.passed,
        check_detail=run.check.detail,
        ptx=Path(run.module.path), memory=layout,
    )  # fmt: skip


@dataclass
class Replay:
    """A saved run, ready to simulate: ``system.run(replay.traces, replay.module,
    replay.memory, seed=...)``."""

    saved: SavedTrace
    traces: list[Trace]
    module: Module
    memory: DeviceMemory


def load_replay(saved: SavedTrace) -> Replay:
    """The launches, module and device memory of a saved run, each checked against the
    others: every launch names a kernel of the saved PTX, and the allocations land where they
    were."""
    traces = saved.load_traces()
    module = ptx_file_module(saved.ptx)
    kernels = {f.name for f in module.kernels}
    for i, trace in enumerate(traces):
        if trace.info.kernel not in kernels:
            raise TraceFormatError(
                f"{saved.directory}: launch {i} runs kernel {trace.info.kernel!r}, which "
                f"{saved.ptx.name} does not define; its kernels: {', '.join(sorted(kernels))}"
            )
    return Replay(saved, traces, module, _laid_out(saved.memory, saved.directory / MANIFEST))


def _laid_out(layout: MemoryLayout, manifest: Path) -> DeviceMemory:
    """A device memory with the saved allocations at their addresses (zero-filled, and never
    touched: the pages are not even mapped)."""
    if layout.base_address != BASE_ADDRESS:
        raise TraceFormatError(
            f"{manifest}: the device memory began at {layout.base_address:#x}; this ndpsim "
            f"places it at {BASE_ADDRESS:#x}"
        )
    memory = DeviceMemory(alignment_bytes=layout.alignment_bytes,
                          initial_capacity_bytes=layout.size_bytes,
                          limit_bytes=max(layout.size_bytes, 1))  # fmt: skip
    for saved in layout.allocations:
        address = memory.alloc(saved.size_bytes, saved.name)
        if address != saved.address:
            raise TraceFormatError(
                f"{manifest}: allocation {saved.name!r} was at {saved.address:#x}; allocated "
                f"again in order it lands at {address:#x} (each allocation starts at the next "
                f"{layout.alignment_bytes}-byte boundary)"
            )
    if memory.size_bytes != layout.size_bytes:
        raise TraceFormatError(
            f"{manifest}: memory.size_bytes is {layout.size_bytes}; the allocations end at "
            f"{memory.size_bytes} bytes from the base"
        )
    return memory
