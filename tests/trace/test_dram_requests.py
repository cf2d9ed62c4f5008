"""The DRAM requests of a saved trace: each warp memory instruction's distinct blocks outside
shared memory, loads read, stores write, atomics read then write."""

from __future__ import annotations

import numpy as np
import pytest

from ndpsim.errors import TraceFormatError
from ndpsim.trace.dram_requests import read_requests, trace_requests
from ndpsim.workloads import execute_workload, run_workload
from ndpsim.workloads.own_kernel import OwnKernel
from ndpsim.workloads.replay import save_run
from tests.workloads.own_kernels import write_ptx


@pytest.mark.parametrize("access_bytes", [128, 64, 32])
def test_a_streaming_kernel_requests_each_block_of_its_arrays_once(access_bytes):
    run = run_workload("vadd", "tiny")  # c = a + b over 5,000 floats
    addresses, writes = trace_requests(run.traces, access_bytes)
    blocks = -(-5000 * 4 // access_bytes)
    assert len(addresses) == 3 * blocks and int(writes.sum()) == blocks
    assert np.all(addresses % access_bytes == 0)
    a, b, c = (alloc.address for alloc in run.memory.allocations)
    assert set(addresses[writes == 1].tolist()) == {c + access_bytes * i for i in range(blocks)}
    assert set(addresses[writes == 0].tolist()) == {
        base + access_bytes * i for base in (a, b) for i in range(blocks)
    }


def test_shared_memory_is_left_out_and_atomics_read_then_write(tmp_path):
    # two warps: each loads its 128 B of x, stages it in shared memory, adds 1 to one counter
    # atomically and stores its 128 B of y
    args = ["buf:f32:64:range", "buf:f32:64", "buf:u32:1"]
    run = execute_workload(OwnKernel(write_ptx(tmp_path, "MIX"), None, "1", "64", args))
    assert run.outputs["mix_param_2"].tolist() == [64]
    x, y, counter = (alloc.address for alloc in run.memory.allocations)
    addresses, writes = trace_requests(run.traces, 128)
    requests = list(zip(addresses.tolist(), writes.tolist(), strict=True))
    assert sorted(requests) == sorted([(x, 0), (x + 128, 0), (y, 1), (y + 128, 1)]
                                      + [(counter, 0), (counter, 1)] * 2)  # fmt: skip
    for warp_atomic in range(2):  # each warp's atomic: its read right before its write
        at = [i for i, r in enumerate(requests) if r[0] == counter][2 * warp_atomic]
        assert requests[at : at + 2] == [(counter, 0), (counter, 1)]


def test_a_saved_run_without_memory_requests_is_an_error(tmp_path):
    run = execute_workload(OwnKernel(write_ptx(tmp_path, "NOTHING"), None, "1", "32", []))
    saved = save_run(run, tmp_path / "nothing")
    with pytest.raises(TraceFormatError, match=r"no requests in .*nothing: its 1 launches"):
        read_requests(saved, 64)


def test_a_request_trace_file_is_read_as_before(tmp_path):
    path = tmp_path / "t.ldst"
    path.write_text("LD 0x40\nST 0x80\n")
    addresses, writes = read_requests(path, 64)
    assert addresses.tolist() == [0x40, 0x80] and writes.tolist() == [0, 1]
