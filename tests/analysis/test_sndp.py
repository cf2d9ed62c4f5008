"""SNDP's offload blocks: Equation 1, where each instruction runs, the block rules, indirect loads
and the suite."""

from __future__ import annotations

import pytest

from ndpsim.analysis import Access, Kind, analyze
from ndpsim.analysis.sndp import (
    BOTH,
    GPU,
    LOAD,
    NSU,
    ROLES,
    STORE,
    SndpBlock,
    access_bytes,
    block_score,
    indirect_loads,
    sndp_blocks,
)
from ndpsim.analysis.tom import TAG_RX, TAG_TX
from ndpsim.frontend.ir import Address, Function, Space, registers_in
from ndpsim.frontend.parser import parse_ptx, parse_ptx_file
from ndpsim.workloads.base import KERNEL_DIR


def kernel(body: str) -> Function:
    text = (
        ".version 9.0\n.target sm_75\n.address_size 64\n"
        ".visible .entry k(.param .u64 k_p0, .param .u32 k_p1, .param .f32 k_p2)\n{\n"
        ".reg .pred %p<8>;\n.reg .b16 %rs<8>;\n.reg .b32 %r<32>;\n.reg .f32 %f<16>;\n"
        ".reg .f64 %fd<4>;\n.reg .b64 %rd<16>;\n.shared .align 4 .b8 buf[1024];\n" + body + "\n}\n"
    )
    return parse_ptx(text).functions["k"]


def covering(blocks, *pcs: int) -> SndpBlock:
    (found,) = [b for b in blocks if all(b.begin <= pc <= b.end for pc in pcs)]
    return found


def roles_by_pc(block: SndpBlock) -> dict[int, str]:
    return {pc: block.role(pc) for pc in range(block.begin, block.end + 1)}


# ----------------------------------------------------------------------------- Equation 1
def test_the_score_is_data_bytes_minus_four_bytes_per_register_moved():
    assert block_score([4, 4, 4], 0, 0) == 12
    assert block_score([4, 4, 8], 1, 2) == 16 - 12
    assert block_score([1], 0, 1) == -3
    assert block_score([], 0, 0) == 0
    assert block_score([4, 4], 1, 1, register_bytes=8) == -8


def test_access_bytes_are_element_size_times_vector_width():
    f = kernel(
        """
        ld.param.u64 %rd1, [k_p0];
        ld.global.v4.f32 {%f1, %f2, %f3, %f4}, [%rd1];
        ld.global.u8 %rs1, [%rd1+16];
        ld.global.f64 %fd1, [%rd1+32];
        st.global.v2.u32 [%rd1+48], {%r1, %r2};
        ret;
        """
    )
    sizes = [access_bytes(f.instructions[pc]) for pc in range(1, 5)]
    assert sizes == [16, 1, 8, 8]


# ----------------------------------------------------------------- roles and registers
VADD_LIKE = """
    ld.param.u64 %rd1, [k_p0];
    ld.param.f32 %f9, [k_p2];
    mov.u32 %r1, %tid.x;
    bar.sync 0;
    mul.wide.s32 %rd2, %r1, 4;
    add.s64 %rd3, %rd1, %rd2;
    ld.global.f32 %f1, [%rd3];
    ld.global.f32 %f2, [%rd3+4096];
    add.f32 %f3, %f1, %f2;
    mul.f32 %f4, %f3, %f9;
    add.s64 %rd4, %rd3, 8192;
    st.global.f32 [%rd4], %f4;
    bar.sync 0;
    ret;
"""


def test_a_vadd_like_block_keeps_addresses_on_the_gpu_and_values_on_the_nsu():
    f = kernel(VADD_LIKE)
    (b,) = sndp_blocks(f)
    assert (b.begin, b.end) == (4, 11)  # the whole run between the barriers
    assert roles_by_pc(b) == {
        4: GPU, 5: GPU,  # address arithmetic
        6: LOAD, 7: LOAD,
        8: NSU, 9: NSU,  # computing on the loaded data: @NSU
        10: GPU,
        11: STORE,
    }  # fmt: skip
    assert b.live_in == ("%f9",)  # the NSU needs the scale; %rd1, %r1 stay on the GPU
    assert b.live_out == ()
    assert (b.n_ld, b.n_st, b.nsu_instructions, b.num_instructions) == (2, 1, 5, 8)
    assert (b.traffic_reduction_bytes, b.overhead_bytes) == (12, 4)
    assert b.score == block_score([4, 4, 4], 1, 0) == 8
    assert not b.indirect
    assert (b.tag, b.threshold, b.loop_header_pc) == (TAG_TX | TAG_RX, None, None)
    assert set(b.roles) <= set(ROLES)


