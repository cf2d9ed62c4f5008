"""Global device memory: one byte-addressed NumPy image with named allocations.

Allocations are placed one after another from :data:`BASE_ADDRESS`, each aligned to a page
(``alignment_bytes``, 4 KiB by default): drivers hand out page-granular memory, and TOM's mapping
analysis (sec. 3.2.1) relies on the power-of-two distances this creates between arrays. Every
kernel access is checked against the allocations: an access outside all of them, or not aligned
to its size, raises :class:`MemoryAccessError` instead of reading garbage.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass

import numpy as np

from ndpsim.errors import MemoryAccessError, NdpsimError, SimulationError
from ndpsim.simt.checks import span
from ndpsim.simt.limits import HOW_TO_RAISE, half_the_machine

#: Device addresses start here (above 4 GiB, so pointers need 64 bits as on real GPUs).
BASE_ADDRESS = 0x1_0000_0000


@dataclass(frozen=True, slots=True)
class Allocation:
    """A live region of device memory."""

    address: int
    size_bytes: int
    name: str

    @property
    def end(self) -> int:
        return self.address + self.size_bytes

    def __contains__(self, address: int) -> bool:
        return self.address <= address < self.end


class DeviceMemory:
    """The global memory a kernel reads and writes, built from NumPy arrays."""

    def __init__(self, alignment_bytes: int = 4096, initial_capacity_bytes: int = 1 << 20,
                 limit_bytes: int | None = None):  # fmt: skip
        if alignment_bytes < 8 or alignment_bytes & (alignment_bytes - 1):
            raise NdpsimError(f"alignment_bytes must be a power of two >= 8, got {alignment_bytes}")
        self.alignment_bytes = alignment_bytes
        # what the allocations may span in all; a host program past it has gone astray
        self.limit_bytes = half_the_machine() if limit_bytes is None else limit_bytes
        self._image = np.zeros(max(initial_capacity_bytes, 8), dtype=np.uint8)
        self._top = 0
        self._allocations: list[Allocation] = []
        self._starts = np.zeros(0, dtype=np.uint64)
        self._ends = np.zeros(0, dtype=np.uint64)
        self._start_list: list[int] = []

    # ------------------------------------------------------------------------ host side API
    def alloc(self, size_bytes: int, name: str | None = None) -> int:
        """Reserve ``size_bytes`` of zeroed memory; returns its device address."""
        size_bytes = int(size_bytes)
        if size_bytes < 0:
            raise NdpsimError(f"cannot allocate a negative size ({size_bytes} bytes)")
        offset = -(-self._top // self.alignment_bytes) * self.alignment_bytes
        end = offset + max(size_bytes, 1)
        if end > self.limit_bytes:
            raise SimulationError(
                f"allocating {size_bytes:,} bytes ({name or 'unnamed'}) would take device memory "
                f"past its budget of {self.limit_bytes / 2**30:.2f} GiB; "
                + HOW_TO_RAISE.format(option="--max-device-gb", key="device_bytes")
            )
        if end > self._image.size:
            capacity = max(end, 2 * self._image.size)
            capacity = -(-capacity // 8) * 8
            grown = np.zeros(capacity, dtype=np.uint8)
            grown[: self._top] = self._image[: self._top]
            self._image = grown
        self._top = end
        address = BASE_ADDRESS + offset
        allocation = Allocation(address, size_bytes, name or f"alloc{len(self._allocations)}")
        self._allocations.append(allocation)
        self._starts = np.array([a.address for a in self._allocations], dtype=np.uint64)
        self._ends = np.array([a.end for a in self._allocations], dtype=np.uint64)
        self._start_list.append(address)
        return address

    def to_device(self, array: np.ndarray, name: str | None = None) -> int:
        """Copy a host array into a new allocation; returns its device address."""
        data = np.ascontiguousarray(array)
        address = self.alloc(data.nbytes, name)
        self.write(address, data)
        return address

    def write(self, address: int, array: np.ndarray) -> None:
        """Copy a host array to ``address`` (which must lie inside one allocation)."""
        data = np.ascontiguousarray(array).view(np.uint8).reshape(-1)
        offset = self._host_offset(address, data.size)
        self._image[offset : offset + data.size] = data

    def read(self, address: int, size_bytes: int) -> np.ndarray:
        """A copy of ``size_bytes`` bytes at ``address``."""
        offset = self._host_offset(address, size_bytes)
        return self._image[offset : offset + size_bytes].copy()

    def from_device(self, address: int, dtype, count: int) -> np.ndarray:
        """A copy of ``count`` elements of ``dtype`` starting at ``address``."""
        dtype = np.dtype(dtype)
        return self.read(address, dtype.itemsize * int(count)).view(dtype)

    @property
    def allocations(self) -> tuple[Allocation, ...]:
        return tuple(self._allocations)

    def allocation_at(self, address: int) -> Allocation | None:
        """The allocation containing ``address``, if any."""
        i = bisect.bisect_right(self._start_list, address) - 1
        if i >= 0 and address < self._allocations[i].end:
            return self._allocations[i]
        return None

    @property
    def size_bytes(self) -> int:
        """Bytes spanned from the first allocation to the end of the last."""
        return self._top

    def _host_offset(self, address: int, size_bytes: int) -> int:
        allocation = self.allocation_at(address)
        if allocation is None or address + size_bytes > allocation.end:
            raise MemoryAccessError(
                f"host access of {size_bytes} bytes at {address:#x} is outside every allocation"
                f"{self._nearest(address)}"
            )
        return address - BASE_ADDRESS

    def _nearest(self, address: int) -> str:
        if not self._allocations:
            return " (nothing is allocated)"
        best = min(
            self._allocations, key=lambda a: min(abs(address - a.address), abs(address - a.end))
        )
        return f" (nearest allocation {best.name!r} spans {best.address:#x}..{best.end:#x})"

    # ---------------------------------------------------------------------- kernel side API
    def typed_view(self, dtype) -> np.ndarray:
        """The whole image viewed as ``dtype`` elements; valid until the next allocation."""
        usable = self._image.size - self._image.size % np.dtype(dtype).itemsize
        return self._image[:usable].view(dtype)

    def byte_offsets(self, addresses: np.ndarray, access_bytes: int) -> np.ndarray:
        """Offsets into the image (as int64) of accesses of ``access_bytes`` at ``addresses``
        (uint64), after checking bounds and alignment."""
        if addresses.size == 0:
            return np.zeros(0, dtype=np.int64)
        self.check(addresses, access_bytes)
        return (addresses - np.uint64(BASE_ADDRESS)).view(np.int64)

    def check(self, addresses: np.ndarray, access_bytes: int) -> None:
        """Raise :class:`MemoryAccessError` unless every access lies in one allocation and is
        aligned to its size."""
        lo, hi, misaligned = span(addresses, np.uint64(access_bytes))
        if misaligned >= 0:
            raise MemoryAccessError(
                f"misaligned {access_bytes}-byte access at address {int(addresses[misaligned]):#x}"
            )
        lo, hi = int(lo), int(hi)
        i = bisect.bisect_right(self._start_list, lo) - 1
        if i >= 0 and hi <= self._allocations[i].end:
            return  # the common case: one allocation holds every lane's access
        if not self._allocations:
            raise MemoryAccessError(
                f"{access_bytes}-byte access at address {lo:#x}: nothing is allocated"
            )
        slot = np.searchsorted(self._starts, addresses, side="right").astype(np.intp) - 1
        ends = self._ends[np.maximum(slot, 0)]
        inside = (slot >= 0) & (addresses + np.uint64(access_bytes) <= ends)
        if not inside.all():
            bad = int(addresses[np.flatnonzero(~inside)[0]])
            raise MemoryAccessError(
                f"{access_bytes}-byte access at address {bad:#x} is outside every allocation"
                f"{self._nearest(bad)}"
            )
