"""The memory a system's state arrays will take, estimated from its config alone, so that a
config whose arrays cannot fit is refused when the system is built, naming the keys that size
them, instead of ending in a MemoryError once the workload has been interpreted.

Each estimate follows the builder that allocates the arrays (:func:`ndpsim.hw.cache.build_caches`,
:func:`ndpsim.hw.dram.footprint.state_bytes` for the DRAM, :func:`ndpsim.hw.core.sm.build_sm_state`,
:func:`ndpsim.hw.requests.request_pool`, :func:`ndpsim.engine.events.event_queue`,
:meth:`ndpsim.hw.pagetable.PageTable.build`), counting the arrays that grow with config values
and leaving out the fixed-size ones; a test holds the estimates to what the builders allocate.
Arrays a workload sizes (its traces, a launch's CTA tables) are not counted, except the
registers of every warp slot, for which a kernel of :data:`ASSUMED_REGISTERS` registers is
assumed.
"""

from __future__ import annotations

from ndpsim.errors import ConfigError
from ndpsim.hostmemory import check_fits
from ndpsim.hw.dram.footprint import INT64, state_bytes
from ndpsim.hw.requests import REQUEST_FIELDS
from ndpsim.policy.mapping import ADDRESS_MAPPINGS
from ndpsim.systems.gpu.config import GpuSystemConfig
from ndpsim.systems.gpu.layout import gpu_cores
from ndpsim.systems.gpu.model import headroom

#: Registers of the kernel whose ready times each warp slot keeps (the suite's kernels have up
#: to a few hundred).
ASSUMED_REGISTERS = 256
#: Per-slot arrays of the SM state besides registers and loads (warp, CTA, position, ...).
_SLOT_ARRAYS = 9
#: Per-slot arrays of the offload state (the instance a slot waits for or runs, ...).
_OFFLOAD_SLOT_ARRAYS = 3
#: Arrays of a load slot (lines left, pc, completion time).
_LOAD_ARRAYS = 3
#: Arrays of an event-queue entry (heap time, key, slot, kind, two arguments, free list).
_EVENT_ARRAYS = 7


def cache_bytes(count: int, size_bytes: int, ways: int, line_bytes: int, mshrs: int) -> int:
    """``count`` caches as ``build_caches`` lays them out: a tag, an age and a dirty bit per
    line, a line and a waiting-request head per MSHR."""
    lines = max(1, size_bytes // (ways * line_bytes)) * ways
    return count * (lines * (2 * INT64 + 1) + max(mshrs, 1) * 2 * INT64)


def gpu_footprint(config: GpuSystemConfig) -> dict[str, int]:
    """The bytes of a GPU system's big arrays, by what they are and the keys that size them."""
    c = config
    cores = gpu_cores(c)  # as the system places them: the arrays hold the most slots of any
    sms, slots = cores.count, int(cores.slots().max())
    dram = c.memory.dram_preset()
    l1 = cache_bytes(sms, c.l1.size_bytes, c.l1.ways, c.l1.line_bytes, c.l1.mshrs)
    l2_slice = c.l2.size_bytes // c.l2.slices
    l2 = cache_bytes(c.l2.slices, l2_slice, c.l2.ways, c.l2.line_bytes, c.l2.mshrs)
    per_slot = _SLOT_ARRAYS + ASSUMED_REGISTERS + _LOAD_ARRAYS * c.sm.load_slots
    warp_state = INT64 * (sms * slots * per_slot + 3 * sms * c.sm.schedulers)
    in_flight = 4 * headroom(c.sm.count, c.sm.schedulers)  # as GpuSystem.run sizes the pools
    pools = INT64 * in_flight * (REQUEST_FIELDS + 1 + _EVENT_ARRAYS)
    who = "(sm.count + memory.cubes)" if c.ndp else "sm.count"
    warps = "max(sm.warps, ndp.stack_warps)" if c.ndp else "sm.warps"
    parts = {
        f"L1s ({who} x l1.size_bytes, l1.mshrs)": l1,
        "L2 (l2.size_bytes, l2.slices x l2.mshrs)": l2,
        f"warp slots ({who} x {warps}, sm.load_slots, registers)": warp_state,
        "requests in flight (sm.count x sm.schedulers)": pools,
        "DRAM state (memory.cubes x memory.dram's banks and queues)": (
            c.memory.cubes * state_bytes(dram)
        ),
    }
    if c.ndp:
        parts[f"offload state per warp slot ({who} x {warps})"] = (
            INT64 * sms * slots * _OFFLOAD_SLOT_ARRAYS
        )
    if ADDRESS_MAPPINGS.get(c.memory.mapping).placement == "random":  # a permutation of frames
        frames = c.memory.cubes * dram.organization.capacity_bytes // c.memory.page_bytes
        parts["page frames (memory.cubes x memory.dram's capacity / memory.page_bytes)"] = (
            INT64 * frames
        )
    return parts


def check_gpu_fits(config: GpuSystemConfig, available: int | None = None) -> None:
    """Refuse a GPU system whose arrays need more than ``available`` bytes (by default the
    machine's free memory) with a ConfigError naming the keys behind the biggest ones."""
    check_fits(gpu_footprint(config), f"system {config.name!r}", ConfigError, available)