def test_a_parameter_load_inside_the_block_is_free_and_runs_where_it_is_needed():
    f = kernel(
        """
        mov.u32 %r1, %tid.x;
        bar.sync 0;
        ld.param.u64 %rd1, [k_p0];
        ld.param.f32 %f9, [k_p2];
        mul.wide.s32 %rd2, %r1, 4;
        add.s64 %rd3, %rd1, %rd2;
        ld.global.f32 %f1, [%rd3];
        mul.f32 %f2, %f1, %f9;
        st.global.f32 [%rd3], %f2;
        ret;
        """
    )
    (b,) = sndp_blocks(f)
    assert (b.begin, b.end) == (2, 8)
    assert (b.role(2), b.role(3)) == (GPU, NSU)  # the pointer for the GPU, the scale for the NSU
    assert b.live_in == () and b.score == 8


def test_a_result_needed_for_an_address_and_as_data_runs_on_both_sides():
    f = kernel(
        """
        ld.param.u64 %rd1, [k_p0];
        mov.u32 %r1, %tid.x;
        bar.sync 0;
        cvt.u64.u32 %rd2, %r1;
        shl.b64 %rd3, %rd2, 2;
        add.s64 %rd4, %rd1, %rd3;
        ld.global.u32 %r2, [%rd4];
        add.s32 %r3, %r2, %r1;
        st.global.u32 [%rd4], %r3;
        st.global.u64 [%rd4+4096], %rd3;
        ret;
        """
    )
    (b,) = sndp_blocks(f)
    # cvt and shl feed the address (GPU) and the stored %rd3 (NSU); add.s64 only the address.
    assert (b.role(3), b.role(4), b.role(5), b.role(7)) == (BOTH, BOTH, GPU, NSU)
    assert b.live_in == ("%r1",)  # read on the NSU by cvt and add.s32
    assert b.score == 4 + 4 + 8 - 4


def test_values_used_after_the_block_come_back_only_if_the_nsu_made_them():
    f = kernel(
        """
        ld.param.u64 %rd1, [k_p0];
        ld.param.u32 %r9, [k_p1];
        bar.sync 0;
        add.s32 %r1, %r9, 1;
        ld.global.f32 %f1, [%rd1];
        ld.global.f32 %f2, [%rd1+4096];
        ld.global.f32 %f3, [%rd1+8192];
        add.f32 %f4, %f1, %f2;
        st.global.f32 [%rd1+12288], %f4;
        st.global.u32 [%rd1+16384], %r1;
        bar.sync 0;
        st.shared.f32 [buf], %f3;
        st.shared.f32 [buf+4], %f4;
        st.shared.u32 [buf+8], %r1;
        ret;
        """
    )
    (b,) = sndp_blocks(f)
    assert (b.begin, b.end) == (3, 9)
    # %r1 is stored (NSU) and used after (GPU): both sides compute it, nothing to return.
    assert b.role(3) == BOTH and b.live_in == ("%r9",)
    # The NSU made %f3 (a load) and %f4 (from loaded data): both go back in the acknowledgement.
    assert b.role(7) == NSU and b.live_out == ("%f3", "%f4")
    assert b.score == 4 * 5 - 4 * 3


