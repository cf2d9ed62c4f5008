"""ALP's generator instructions (Algorithm 1) from a profiling run on hand-written kernels."""

from __future__ import annotations

import numpy as np

from ndpsim.analysis import analyze
from ndpsim.ptx import DeviceMemory, launch
from ndpsim.trace.alp_generators import generator_instructions
from ndpsim.trace.cpu_threads import cpu_launch
from tests.simt.harness import module_from

# Each thread: loop A stores out[0..3], then loop B reads them back: A's store feeds B.
# Then loop C stores tmp[0..3], loop D does nothing with memory, and the tail reads tmp: C's
# store is two segments before its reader, so it is no generator. The segments are the loops,
# each with the code before it (SEGMENTS: the segment of each basic block).
PRODUCER_CONSUMER = """
    ld.param.u64 %rd1, [k_out];
    ld.param.u64 %rd2, [k_tmp];
    mov.u32 %r1, %tid.x;
    mul.wide.u32 %rd3, %r1, 16;
    add.s64 %rd4, %rd1, %rd3;
    add.s64 %rd5, %rd2, %rd3;
    mov.u32 %r2, 0;
A:
    mul.wide.u32 %rd6, %r2, 4;
    add.s64 %rd7, %rd4, %rd6;
    st.global.u32 [%rd7], %r2;
    add.u32 %r2, %r2, 1;
    setp.lt.u32 %p1, %r2, 4;
    @%p1 bra A;
    mov.u32 %r3, 0;
    mov.u32 %r4, 0;
B:
    mul.wide.u32 %rd8, %r3, 4;
    add.s64 %rd9, %rd4, %rd8;
    ld.global.u32 %r5, [%rd9];
    add.u32 %r4, %r4, %r5;
    add.u32 %r3, %r3, 1;
    setp.lt.u32 %p2, %r3, 4;
    @%p2 bra B;
    mov.u32 %r6, 0;
C:
    mul.wide.u32 %rd10, %r6, 4;
    add.s64 %rd11, %rd5, %rd10;
    st.global.u32 [%rd11], %r4;
    add.u32 %r6, %r6, 1;
    setp.lt.u32 %p3, %r6, 4;
    @%p3 bra C;
    mov.u32 %r7, 0;
D:
    add.u32 %r7, %r7, 1;
    setp.lt.u32 %p4, %r7, 4;
    @%p4 bra D;
    ld.global.u32 %r8, [%rd5];
    st.global.u32 [%rd4], %r8;
    ret;
"""
# b0 set-up, b1 A, b2 + b3 B with its set-up, b4 + b5 C, b6 + b7 D, b8 the tail
SEGMENTS = [0, 1, 2, 2, 3, 3, 4, 4, 5]


def _run():
    """The kernel's module, its trace (2 CTAs of 32 threads) and each pc's basic block."""
    module = module_from(PRODUCER_CONSUMER, params=".param .u64 k_out, .param .u64 k_tmp")
    memory = DeviceMemory()
    out, tmp = memory.alloc(64 * 16), memory.alloc(64 * 16)
    trace = launch(module, "k", 2, 32, [out, tmp], memory)
    function = module.function("k")
    cfg = analyze(function).cfg
    blocks = np.array([cfg.block_at(pc).index for pc in range(len(function.instructions))])
    return module, trace, blocks


def _profile(threads: int = 1):
    module, trace, blocks = _run()
    function = module.function("k")
    assert blocks.max() + 1 == len(SEGMENTS)
    segment = np.array(SEGMENTS)[blocks]
    return function, generator_instructions(cpu_launch(trace, module, threads), segment)


def test_a_store_whose_line_the_next_segment_reads_is_a_generator():
    function, found = _profile()
    stores = [i.pc for i in function.instructions if i.opcode == "st"]
    a_store, c_store = stores[0], stores[1]
    assert found.pcs == (a_store,)
    assert c_store not in found.lines_fed  # its reader is two segments later
    # each of the 64 CUDA threads writes 16 bytes in loop A: one line (64 bytes) holds four
    # threads' output; B's first read of a line in each instance finds A's last store to it
    assert found.lines_fed[a_store] == 64


def test_the_generators_do_not_depend_on_how_many_cpu_threads_profile():
    _, one = _profile(threads=1)
    _, many = _profile(threads=4)
    assert one == many


def test_a_segment_between_producer_and_consumer_hides_the_producer():
    # with every basic block a segment of its own, the set-up block before B comes between A
    # and B, and Algorithm 1 looks one segment back only
    module, trace, blocks = _run()
    assert generator_instructions(cpu_launch(trace, module, 1), blocks).pcs == ()
