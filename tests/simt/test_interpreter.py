"""SIMT execution: divergence, barriers, atomics, warp collectives, memory spaces, errors."""

from __future__ import annotations

import numpy as np
import pytest

from ndpsim.errors import LaunchError, MemoryAccessError, SimulationError
from ndpsim.ptx import DeviceMemory, launch
from ndpsim.simt.limits import Limits
from ndpsim.trace.trace import AFFINE, NARROW, MemoryKind, MemorySpace, popcount
from tests.simt.harness import module_from

INDEX = """
    ld.param.u64 %rd1, [k_out];
    mov.u32 %r1, %tid.x;
    mov.u32 %r2, %ctaid.x;
    mov.u32 %r3, %ntid.x;
    mad.lo.s32 %r4, %r2, %r3, %r1;
    mul.wide.u32 %rd2, %r4, 4;
    add.s64 %rd3, %rd1, %rd2;
"""


def run_out(body: str, threads: int, block: int = 64, decls: str = "", **kw):
    module = module_from(INDEX + body, params=".param .u64 k_out", decls=decls)
    mem = DeviceMemory()
    out = mem.alloc(threads * 4)
    trace = launch(module, "k", -(-threads // block), block, [out], mem, **kw)
    return mem.from_device(out, np.uint32, threads), trace


def test_divergent_paths_loops_and_early_exits_compute_per_lane_results():
    # r10 = (tid odd ? 100 : 200) + sum_{j < tid % 5} j, except lanes with tid % 7 == 0 leave early.
    body = """
    and.b32 %r5, %r1, 1;
    setp.eq.s32 %p1, %r5, 0;
    @%p1 bra $EVEN;
    mov.u32 %r10, 100;
    bra $JOIN;
$EVEN:
    mov.u32 %r10, 200;
$JOIN:
    rem.u32 %r6, %r1, 7;
    setp.eq.s32 %p2, %r6, 0;
    @%p2 bra $EARLY;
    rem.u32 %r7, %r1, 5;
    mov.u32 %r8, 0;
    setp.eq.s32 %p3, %r7, 0;
    @%p3 bra $STORE;
$LOOP:
    add.s32 %r10, %r10, %r8;
    add.s32 %r8, %r8, 1;
    setp.lt.u32 %p4, %r8, %r7;
    @%p4 bra $LOOP;
$STORE:
    st.global.u32 [%rd3], %r10;
    ret;
$EARLY:
    st.global.u32 [%rd3], 7;
    ret;
    """
    got, trace = run_out(body, 256)
    tid = np.arange(256) % 64
    k = tid % 5
    want = np.where(tid % 2, 100, 200) + k * (k - 1) // 2
    want = np.where(tid % 7 == 0, 7, want)
    np.testing.assert_array_equal(got, want.astype(np.uint32))
    rows = trace.instructions()
    last_pc = len(module_from(INDEX + body, params=".param .u64 k_out").functions["k"].instructions)
    assert rows["pc"].max() < last_pc
    # Every warp's stream is contiguous in its own numbering.
    order = np.lexsort((trace.run_seq, trace.run_warp))
    warp, seq, length = trace.run_warp[order], trace.run_seq[order], trace.run_length[order]
    same = warp[1:] == warp[:-1]
    assert np.all(seq[1:][same] == (seq + length)[:-1][same])
    assert np.all(seq[1:][~same] == 0) and seq[0] == 0


def test_reconverged_code_runs_with_the_full_mask_again():
    body = """
    setp.lt.u32 %p1, %r1, 5;
    @%p1 bra $SKIP;
    add.s32 %r4, %r4, 1;
$SKIP:
    st.global.u32 [%rd3], %r4;
    ret;
    """
    _, trace = run_out(body, 32, block=32)
    rows = trace.instructions()
    store_pc = rows["pc"].max() - 1
    (mask,) = rows["mask"][rows["pc"] == store_pc]
    assert mask == 0xFFFFFFFF
    assert rows["mask"][rows["pc"] == store_pc - 1][0] == 0xFFFFFFE0


def test_barrier_orders_shared_memory_within_each_cta_only():
    body = """
    mov.u32 %r5, buf;
    shl.b32 %r6, %r1, 2;
    add.s32 %r7, %r5, %r6;
    mul.lo.s32 %r8, %r2, 1000;
    add.s32 %r8, %r8, %r1;
    st.shared.u32 [%r7], %r8;
    bar.sync 0;
    add.s32 %r9, %r1, 1;
    rem.u32 %r9, %r9, %r3;
    shl.b32 %r9, %r9, 2;
    add.s32 %r9, %r5, %r9;
    ld.shared.u32 %r10, [%r9];
    st.global.u32 [%rd3], %r10;
    ret;
    """
    got, trace = run_out(body, 4 * 96, block=96, decls=".shared .align 4 .b8 buf[384];\n")
    tid, cta = np.arange(384) % 96, np.arange(384) // 96
    np.testing.assert_array_equal(got, cta * 1000 + (tid + 1) % 96)
    shared = trace.mem_space == MemorySpace.SHARED
    assert shared.sum() == 2 * 4 * 3  # a store and a load per warp, 3 warps per CTA
    assert trace.all_addresses().size == trace.num_memory_accesses


def test_a_32_bit_address_register_plus_offset_wraps_at_2_to_the_32():
    # nvcc folds offsets into shared accesses: a pointer 116 bytes before the array (negative,
    # the array sits at offset 0 of the window) plus 128 is the array's word 3.
    body = """
    mov.u32 %r5, buf;
    add.s32 %r6, %r5, -116;
    st.shared.u32 [%r6+128], %r1;
    bar.sync 0;
    ld.shared.u32 %r10, [buf+12];
    st.global.u32 [%rd3], %r10;
    ret;
    """
    got, _ = run_out(body, 32, block=32, decls=".shared .align 4 .b8 buf[16];\n")
    np.testing.assert_array_equal(got, np.full(32, 31))  # the last lane's store wins


def test_atomics_apply_in_lane_order_and_return_old_values():
    body = """
    ld.param.u64 %rd5, [k_out];
    atom.global.add.u32 %r10, [%rd5], 1;
    st.global.u32 [%rd3+4], %r10;
    ret;
    """
    module = module_from(INDEX + body, params=".param .u64 k_out")
    mem = DeviceMemory()
    out = mem.alloc(4 + 256 * 4)
    trace = launch(module, "k", 4, 64, [out], mem)
    values = mem.from_device(out, np.uint32, 257)
    assert values[0] == 256
    np.testing.assert_array_equal(values[1:], np.arange(256))
    assert (trace.mem_kind == MemoryKind.ATOMIC).sum() == 8


@pytest.mark.parametrize(
    ("op", "typ", "start", "operand", "expect"),
    [
        ("min.s32", np.int32, 10, "%r1", 0),
        ("max.u32", np.uint32, 10, "%r1", 63),
        ("inc.u32", np.uint32, 0, "5", 64 % 6),  # wraps to 0 after reaching 5
        ("dec.u32", np.uint32, 3, "9", None),
        ("exch.b32", np.uint32, 0, "%r1", 63),
        ("and.b32", np.uint32, 0xFF, "%r1", 0),
        ("or.b32", np.uint32, 0, "%r1", 63),
    ],
)
def test_atomic_operations(op, typ, start, operand, expect):
    body = f"""
    ld.param.u64 %rd5, [k_out];
    atom.global.{op} %r10, [%rd5], {operand};
    ret;
    """
    module = module_from(INDEX + body, params=".param .u64 k_out")
    mem = DeviceMemory()
    out = mem.to_device(np.array([start], dtype=typ))
    launch(module, "k", 1, 64, [out], mem)
    got = int(mem.from_device(out, typ, 1)[0])
    if expect is None:  # dec: (old == 0 or old > 9) ? 9 : old - 1, applied 64 times from 3
        value = start
        for _ in range(64):
            value = 9 if value == 0 or value > 9 else value - 1
        expect = value
    assert got == expect


def test_compare_and_swap_and_float_atomic_add():
    body = """
    ld.param.u64 %rd5, [k_out];
    atom.global.cas.b32 %r10, [%rd5], %r1, 1000;
    atom.global.add.f32 %f1, [%rd5+4], 0f3F000000;
    ret;
    """
    module = module_from(INDEX + body, params=".param .u64 k_out")
    mem = DeviceMemory()
    out = mem.to_device(np.array([3, 0], dtype=np.uint32))
    launch(module, "k", 1, 32, [out], mem)
    assert mem.from_device(out, np.uint32, 1)[0] == 1000  # lane 3 matched
    assert mem.from_device(out + 4, np.float32, 1)[0] == 16.0


def test_shuffles_and_votes():
    body = """
    shfl.sync.down.b32 %r10|%p1, %r1, 3, 31, -1;
    shfl.sync.bfly.b32 %r11, %r1, 5, 31, -1;
    shfl.sync.idx.b32 %r12, %r1, 7, 31, -1;
    shfl.sync.up.b32 %r13, %r1, 2, 0, -1;
    selp.u32 %r14, 1, 0, %p1;
    and.b32 %r15, %r1, 1;
    setp.eq.u32 %p2, %r15, 1;
    vote.sync.ballot.b32 %r16, %p2, -1;
    vote.sync.any.pred %p3, %p2, -1;
    vote.sync.all.pred %p4, %p2, -1;
    selp.u32 %r17, 1, 0, %p3;
    selp.u32 %r18, 2, 0, %p4;
    add.s32 %r17, %r17, %r18;
    mul.lo.s32 %r10, %r10, 1;
    shl.b32 %r10, %r10, 24;
    shl.b32 %r11, %r11, 16;
    shl.b32 %r12, %r12, 8;
    or.b32 %r10, %r10, %r11;
    or.b32 %r10, %r10, %r12;
    or.b32 %r10, %r10, %r13;
    st.global.u32 [%rd3], %r10;
    st.global.u32 [%rd3+128], %r14;
    st.global.u32 [%rd3+256], %r16;
    st.global.u32 [%rd3+384], %r17;
    ret;
    """
    module = module_from(INDEX + body, params=".param .u64 k_out")
    mem = DeviceMemory()
    out = mem.alloc(4 * 128)
    launch(module, "k", 1, 32, [out], mem)
    got = mem.from_device(out, np.uint32, 128).reshape(4, 32)
    lane = np.arange(32)
    down = np.where(lane + 3 <= 31, lane + 3, lane)
    up = np.where(lane - 2 >= 0, lane - 2, lane)
    want = (down << 24) | ((lane ^ 5) << 16) | (7 << 8) | up
    np.testing.assert_array_equal(got[0], want)
    np.testing.assert_array_equal(got[1], (lane + 3 <= 31).astype(np.uint32))
    assert np.all(got[2] == 0xAAAAAAAA)
    assert np.all(got[3] == 1)


def test_generic_addressing_reaches_shared_and_local_memory():
    body = """
    mov.u64 %rd10, buf;
    cvta.shared.u64 %rd11, %rd10;
    st.u32 [%rd11], %r1;
    mov.u64 %rd12, __local_depot0;
    cvta.local.u64 %rd13, %rd12;
    mul.lo.s32 %r9, %r1, 3;
    st.u32 [%rd13+4], %r9;
    bar.sync 0;
    ld.u32 %r10, [%rd11];
    ld.u32 %r11, [%rd13+4];
    add.s32 %r10, %r10, %r11;
    st.u32 [%rd3], %r10;
    ret;
    """
    decls = ".shared .align 4 .b8 buf[4];\n.local .align 4 .b8 __local_depot0[8];\n"
    got, trace = run_out(body, 64, block=64, decls=decls)
    # Every thread stored its tid to the same shared word; the last writer in lane order wins.
    np.testing.assert_array_equal(got, 63 + 3 * np.arange(64))
    spaces = set(trace.mem_space.tolist())
    assert spaces == {MemorySpace.SHARED, MemorySpace.LOCAL, MemorySpace.GLOBAL}


def test_module_variables_are_allocated_and_initialized():
    text_body = """
    ld.const.u32 %r10, [table+8];
    ld.global.u32 %r11, [counter];
    add.s32 %r10, %r10, %r11;
    st.global.u32 [%rd3], %r10;
    ret;
    """
    from ndpsim.frontend.parser import parse_ptx
    from tests.simt.harness import HEADER, REGISTERS

    text = (
        HEADER + ".const .align 4 .u32 table[4] = {10, 20, 30, 40};\n"
        ".global .align 4 .u32 counter = 5;\n"
        ".visible .entry k(.param .u64 k_out)\n{\n" + REGISTERS + INDEX + text_body + "\n}\n"
    )
    module = parse_ptx(text)
    mem = DeviceMemory()
    out = mem.alloc(4 * 32)
    launch(module, "k", 1, 32, [out], mem)
    assert np.all(mem.from_device(out, np.uint32, 32) == 35)
    assert {a.name for a in mem.allocations} >= {"table", "counter"}


def test_dynamic_shared_memory_is_sized_at_launch():
    body = """
    mov.u32 %r5, dyn;
    shl.b32 %r6, %r1, 2;
    add.s32 %r7, %r5, %r6;
    st.shared.u32 [%r7], %r1;
    ld.shared.u32 %r10, [%r7];
    st.global.u32 [%rd3], %r10;
    ret;
    """
    decls = ".extern .shared .align 16 .b8 dyn[];\n"
    got, _ = run_out(body, 64, block=64, decls=decls, shared_bytes=256)
    np.testing.assert_array_equal(got, np.arange(64))
    with pytest.raises(MemoryAccessError, match="beyond the 16 bytes"):
        run_out(body, 64, block=64, decls=decls, shared_bytes=16)


def test_out_of_bounds_and_misaligned_accesses_name_the_instruction():
    with pytest.raises(MemoryAccessError) as info:
        run_out("st.global.u32 [%rd3+4096], %r1;\nret;", 64)
    assert "test.ptx:" in str(info.value) and "st.global.u32" in str(info.value)
    assert "outside every allocation" in str(info.value)
    with pytest.raises(MemoryAccessError, match="misaligned"):
        run_out("st.global.u32 [%rd3+2], %r1;\nret;", 64)


@pytest.mark.parametrize("address", ["[-1]", "[k_out+8]", "[4096]"])
def test_a_parameter_load_outside_the_parameter_buffer_is_refused(address):
    with pytest.raises(MemoryAccessError, match="outside the 8-byte parameter buffer"):
        run_out(f"ld.param.u32 %r9, {address};\nret;", 32)


def test_an_endless_loop_is_stopped_by_the_instruction_limit():
    with pytest.raises(SimulationError, match="budget of 10,000 warp-instructions per launch"):
        run_out(
            "$SPIN:\nadd.s32 %r5, %r5, 1;\nbra $SPIN;\nret;",
            32,
            limits=Limits(instructions_per_launch=10_000),
        )


def test_launch_arguments_are_checked():
    module = module_from(INDEX + "ret;", params=".param .u64 k_out")
    mem = DeviceMemory()
    with pytest.raises(LaunchError, match="takes 1 arguments"):
        launch(module, "k", 1, 32, [], mem)
    with pytest.raises(LaunchError, match="at most 1024"):
        launch(module, "k", 1, (64, 32), [mem.alloc(4)], mem)
    with pytest.raises(LaunchError, match="1 to 3 positive sizes"):
        launch(module, "k", 0, 32, [mem.alloc(4)], mem)


def test_chunking_changes_neither_results_nor_any_warp_stream_nor_address():
    body = """
    mul.lo.u32 %r11, %r4, 37;
    rem.u32 %r11, %r11, 1024;
    mul.wide.u32 %rd4, %r11, 4;
    add.s64 %rd4, %rd1, %rd4;
    ld.global.u32 %r12, [%rd4];
    rem.u32 %r7, %r4, 9;
    mov.u32 %r10, 0;
    setp.eq.s32 %p3, %r7, 0;
    @%p3 bra $STORE;
$LOOP:
    add.s32 %r10, %r10, %r7;
    add.s32 %r7, %r7, -1;
    setp.ne.s32 %p4, %r7, 0;
    @%p4 bra $LOOP;
$STORE:
    st.global.u32 [%rd3], %r10;
    ret;
    """
    whole, t1 = run_out(body, 1024, chunk_threads=1 << 20)
    chunked, t2 = run_out(body, 1024, chunk_threads=128)
    np.testing.assert_array_equal(whole, chunked)

    def streams(trace):
        rows = trace.instructions()
        order = np.lexsort((rows["seq"], rows["warp"]))
        return rows["warp"][order], rows["pc"][order], rows["mask"][order]

    for a, b in zip(streams(t1), streams(t2), strict=True):
        np.testing.assert_array_equal(a, b)
    assert t1.num_thread_instructions == t2.num_thread_instructions
    assert popcount(t1.mem_mask).sum() == t1.num_memory_accesses

    def accesses(trace):  # each record's addresses, in warp-stream order
        everything = trace.all_addresses()
        counts = popcount(trace.mem_mask)
        first = np.cumsum(counts) - counts
        order = np.lexsort((trace.mem_seq, trace.mem_warp))
        return [everything[first[r] : first[r] + counts[r]].tolist() for r in order]

    assert accesses(t1) == accesses(t2)
    # the scrambled load is listed, lane by lane; the store is affine
    assert {AFFINE, NARROW} <= set(t2.mem_form.tolist())


def test_module_scope_dynamic_shared_memory_is_laid_out_for_the_kernel():
    from ndpsim.frontend.parser import parse_ptx
    from tests.simt.harness import HEADER, REGISTERS

    body = """
    mov.u32 %r5, dyn;
    shl.b32 %r6, %r1, 2;
    add.s32 %r7, %r5, %r6;
    st.shared.u32 [%r7], %r1;
    bar.sync 0;
    ld.shared.u32 %r10, [dyn+4];
    st.global.u32 [%rd3], %r10;
    ret;
    """
    text = (
        HEADER + ".extern .shared .align 16 .b8 dyn[];\n"
        ".visible .entry k(.param .u64 k_out)\n{\n" + REGISTERS + INDEX + body + "\n}\n"
    )
    module = parse_ptx(text)
    mem = DeviceMemory()
    out = mem.alloc(4 * 64)
    launch(module, "k", 1, 64, [out], mem, shared_bytes=256)
    assert np.all(mem.from_device(out, np.uint32, 64) == 1)


def test_a_predicate_literal_of_minus_one_is_true_as_nvcc_writes_it():
    out, _ = run_out("""
    mov.pred %p1, -1;
    mov.pred %p2, 0;
    mov.u32 %r10, 1;
    @%p1 add.u32 %r10, %r10, 10;
    @%p2 add.u32 %r10, %r10, 100;
    st.global.u32 [%rd3], %r10;
    ret;
    """, threads=64)  # fmt: skip
    assert (out == 11).all()