def test_an_accumulator_of_a_loop_is_sent_and_returned():
    f = kernel(
        """
        ld.param.u64 %rd1, [k_p0];
        ld.param.u32 %r9, [k_p1];
        mov.u32 %r1, 0;
        mov.f32 %f1, 0f00000000;
    $LOOP:
        ld.global.f32 %f2, [%rd1];
        ld.global.f32 %f3, [%rd1+4096];
        fma.rn.f32 %f1, %f2, %f3, %f1;
        st.global.f32 [%rd1+8192], %f1;
        add.s64 %rd1, %rd1, 4;
        add.s32 %r1, %r1, 1;
        setp.lt.s32 %p1, %r1, %r9;
        @%p1 bra $LOOP;
        ret;
        """
    )
    (b,) = sndp_blocks(f)
    assert (b.begin, b.end) == (4, 10)  # the loop body up to its branch, counter included
    assert [b.role(pc) for pc in range(4, 11)] == [LOAD, LOAD, NSU, STORE, GPU, GPU, GPU]
    assert b.live_in == b.live_out == ("%f1",)
    assert b.score == 12 - 8 and b.nsu_instructions == 4  # BICG's loop, 4 as in Table 1


# ------------------------------------------------------------------------------- guards
def test_the_guard_of_a_store_is_needed_by_both_the_gpu_and_the_nsu():
    f = kernel(
        """
        ld.param.u64 %rd1, [k_p0];
        mov.u32 %r9, %tid.x;
        setp.lt.u32 %p2, %r9, 7;
        bar.sync 0;
        mov.u32 %r1, %tid.x;
        setp.lt.u32 %p1, %r1, 9;
        ld.global.f32 %f1, [%rd1];
        ld.global.f32 %f2, [%rd1+4096];
        add.f32 %f3, %f1, %f2;
        @%p1 st.global.f32 [%rd1+8192], %f3;
        @%p2 st.global.f32 [%rd1+12288], %f3;
        ret;
        """
    )
    (b,) = sndp_blocks(f)
    assert (b.begin, b.end) == (4, 10)
    # The GPU sends WTA packets for the lanes %p1 keeps; the NSU writes their data.
    assert b.role(4) == b.role(5) == BOTH
    assert b.live_in == ("%p2",)  # a predicate from before the block counts as a register
    assert b.score == 16 - 4


def test_a_guarded_write_on_the_nsu_needs_the_old_value_of_the_lanes_it_skips():
    f = kernel(
        """
        ld.param.u64 %rd1, [k_p0];
        mov.u32 %r1, %tid.x;
        setp.lt.u32 %p1, %r1, 7;
        mov.f32 %f5, 0f3F800000;
        bar.sync 0;
        ld.global.f32 %f1, [%rd1];
        ld.global.f32 %f2, [%rd1+4096];
        ld.global.f32 %f3, [%rd1+8192];
        @%p1 ld.global.f32 %f5, [%rd1+12288];
        add.f32 %f4, %f1, %f2;
        add.f32 %f4, %f4, %f5;
        add.f32 %f4, %f4, %f3;
        @%p1 mov.f32 %f1, 0f00000000;
        st.global.f32 [%rd1+16384], %f4;
        bar.sync 0;
        st.shared.f32 [buf], %f1;
        ret;
        """
    )
    (b,) = sndp_blocks(f)
    assert (b.begin, b.end) == (5, 13)
    # The guarded mov overwrites a loaded value in some lanes: only the NSU can do it.
    assert b.role(12) == NSU and b.live_out == ("%f1",)
    # The guarded load keeps %f5 from before the block in the lanes %p1 turns off.
    assert set(b.live_in) == {"%f5", "%p1"}
    assert b.score == 20 - 12


# ------------------------------------------------------------------------- the block rules
FORBIDDEN = {
    "shared store": "st.shared.f32 [buf], %f1;",
    "shared load": "ld.shared.f32 %f9, [buf];",
    "local store": "st.local.f32 [%rd9], %f1;",
    "barrier": "bar.sync 0;",
    "fence": "membar.gl;",
    "atomic": "atom.global.add.u32 %r1, [%rd2+64], 1;",
    "reduction": "red.global.add.u32 [%rd2+64], 1;",
    "warp collective": "shfl.sync.idx.b32 %r1, %r2, 0, 31, -1;",
}


