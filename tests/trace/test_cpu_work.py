"""CPU threads' streams as the core models read them."""

from __future__ import annotations

import numpy as np

from ndpsim.frontend.parser import parse_ptx
from ndpsim.trace import cpu_work as k
from ndpsim.trace.cpu_threads import PRIVATE_BASE, PRIVATE_STRIDE, cpu_program
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


def test_a_hand_made_stream_is_cut_into_segments_where_the_pcs_jump():
    # pcs 0 1 2 | 0 1 | 5 6, the loads at pc 1 and pc 6
    classes = [k.K_INT, k.K_LOAD, k.K_BRANCH, k.K_INT, k.K_INT, k.K_INT, k.K_LOAD]
    work = k.stream_work([0, 1, 2, 0, 1, 5, 6], classes, [[]] * 7, [[]] * 7,
                         addresses=[64, 128, 192])  # fmt: skip
    assert list(work.seg_pc) == [0, 0, 5] and list(work.seg_length) == [3, 2, 2]
    assert list(work.seg_accesses) == [1, 1, 1]  # one access in each segment
    assert list(work.mem_offset) == [1, 1, 1]
    assert work.instruction_count == 7 and work.threads == 1


def test_each_cpu_thread_has_shared_memory_of_its_own_apart_from_device_memory():
    works, launches = _work("pr", 3)
    work, launch = works[0], launches[0]
    shared = launch.mem_space == MemorySpace.SHARED
    assert shared.any()
    addresses = work.mem_address[shared]
    assert (addresses >= PRIVATE_BASE).all()
    slot = (addresses - PRIVATE_BASE) // PRIVATE_STRIDE
    thread = np.repeat(np.arange(launch.threads), np.diff(launch.mem_first))[shared]
    assert (slot == 2 * thread).all()
    assert (work.mem_address[~shared] < PRIVATE_BASE).all()


def test_programs_launches_merge_into_one_stream_per_core():
    classes = [k.K_INT, k.K_LOAD, k.K_INT]
    first = k.stream_work([0, 1, 2], classes, [[]] * 3, [[0]] * 3, addresses=[64])
    second = k.stream_work([0, 1, 1], classes, [[]] * 3, [[0]] * 3, addresses=[128, 192])
    third = k.stream_work([2, 0], classes, [[]] * 3, [[0]] * 3)
    # core 0 runs program 0's two launches, core 1 program 1's one, core 2 nothing
    work, launch_end = k.merge_cpu_works([[first, second], [third]], np.array([0, 1, -1]))
    assert list(work.thread_first) == [0, 3, 5, 5]
    assert launch_end.tolist() == [[1, 3], [5, 5], [5, 5]]  # segments after each launch
    # each launch's pcs moved past the tables of the launches before it
    assert list(work.seg_pc) == [0, 3 + 0, 3 + 1, 6 + 2, 6 + 0]
    assert list(work.mem_address) == [64, 128, 192]
    assert list(work.seg_accesses) == [1, 1, 1, 0, 0] and list(work.mem_first) == [0, 3, 3, 3]
    assert len(work.pc_class) == 9 and work.instruction_count == 8
