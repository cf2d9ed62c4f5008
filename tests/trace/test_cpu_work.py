"""CPU threads' streams as the core models read them."""

from __future__ import annotations

import numpy as np

from ndpsim.frontend.parser import parse_ptx
from ndpsim.trace import cpu_work as k
from ndpsim.trace.cpu_threads import cpu_program
from ndpsim.trace.trace import MemorySpace
from ndpsim.workloads import kernel_module, run_workload


def _work(name: str, threads: int):
    functional = run_workload(name, "tiny", 0)
    module = kernel_module(functional.workload.module_name)
    launches = cpu_program(functional.traces, module, threads)
    return [k.build_cpu_work(launch, module) for launch in launches], launches


def test_classes_follow_what_an_x86_core_does_with_the_operation():
    text = """.version 9.0
.target sm_75
.address_size 64
.visible .entry f(.param .u64 p)
{
    .reg .b32 %r<8>; .reg .f32 %f<8>; .reg .b64 %rd<4>;
    ld.param.u64 %rd1, [p];
    add.s32 %r1, %r2, %r3;
    mul.lo.s32 %r4, %r1, %r1;
    div.s32 %r5, %r4, %r1;
    fma.rn.f32 %f1, %f2, %f3, %f4;
    div.rn.f32 %f5, %f1, %f2;
    sqrt.rn.f32 %f6, %f5;
    ld.global.f32 %f7, [%rd1];
    st.global.f32 [%rd1], %f7;
    atom.global.add.u32 %r6, [%rd1], 1;
    bar.sync 0;
    ret;
}
"""
    function = parse_ptx(text, "f.ptx").functions["f"]
    assert list(k.cpu_classes(function)) == [
        k.K_PARAM, k.K_INT, k.K_MUL, k.K_DIV, k.K_FP, k.K_FDIV, k.K_SFU, k.K_LOAD, k.K_STORE,
        k.K_ATOMIC, k.K_NOP, k.K_BRANCH,
    ]  # fmt: skip


def test_a_taken_branch_is_one_whose_thread_goes_elsewhere():
    (work,), _ = _work("gemv", 2)
    branches = work.pc_class[work.inst_pc] == k.K_BRANCH
    assert work.inst_taken[~branches].sum() == 0
    # a taken branch's next instruction is not the following pc; a fall-through's is
    following = np.append(work.inst_pc[1:], -1)
    taken = branches & (work.inst_taken == 1)
    assert (following[taken] != work.inst_pc[taken] + 1).all()
    assert 0 < taken.sum() < branches.sum()


def test_each_cpu_thread_has_shared_memory_of_its_own_apart_from_device_memory():
    works, launches = _work("pr", 3)
    work, launch = works[0], launches[0]
    shared = launch.mem_space == MemorySpace.SHARED
    assert shared.any()
    addresses = work.mem_address[shared]
    assert (addresses >= k.PRIVATE_BASE).all()
    slot = (addresses - k.PRIVATE_BASE) // k.PRIVATE_STRIDE
    thread = np.repeat(np.arange(launch.threads), np.diff(launch.mem_first))[shared]
    assert (slot == 2 * thread).all()
    assert (work.mem_address[~shared] < k.PRIVATE_BASE).all()