@pytest.mark.parametrize("forbidden", FORBIDDEN.values(), ids=FORBIDDEN.keys())
def test_shared_memory_synchronization_and_collectives_split_a_run(forbidden):
    f = kernel(
        f"""
        ld.param.u64 %rd1, [k_p0];
        cvta.to.global.u64 %rd2, %rd1;
        bar.sync 0;
        ld.global.f32 %f1, [%rd2];
        ld.global.f32 %f2, [%rd2+4];
        add.f32 %f3, %f1, %f2;
        st.global.f32 [%rd2+8], %f3;
        {forbidden}
        ld.global.f32 %f4, [%rd2+12];
        ld.global.f32 %f5, [%rd2+16];
        sub.f32 %f6, %f4, %f5;
        st.global.f32 [%rd2+20], %f6;
        ret;
        """
    )
    before, after = sndp_blocks(f)
    assert (before.begin, before.end) == (3, 6)
    assert (after.begin, after.end) == (8, 11)  # none holds pc 7


def test_blocks_stay_inside_one_basic_block():
    f = kernel(
        """
        ld.param.u64 %rd1, [k_p0];
        ld.param.u32 %r9, [k_p1];
        setp.eq.s32 %p1, %r9, 0;
        ld.global.f32 %f1, [%rd1];
        ld.global.f32 %f2, [%rd1+4];
        add.f32 %f3, %f1, %f2;
        @%p1 bra $SKIP;
        st.global.f32 [%rd1+8], %f3;
    $SKIP:
        st.global.f32 [%rd1+12], %f3;
        ret;
        """
    )
    a = analyze(f)
    blocks = sndp_blocks(f)
    for b in blocks:
        assert a.cfg.block_of_pc[b.begin] == a.cfg.block_of_pc[b.end]
        assert not any(f.instructions[pc].is_branch for pc in range(b.begin, b.end + 1))
    # Each store's basic block is too small to pay for %f3; the loads' block returns it.
    (b,) = blocks
    assert (b.begin, b.end, b.live_out) == (0, 5, ("%f3",)) and b.score == 4


def test_code_without_loads_or_stores_makes_no_block():
    f = kernel(
        """
        ld.param.u32 %r9, [k_p1];
        add.s32 %r1, %r9, 1;
        mul.lo.s32 %r2, %r1, %r1;
        bar.sync 0;
        st.shared.u32 [buf], %r2;
        ret;
        """
    )
    assert sndp_blocks(f) == ()


def test_a_block_that_does_not_pay_for_its_registers_is_dropped():
    # One 4-byte load whose value is used after the block: 4 B saved, 4 B returned.
    f = kernel(
        """
        ld.param.u64 %rd1, [k_p0];
        ld.global.f32 %f1, [%rd1];
        bar.sync 0;
        st.shared.f32 [buf], %f1;
        ret;
        """
    )
    assert sndp_blocks(f) == ()


@pytest.mark.parametrize("data", ["%r1", "%f3"])
def test_a_store_whose_address_needs_a_value_loaded_in_the_block_cannot_join_it(data):
    f = kernel(
        f"""
        ld.param.u64 %rd1, [k_p0];
        bar.sync 0;
        ld.global.u32 %r1, [%rd1];
        ld.global.f32 %f1, [%rd1+4096];
        ld.global.f32 %f2, [%rd1+8192];
        add.f32 %f3, %f1, %f2;
        st.global.f32 [%rd1+12288], %f3;
        mul.wide.u32 %rd2, %r1, 4;
        add.s64 %rd3, %rd1, %rd2;
        st.global.b32 [%rd3], {data};
        ret;
        """
    )
    # [2, 9] would save 20 B with no register to move, but the GPU computes the scatter's
    # address before the NSU has any data. So the GPU loads the index itself, before the block.
    (b,) = sndp_blocks(f)
    assert (b.begin, b.end) == (3, 9)
    assert b.role(7) == b.role(8) == GPU
    assert b.live_in == (("%r1",) if data == "%r1" else ())  # the stored index goes to the NSU
    assert b.score == 16 - 4 * len(b.live_in)


def test_a_guard_computed_from_loaded_data_cannot_select_lanes_in_the_same_block():
    f = kernel(
        """
        ld.param.u64 %rd1, [k_p0];
        bar.sync 0;
        ld.global.f32 %f1, [%rd1];
        ld.global.f32 %f2, [%rd1+4096];
        setp.gt.f32 %p1, %f1, %f2;
        @%p1 st.global.f32 [%rd1+8192], %f1;
        ret;
        """
    )
    for b in sndp_blocks(f):
        assert not b.begin <= 2 < 5 <= b.end


