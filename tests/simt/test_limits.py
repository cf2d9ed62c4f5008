"""The interpreter's bounds: every runaway ends in a SimulationError naming kernel and bound."""

from __future__ import annotations

import numpy as np
import pytest

from ndpsim.errors import LaunchError, SimulationError
from ndpsim.ptx import DeviceMemory, launch, launch_chunks
from ndpsim.simt.limits import Limits, TraceMeter
from ndpsim.workloads import run_workload
from ndpsim.workloads.base import Device
from tests.simt.harness import module_from

STORE = """
    ld.param.u64 %rd1, [k_out];
    mov.u32 %r1, %tid.x;
    mul.wide.u32 %rd2, %r1, 4;
    add.s64 %rd3, %rd1, %rd2;
    st.global.u32 [%rd3], %r1;
    ret;
"""


def _store_module():
    return module_from(STORE, params=".param .u64 k_out")


def test_a_trace_past_its_budget_stops_the_launch_with_the_option_to_raise_it():
    module = _store_module()
    mem = DeviceMemory()
    out = mem.alloc(4096 * 4)
    with pytest.raises(SimulationError, match=r"kernel 'k'.*budget.*--max-trace-gb"):
        launch(module, "k", 16, 256, [out], mem, limits=Limits(trace_bytes=2048))
    trace = launch(module, "k", 16, 256, [out], mem, limits=Limits(trace_bytes=1 << 20))
    assert trace.num_warp_instructions == 16 * 8 * 6


def test_the_trace_budget_counts_every_launch_of_a_host_program():
    module = _store_module()
    meter = TraceMeter(Limits(trace_bytes=20_000))
    mem = DeviceMemory()
    out = mem.alloc(256 * 4)
    launch(module, "k", 1, 256, [out], mem, meter=meter)
    used = meter.used_bytes
    assert 0 < used < 20_000
    with pytest.raises(SimulationError, match="budget"):
        for _ in range(20_000 // used + 1):
            launch(module, "k", 1, 256, [out], mem, meter=meter)


def test_without_recording_no_trace_is_counted():
    module = _store_module()
    meter = TraceMeter(Limits(trace_bytes=1))
    mem = DeviceMemory()
    launch(module, "k", 4, 256, [mem.alloc(1024 * 4)], mem, record=False, meter=meter)
    assert meter.used_bytes == 0


def test_a_host_program_past_its_launch_budget_is_stopped():
    device = Device(_store_module(), limits=Limits(launches=3))
    out = device.alloc(32 * 4, "out")
    for _ in range(3):
        device.launch("k", 1, 32, [out])
    with pytest.raises(SimulationError, match=r"budget of 3 launches.*--max-launches"):
        device.launch("k", 1, 32, [out])


def test_device_memory_past_its_budget_is_refused_before_it_is_taken():
    device = Device(_store_module(), limits=Limits(device_bytes=1 << 20))
    device.alloc(512 << 10, "half")
    with pytest.raises(
        SimulationError, match=r"allocating 1,048,576 bytes \(big\).*--max-device-gb"
    ):
        device.alloc(1 << 20, "big")
    assert device.memory.allocations[-1].name == "half"


def test_a_workload_runs_within_limits_it_fits_and_stops_at_one_it_does_not():
    assert run_workload("bfs", "tiny", limits=Limits(launches=100)).check.passed
    with pytest.raises(SimulationError, match="launches"):
        run_workload("bfs", "tiny", limits=Limits(launches=2))


def test_chunks_shrink_to_the_memory_bound_and_a_cta_that_cannot_fit_is_refused():
    module = module_from(STORE, params=".param .u64 k_out", decls=".local .b8 big[65536];\n")
    mem = DeviceMemory()
    out = mem.alloc(1024 * 4)
    # 256 threads x 64 KiB of local memory = 16 MiB per CTA: a 40 MiB bound runs two per chunk
    chunks = list(
        launch_chunks(module, "k", 4, 256, [out], mem, limits=Limits(chunk_bytes=40 << 20))
    )
    assert [(c.info.cta_begin, c.info.cta_end) for c in chunks] == [(0, 2), (2, 4)]
    assert np.array_equal(mem.from_device(out, np.uint32, 256), np.arange(256))
    with pytest.raises(LaunchError, match="one CTA of 256 threads needs 16 MiB"):
        launch(module, "k", 4, 256, [out], mem, limits=Limits(chunk_bytes=8 << 20))


@pytest.mark.parametrize(
    ("grid", "block", "message"),
    [
        ((2**31, 1, 1), 32, "grid x may be at most"),
        ((1, 65_536), 32, "grid y may be at most"),
        (1, (1, 1, 65), "block z may be at most"),
        (1, ("a",), "1 to 3 positive sizes"),
    ],
)
def test_grids_and_blocks_beyond_cuda_limits_are_refused(grid, block, message):
    mem = DeviceMemory()
    with pytest.raises(LaunchError, match=message):
        launch(_store_module(), "k", grid, block, [mem.alloc(4)], mem)


def test_dynamic_shared_memory_is_bounded():
    mem = DeviceMemory()
    with pytest.raises(LaunchError, match="dynamic shared memory"):
        launch(_store_module(), "k", 1, 32, [mem.alloc(128)], mem, shared_bytes=1 << 40)


@pytest.mark.parametrize(
    "key", ["instructions_per_launch", "launches", "trace_bytes", "device_bytes", "chunk_bytes"]
)
@pytest.mark.parametrize("value", [0, -1, True, 1.5])
def test_limits_must_be_positive_integers(key, value):
    with pytest.raises(LaunchError, match=key):
        Limits(**{key: value})


def test_a_module_no_longer_used_is_freed_with_its_analyses_and_program():
    # caches keyed by the function once held it alive through values referring back to it:
    # 30,000 fuzzed modules took 4.6 GB
    import gc
    import weakref

    module = _store_module()  # parsed, analysed and decoded
    function = weakref.ref(module.functions["k"])
    assert {"analysis", "program"} <= set(module.functions["k"].derived)
    del module
    gc.collect()
    assert function() is None
