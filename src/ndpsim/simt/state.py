"""The architectural state of the threads of a chunk of CTAs, as NumPy columns.

Thread ``t`` of a chunk is lane ``t % 32`` of chunk warp ``t // 32``; CTAs are padded to whole
warps so warp-level reshapes are free (padding lanes are never active). Every register is one
array with an entry per thread, so an instruction is one NumPy operation over its active threads.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ndpsim.simt.memory import DeviceMemory

WARP_SIZE = 32
FULL_MASK = np.uint32(0xFFFFFFFF)

#: Generic addresses of the shared and local windows (``cvta.shared``/``cvta.local``); they lie
#: far above any device allocation, so a generic address tells its space by its range.
SHARED_WINDOW = 0x7E00_0000_0000
LOCAL_WINDOW = 0x7F00_0000_0000
WINDOW_BYTES = 1 << 40


@dataclass(frozen=True, slots=True)
class ChunkGeometry:
    """Which CTAs a chunk holds and the launch they belong to."""

    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    cta_begin: int
    cta_end: int

    @property
    def threads_per_cta(self) -> int:
        return self.block[0] * self.block[1] * self.block[2]

    @property
    def warps_per_cta(self) -> int:
        return -(-self.threads_per_cta // WARP_SIZE)

    @property
    def num_ctas(self) -> int:
        return self.cta_end - self.cta_begin

    @property
    def num_warps(self) -> int:
        return self.num_ctas * self.warps_per_cta

    @property
    def num_threads(self) -> int:
        return self.num_warps * WARP_SIZE

    def initial_masks(self) -> np.ndarray:
        """Active mask of every warp at launch: the CTA's last warp may be partial."""
        masks = np.full(self.num_warps, FULL_MASK, dtype=np.uint32)
        tail = self.threads_per_cta % WARP_SIZE
        if tail:
            masks[self.warps_per_cta - 1 :: self.warps_per_cta] = np.uint32((1 << tail) - 1)
        return masks


class ThreadState:
    """Registers, shared and local memory of one chunk, plus views of device memory."""

    def __init__(
        self,
        geometry: ChunkGeometry,
        register_dtypes: list[np.dtype],
        memory: DeviceMemory,
        params: np.ndarray,
        shared_bytes: int,
        local_bytes: int,
        symbol_addresses: dict[str, int],
    ):
        self.geometry = geometry
        n = geometry.num_threads
        self.num_threads = n
        self.regs = [np.zeros(n, dtype=dt) for dt in register_dtypes]
        self.memory = memory
        self.params = params
        self.shared_bytes = shared_bytes
        self.shared_stride = -(-max(shared_bytes, 8) // 8) * 8
        self.shared = np.zeros(geometry.num_ctas * self.shared_stride, dtype=np.uint8)
        self.local_bytes = local_bytes
        self.local_stride = -(-max(local_bytes, 8) // 8) * 8
        self.local = np.zeros(n * self.local_stride if local_bytes else 8, dtype=np.uint8)
        self.symbol_addresses = symbol_addresses
        self.warp_instructions = np.zeros(geometry.num_warps, dtype=np.int64)
        self._device_views: dict[np.dtype, np.ndarray] = {}
        self._special: dict[tuple[str, str | None], np.ndarray] = {}
        self._cta_of_thread: np.ndarray | None = None

    def device_view(self, dtype) -> np.ndarray:
        dtype = np.dtype(dtype)
        view = self._device_views.get(dtype)
        if view is None:
            view = self._device_views[dtype] = self.memory.typed_view(dtype)
        return view

    @property
    def cta_of_thread(self) -> np.ndarray:
        if self._cta_of_thread is None:
            per_cta = self.geometry.warps_per_cta * WARP_SIZE
            self._cta_of_thread = np.arange(self.num_threads, dtype=np.int64) // per_cta
        return self._cta_of_thread

    def special(self, name: str, component: str | None) -> np.ndarray:
        """The value of special register ``%name.component`` in every thread."""
        key = (name, component)
        value = self._special.get(key)
        if value is None or name in ("clock", "clock64"):
            value = self._special[key] = self._compute_special(name, component)
        return value

    def _compute_special(self, name: str, component: str | None) -> np.ndarray:
        g = self.geometry
        n = self.num_threads
        thread = np.arange(n, dtype=np.int64)
        per_cta = g.warps_per_cta * WARP_SIZE
        in_cta = thread % per_cta
        lane = (thread % WARP_SIZE).astype(np.uint32)
        axis = {"x": 0, "y": 1, "z": 2}.get(component or "x", 0)
        if name == "tid":
            bx, by, _ = g.block
            value = (in_cta % bx, (in_cta // bx) % by, in_cta // (bx * by))[axis]
        elif name == "ctaid":
            gx, gy, _ = g.grid
            cta = g.cta_begin + thread // per_cta
            value = (cta % gx, (cta // gx) % gy, cta // (gx * gy))[axis]
        elif name == "ntid":
            value = np.full(n, g.block[axis])
        elif name == "nctaid":
            value = np.full(n, g.grid[axis])
        elif name == "laneid":
            value = lane
        elif name == "warpid":
            value = in_cta // WARP_SIZE
        elif name == "nwarpid":
            value = np.full(n, g.warps_per_cta)
        elif name in ("smid", "gridid", "envreg", "globaltimer_hi") or name.startswith("envreg"):
            value = np.zeros(n)
        elif name in ("nsmid",):
            value = np.ones(n)
        elif name == "lanemask_eq":
            value = np.uint32(1) << lane
        elif name == "lanemask_lt":
            value = (np.uint64(1) << lane.astype(np.uint64)) - np.uint64(1)
        elif name == "lanemask_le":
            value = (np.uint64(2) << lane.astype(np.uint64)) - np.uint64(1)
        elif name == "lanemask_gt":
            value = ~((np.uint64(2) << lane.astype(np.uint64)) - np.uint64(1))
        elif name == "lanemask_ge":
            value = ~((np.uint64(1) << lane.astype(np.uint64)) - np.uint64(1))
        elif name in ("dynamic_smem_size", "total_smem_size", "aggr_smem_size"):
            value = np.full(n, self.shared_bytes)
        elif name in ("clock", "clock64", "clock_hi", "globaltimer", "globaltimer_lo"):
            # Functional execution has no time: a warp's clock is its instruction count.
            value = np.repeat(self.warp_instructions, WARP_SIZE)
        else:
            value = np.zeros(n)
        dtype = np.uint64 if name in ("clock64", "globaltimer") else np.uint32
        return np.asarray(value).astype(dtype)