# ------------------------------------------------------------------------- indirect loads
def test_an_indirect_load_is_a_block_of_its_own():
    f = kernel(
        """
        ld.param.u64 %rd1, [k_p0];
        mov.u32 %r1, %tid.x;
        bar.sync 0;
        mul.wide.u32 %rd2, %r1, 4;
        add.s64 %rd3, %rd1, %rd2;
        ld.global.f32 %f1, [%rd3+4096];
        ld.global.f32 %f2, [%rd3+8192];
        add.f32 %f4, %f1, %f2;
        st.global.f32 [%rd3+12288], %f4;
        ld.global.u32 %r2, [%rd3];
        mul.wide.u32 %rd4, %r2, 4;
        add.s64 %rd5, %rd1, %rd4;
        ld.global.u8 %rs1, [%rd5];
        bar.sync 0;
        st.shared.u8 [buf], %rs1;
        ret;
        """
    )
    assert indirect_loads(f) == (12,)  # x = B[A[i]]: its address comes from loaded data
    blocks = sndp_blocks(f)
    indirect = covering(blocks, 12)
    assert (indirect.begin, indirect.end, indirect.indirect) == (12, 12, True)
    assert indirect.roles == (LOAD,) and (indirect.n_ld, indirect.n_st) == (1, 0)
    assert indirect.live_in == () and indirect.live_out == ("%rs1",)
    assert indirect.score == 1 - 4  # kept whatever its score
    before = covering(blocks, 5, 6, 7, 8)
    assert before.end < 12 and not before.indirect and before.score == 12


def test_an_index_carried_around_a_loop_from_loaded_data_makes_indirect_loads():
    f = kernel(
        """
        ld.param.u64 %rd1, [k_p0];
        ld.global.u32 %r1, [%rd1];
        ld.global.u32 %r2, [%rd1+4];
        mul.wide.s32 %rd2, %r1, 4;
        add.s64 %rd3, %rd1, %rd2;
    $LOOP:
        ld.global.f32 %f1, [%rd3];
        ld.global.f32 %f2, [%rd1+4096];
        add.s64 %rd3, %rd3, 4;
        add.s32 %r1, %r1, 1;
        setp.lt.s32 %p1, %r1, %r2;
        @%p1 bra $LOOP;
        ret;
        """
    )
    # CSR's row walk: each lane of a warp reads its own row, wherever the row pointer says.
    assert indirect_loads(f) == (5,)


def test_values_that_do_not_come_from_global_memory_make_no_indirect_load():
    f = kernel(
        """
        ld.param.u64 %rd1, [k_p0];
        ld.shared.u32 %r1, [buf];
        mul.wide.u32 %rd2, %r1, 4;
        add.s64 %rd3, %rd1, %rd2;
        ld.global.f32 %f1, [%rd3];
        ld.global.f32 %f2, [%rd1];
        ret;
        """
    )
    assert indirect_loads(f) == ()


# ---------------------------------------------------------------------------- choosing
def test_the_best_scoring_range_wins_and_ties_go_to_the_longer_one():
    f = kernel(
        """
        ld.param.u64 %rd1, [k_p0];
        ld.param.f32 %f9, [k_p2];
        bar.sync 0;
        add.s64 %rd2, %rd1, 4096;
        ld.global.f32 %f1, [%rd1];
        mul.f32 %f2, %f1, %f9;
        st.global.f32 [%rd2], %f2;
        add.s64 %rd3, %rd1, 8192;
        ld.global.f32 %f3, [%rd3];
        ld.global.f32 %f4, [%rd3+4];
        add.f32 %f5, %f3, %f4;
        st.global.f32 [%rd3+8], %f5;
        ret;
        """
    )
    # [7, 11] alone scores 12; adding [3, 6] adds 8 B of data and the live-in %f9: 16 in all.
    # Its address arithmetic (pc 3 and pc 7) joins for free, the longer range winning ties.
    (b,) = sndp_blocks(f)
    assert (b.begin, b.end, b.score, b.live_in) == (3, 11, 16, ("%f9",))


