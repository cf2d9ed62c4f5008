"""A launch's trace as CPU threads run it: whole CTAs per CPU thread in contiguous shares, a
CTA's CUDA threads one after another up to each barrier, every instruction and access of the
trace exactly once."""

from __future__ import annotations

import numpy as np
import pytest

from ndpsim.ptx import DeviceMemory, launch
from ndpsim.trace.cpu_threads import (
    PRIVATE_BASE,
    PRIVATE_STRIDE,
    cpu_launch,
    cpu_program,
    cta_shares,
)
from ndpsim.trace.trace import MemoryKind, MemorySpace, expand_addresses
from ndpsim.workloads import kernel_module, run_workload
from tests.simt.harness import module_from

# Each CUDA thread stores its index at out[2 * gid], waits at the barrier, then stores it + 1000
# at out[2 * gid + 1]: two phases of one store each.
TWO_PHASES = """
    ld.param.u64 %rd1, [k_out];
    mov.u32 %r1, %tid.x;
    mov.u32 %r2, %ctaid.x;
    mov.u32 %r3, %ntid.x;
    mad.lo.s32 %r4, %r2, %r3, %r1;
    mul.wide.u32 %rd2, %r4, 8;
    add.s64 %rd3, %rd1, %rd2;
    st.global.u32 [%rd3], %r4;
    bar.sync 0;
    add.u32 %r5, %r4, 1000;
    st.global.u32 [%rd3+4], %r5;
    ret;
"""


def _two_phases(ctas: int, block: int):
    module = module_from(TWO_PHASES, params=".param .u64 k_out")
    mem = DeviceMemory()
    out = mem.alloc(ctas * block * 8)
    trace = launch(module, "k", ctas, block, [out], mem)
    return module, trace, out


def test_a_cta_runs_thread_after_thread_up_to_each_barrier():
    module, trace, out = _two_phases(ctas=4, block=64)
    cpu = cpu_launch(trace, module, threads=2)
    assert list(cpu.cta_thread) == [0, 0, 1, 1]
    for k, ctas in ((0, (0, 1)), (1, (2, 3))):
        mine = slice(cpu.mem_first[k], cpu.mem_first[k + 1])
        slots = (cpu.mem_address[mine].astype(np.int64) - out) // 4  # 2 * gid (+ 1 after)
        want = []
        for c in ctas:
            threads = range(c * 64, (c + 1) * 64)
            want += [2 * g for g in threads] + [2 * g + 1 for g in threads]  # phase by phase
        assert list(slots) == want
        assert (cpu.mem_kind[mine] == MemoryKind.STORE).all()


def test_each_cuda_threads_instructions_stay_in_program_order():
    module, trace, _ = _two_phases(ctas=1, block=32)
    cpu = cpu_launch(trace, module, threads=1)
    body = list(cpu.pcs())
    per_thread = len(body) // 32
    # phase 0 of every thread (up to the barrier), then phase 1 of every thread
    barrier = 8  # the pc of bar.sync
    first, second = body[: 32 * (barrier + 1)], body[32 * (barrier + 1) :]
    assert first == list(range(barrier + 1)) * 32
    assert second == list(range(barrier + 1, per_thread)) * 32
    # each access sits at a store of its thread
    assert all(body[i] in (7, 10) for i in cpu.access_instructions())


@pytest.mark.parametrize("workload", ["vadd", "rd", "bfs", "hist", "nw"])
@pytest.mark.parametrize("threads", [1, 3, 8])
def test_every_instruction_and_access_of_the_trace_runs_once(workload, threads):
    run = run_workload(workload, "tiny", 0)
    module = kernel_module(run.workload.module_name)
    for trace, cpu in zip(run.traces, cpu_program(run.traces, module, threads), strict=True):
        pcs, first, at = cpu.pcs(), cpu.instruction_first(), cpu.access_instructions()
        assert cpu.threads == threads
        assert first[-1] == len(pcs) == cpu.instruction_count == trace.num_thread_instructions
        assert cpu.mem_first[-1] == len(at) == trace.num_memory_accesses
        assert (np.diff(at) > 0).all()  # accesses in each thread's order, one per instruction
        for k in range(threads):  # an access belongs to its CPU thread's instructions
            inside = at[cpu.mem_first[k] : cpu.mem_first[k + 1]]
            assert ((inside >= first[k]) & (inside < first[k + 1])).all()
        # a segment is consecutive pcs of one CUDA thread, and its accesses lie inside it
        assert (cpu.mem_offset >= 0).all()
        segment = np.repeat(np.arange(len(cpu.seg_pc)), cpu.seg_accesses)
        assert (cpu.mem_offset < cpu.seg_length[segment]).all()
        recorded = expand_addresses(trace.mem_mask, trace.mem_form, trace.mem_offset,
                                    trace.mem_base, trace.mem_stride, trace.lane_offsets,
                                    trace.addresses).view(np.int64)  # fmt: skip
        private = (cpu.mem_space == MemorySpace.SHARED) | (cpu.mem_space == MemorySpace.LOCAL)
        assert (cpu.mem_address[private] >= PRIVATE_BASE).all()
        unmoved = (cpu.mem_address[private] - PRIVATE_BASE) % PRIVATE_STRIDE
        listed = np.concatenate([cpu.mem_address[~private], unmoved])
        assert sorted(listed) == sorted(recorded)
        memory_pcs = set(map(int, trace.mem_pc))
        assert set(map(int, pcs[at])) <= memory_pcs


def test_ctas_go_to_cpu_threads_in_contiguous_even_shares():
    assert list(cta_shares(10, 4)) == [0, 0, 0, 1, 1, 2, 2, 2, 3, 3]
    assert list(cta_shares(2, 4)) == [0, 2]  # fewer CTAs than threads: some threads idle
    with pytest.raises(ValueError, match="at least one thread"):
        module, trace, _ = _two_phases(ctas=1, block=32)
        cpu_launch(trace, module, threads=0)
