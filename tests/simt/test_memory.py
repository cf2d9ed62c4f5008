"""Device memory: allocation, copies, and the checks kernels rely on."""

from __future__ import annotations

import numpy as np
import pytest

from ndpsim.errors import MemoryAccessError, NdpsimError
from ndpsim.simt.memory import BASE_ADDRESS, DeviceMemory


def test_allocations_are_page_aligned_named_and_zeroed():
    mem = DeviceMemory()
    a = mem.alloc(10, "a")
    b = mem.to_device(np.arange(5, dtype=np.int64), "b")
    assert a == BASE_ADDRESS and b == BASE_ADDRESS + 4096
    assert mem.allocation_at(b + 39).name == "b"
    assert mem.allocation_at(a + 10) is None  # between allocations
    assert not mem.from_device(a, np.uint8, 10).any()
    np.testing.assert_array_equal(mem.from_device(b, np.int64, 5), np.arange(5))


def test_growing_the_image_keeps_earlier_data():
    mem = DeviceMemory(initial_capacity_bytes=64)
    first = mem.to_device(np.arange(16, dtype=np.float32))
    mem.alloc(1 << 22)
    np.testing.assert_array_equal(mem.from_device(first, np.float32, 16), np.arange(16))


def test_host_copies_outside_allocations_fail():
    mem = DeviceMemory()
    a = mem.alloc(16, "a")
    with pytest.raises(MemoryAccessError, match="nearest allocation 'a'"):
        mem.read(a + 8, 16)
    with pytest.raises(NdpsimError, match="power of two"):
        DeviceMemory(alignment_bytes=1000)


def test_kernel_access_checks_bounds_alignment_and_spanning():
    mem = DeviceMemory()
    a = mem.alloc(64, "a")
    b = mem.alloc(64, "b")
    inside = np.array([a, a + 60, b, b + 4], dtype=np.uint64)
    offsets = mem.byte_offsets(inside, 4)
    np.testing.assert_array_equal(offsets, inside.astype(np.int64) - BASE_ADDRESS)
    with pytest.raises(MemoryAccessError, match="misaligned 8-byte"):
        mem.check(np.array([a + 4], dtype=np.uint64), 8)
    with pytest.raises(MemoryAccessError, match=f"{a + 64:#x}"):
        mem.check(np.array([a, a + 64], dtype=np.uint64), 4)