# ------------------------------------------------------------------------------- the suite
SUITE = sorted(KERNEL_DIR.glob("*.ptx"))


def _in_block_definition(f: Function, block: SndpBlock, pc: int, register: str) -> int | None:
    """The last pc of ``block`` before ``pc`` that writes ``register``, if any."""
    for earlier in range(pc - 1, block.begin - 1, -1):
        if register in f.instructions[earlier].defs:
            return earlier
    return None


@pytest.mark.parametrize("ptx", SUITE, ids=lambda p: p.stem)
def test_every_suite_kernel_yields_disjoint_blocks_inside_one_basic_block(ptx):
    for f in parse_ptx_file(ptx).functions.values():
        blocks = sndp_blocks(f)
        assert sndp_blocks(f) is blocks  # computed once per function
        a = analyze(f)
        indirect = set(indirect_loads(f))
        ends = [-1] + [b.end for b in blocks]
        for previous_end, b in zip(ends, blocks, strict=False):
            assert previous_end < b.begin <= b.end
            assert a.cfg.block_of_pc[b.begin] == a.cfg.block_of_pc[b.end]
            assert len(b.roles) == b.num_instructions and set(b.roles) <= set(ROLES)
            assert b.n_ld == b.roles.count(LOAD) and b.n_st == b.roles.count(STORE)
            assert b.n_ld + b.n_st > 0
            assert b.score == b.traffic_reduction_bytes - b.overhead_bytes
            assert b.overhead_bytes == 4 * (len(b.live_in) + len(b.live_out))
            assert b.indirect or b.score > 0
            assert set(b.live_in) <= a.liveness.live_before(b.begin)
            assert set(b.live_out) <= a.liveness.live_after(b.end)
            assert b.as_dict()["roles"] == list(b.roles)
            for pc in range(b.begin, b.end + 1):
                inst, cls = f.instructions[pc], a.classes[pc]
                assert cls.kind in (Kind.ALU, Kind.SFU, Kind.MEMORY), inst.text
                if cls.kind is Kind.MEMORY:
                    assert cls.access in (Access.LOAD, Access.STORE), inst.text
                    assert inst.space in (Space.GLOBAL, Space.GENERIC, Space.PARAM, Space.CONST)
                role = b.role(pc)
                assert (role == LOAD) == (cls.is_global_memory and cls.access is Access.LOAD)
                assert (role == STORE) == (cls.is_global_memory and cls.access is Access.STORE)
                if role not in (LOAD, STORE):
                    continue
                # The GPU generates the packets: no address or guard may wait for the NSU.
                address = [r for op in inst.operands if isinstance(op, Address)
                           for r in registers_in(op)]  # fmt: skip
                guard = [inst.guard.name] if inst.guard is not None else []
                for register in address + guard:
                    source = _in_block_definition(f, b, pc, register)
                    assert source is None or b.role(source) in (GPU, BOTH), (b, pc, register)
            if b.indirect:
                assert b.begin == b.end and b.begin in indirect and b.roles == (LOAD,)
            else:
                assert not indirect & set(range(b.begin, b.end + 1))
        assert indirect <= {b.begin for b in blocks if b.indirect}


def test_vadd_is_one_block_of_four_nsu_instructions_as_in_table_1():
    (f,) = parse_ptx_file(KERNEL_DIR / "vadd.ptx").functions.values()
    (b,) = sndp_blocks(f)
    assert [f.instructions[pc].opcode for pc in range(b.begin, b.end + 1)
            if b.role(pc) != GPU] == ["ld", "ld", "add", "st"]  # fmt: skip
    assert b.live_in == b.live_out == () and b.score == 12


def test_spmv_offloads_its_gathers_as_single_indirect_loads():
    (f,) = parse_ptx_file(KERNEL_DIR / "spmv.ptx").functions.values()
    blocks = sndp_blocks(f)
    assert blocks and all(b.indirect for b in blocks)
    assert [b.begin for b in blocks] == list(indirect_loads(f))
