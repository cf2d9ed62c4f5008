"""CFG, dominance, loops, liveness, def-use and instruction classes on hand-written PTX."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ndpsim.analysis import EXIT, FunctionAnalysis, Kind, Role, TripCountKind
from ndpsim.analysis.loops import trip_count_of
from ndpsim.frontend.ir import Space
from ndpsim.frontend.parser import parse_ptx
from ndpsim.workloads.base import KERNEL_DIR


def analyze(body: str) -> FunctionAnalysis:
    text = (
        ".version 9.0\n.target sm_75\n.address_size 64\n"
        ".visible .entry k(.param .u64 k_p0, .param .u32 k_p1)\n{\n"
        ".reg .pred %p<8>;\n.reg .b32 %r<32>;\n.reg .f32 %f<16>;\n.reg .b64 %rd<16>;\n"
        ".shared .align 4 .b8 buf[1024];\n" + body + "\n}\n"
    )
    return FunctionAnalysis(parse_ptx(text).functions["k"])


DIAMOND = """
    ld.param.u32 %r1, [k_p1];
    setp.lt.s32 %p1, %r1, 5;
    @%p1 bra $ELSE;
    add.s32 %r2, %r1, 1;
    bra $JOIN;
$ELSE:
    add.s32 %r2, %r1, 2;
$JOIN:
    mul.lo.s32 %r3, %r2, 3;
    ret;
"""


def test_diamond_has_four_blocks_and_reconverges_at_the_join():
    a = analyze(DIAMOND)
    cfg = a.cfg
    assert [(b.start, b.end) for b in cfg] == [(0, 3), (3, 5), (5, 6), (6, 8)]
    assert cfg[0].successors == (2, 1)
    assert cfg[3].predecessors == (1, 2)
    assert a.dominance.idom == (None, 0, 0, 0)
    assert a.dominance.ipdom == (3, 3, 3, EXIT)
    assert a.dominance.reconvergence_pc(0) == 6
    assert a.dominance.dominates(0, 3) and not a.dominance.dominates(1, 3)
    assert a.dominance.post_dominates(3, 0)


def test_a_path_that_returns_early_reconverges_only_at_exit():
    a = analyze(
        """
        ld.param.u32 %r1, [k_p1];
        setp.eq.s32 %p1, %r1, 0;
        @%p1 bra $OUT;
        add.s32 %r2, %r1, 1;
        ret;
    $OUT:
        ret;
        """
    )
    assert a.dominance.ipdom[0] == EXIT
    assert a.dominance.reconvergence_pc(0) == a.cfg.num_instructions


def counted_loop(init: str, bound: str, step: str, compare: str = "lt") -> FunctionAnalysis:
    return analyze(
        f"""
        ld.param.u32 %r9, [k_p1];
        mov.u32 %r1, {init};
        mov.f32 %f1, 0f00000000;
    $LOOP:
        add.f32 %f1, %f1, 0f3F800000;
        add.s32 %r1, %r1, {step};
        setp.{compare}.s32 %p1, %r1, {bound};
        @%p1 bra $LOOP;
        ret;
        """
    )


def test_constant_start_step_and_bound_give_a_static_trip_count():
    a = counted_loop("0", "10", "1")
    (loop,) = a.loops
    assert loop.trip_count_kind is TripCountKind.STATIC
    assert loop.static_trip_count == 10
    assert loop.induction.register == "%r1" and loop.induction.step.constant == 1
    assert loop.blocks == frozenset({1}) and loop.is_contiguous


def test_a_bound_in_a_register_set_before_the_loop_is_known_at_entry():
    a = counted_loop("0", "%r9", "1")
    (loop,) = a.loops
    assert loop.trip_count_kind is TripCountKind.ENTRY
    assert loop.induction.bound.register == "%r9"
    assert loop.induction.trip_count({"%r9": 7}) == 7


def test_counting_down_to_zero_is_known_at_entry_from_the_counter():
    a = analyze(
        """
        ld.param.u32 %r1, [k_p1];
    $LOOP:
        add.s32 %r1, %r1, -1;
        setp.ne.s32 %p1, %r1, 0;
        @%p1 bra $LOOP;
        ret;
        """
    )
    (loop,) = a.loops
    assert loop.trip_count_kind is TripCountKind.ENTRY
    assert loop.induction.start.register == "%r1"
    assert loop.induction.trip_count({"%r1": 5}) == 5


def test_a_bound_loaded_inside_the_loop_makes_the_count_dynamic():
    a = analyze(
        """
        mov.u32 %r1, 0;
        ld.param.u64 %rd1, [k_p0];
    $LOOP:
        ld.global.u32 %r2, [%rd1];
        add.s32 %r1, %r1, 1;
        setp.lt.s32 %p1, %r1, %r2;
        @%p1 bra $LOOP;
        ret;
        """
    )
    assert a.loops[0].trip_count_kind is TripCountKind.DYNAMIC


def test_an_induction_variable_updated_by_a_shift_is_not_an_add_sub_loop():
    a = analyze(
        """
        ld.param.u32 %r1, [k_p1];
    $LOOP:
        shr.u32 %r1, %r1, 1;
        setp.gt.u32 %p1, %r1, 1;
        @%p1 bra $LOOP;
        ret;
        """
    )
    assert a.loops[0].induction is None
    assert a.loops[0].trip_count_kind is TripCountKind.DYNAMIC


def test_nested_loops_know_their_parent_and_depth():
    a = analyze(
        """
        mov.u32 %r1, 0;
    $OUTER:
        mov.u32 %r2, 0;
    $INNER:
        add.s32 %r2, %r2, 1;
        setp.lt.s32 %p2, %r2, 4;
        @%p2 bra $INNER;
        add.s32 %r1, %r1, 1;
        setp.lt.s32 %p1, %r1, 3;
        @%p1 bra $OUTER;
        ret;
        """
    )
    outer, inner = a.loops
    assert inner.parent == outer.index and inner.depth == 2 and outer.depth == 1
    assert inner.blocks < outer.blocks
    assert outer.static_trip_count == 3 and inner.static_trip_count == 4
    assert a.loop_depth(inner.header) == 2


@given(
    first=st.integers(-50, 50),
    step=st.integers(-7, 7).filter(bool),
    bound=st.integers(-50, 50),
    comparison=st.sampled_from(["lt", "le", "gt", "ge", "ne", "eq"]),
)
def test_trip_count_formula_agrees_with_running_the_loop(first, step, bound, comparison):
    ops = {
        "lt": lambda a, b: a < b, "le": lambda a, b: a <= b, "gt": lambda a, b: a > b,
        "ge": lambda a, b: a >= b, "ne": lambda a, b: a != b, "eq": lambda a, b: a == b,
    }  # fmt: skip
    trips, value = 1, first
    while ops[comparison](value, bound) and trips <= 1000:
        trips += 1
        value += step
    expected = trips if trips <= 1000 else None
    assert trip_count_of(first, step, bound, comparison) == expected


def test_liveness_of_the_diamond():
    a = analyze(DIAMOND)
    live = a.liveness
    assert live.live_in_block[1] == {"%r1"}
    assert live.live_out_block[1] == {"%r2"}
    assert live.live_before(6) == {"%r2"}
    assert live.live_after(6) == frozenset()


def test_range_liveness_counts_only_values_read_inside_the_range():
    a = analyze(
        """
        ld.param.u32 %r1, [k_p1];
        ld.param.u32 %r2, [k_p1];
        mov.u32 %r3, 4;
        add.s32 %r4, %r1, %r3;
        mul.lo.s32 %r5, %r4, %r4;
        add.s32 %r6, %r5, %r2;
        ret;
        """
    )
    # Range [3, 5): reads r1 and r3 from outside; r2 only passes through; r5 is used after.
    assert a.liveness.range_live_in(3, 5) == {"%r1", "%r3"}
    assert a.liveness.range_live_out(3, 5) == {"%r5"}


def test_a_guarded_definition_does_not_kill_the_previous_one():
    a = analyze(
        """
        ld.param.u32 %r1, [k_p1];
        setp.eq.s32 %p1, %r1, 0;
        mov.u32 %r2, 1;
        @%p1 mov.u32 %r2, 2;
        add.s32 %r3, %r2, 1;
        ret;
        """
    )
    assert a.defuse.definitions(4, "%r2") == (2, 3)
    assert a.defuse.uses(2, "%r2") == (4,)
    assert a.liveness.live_before(3) >= {"%r2", "%p1"}


def test_address_arithmetic_is_told_from_value_arithmetic():
    a = analyze(
        """
        ld.param.u64 %rd1, [k_p0];
        mov.u32 %r1, %tid.x;
        mul.wide.u32 %rd2, %r1, 4;
        add.s64 %rd3, %rd1, %rd2;
        ld.global.f32 %f1, [%rd3];
        add.f32 %f2, %f1, %f1;
        st.global.f32 [%rd3], %f2;
        mov.u32 %r2, buf;
        st.shared.u32 [%r2], %r1;
        bar.sync 0;
        atom.global.add.u32 %r3, [%rd3], 1;
        ret;
        """
    )
    classes = a.classes
    assert classes[2].role is Role.ADDRESS and classes[3].role is Role.ADDRESS
    assert classes[5].role is Role.VALUE
    assert classes[1].role is Role.BOTH  # %tid.x feeds an address and is stored as data
    assert classes[4].kind is Kind.MEMORY and classes[4].space is Space.GLOBAL
    assert classes[8].is_shared_memory and classes[9].kind is Kind.BARRIER
    assert classes[10].is_synchronizing and classes[11].kind is Kind.CONTROL
    assert classes[0].space is Space.PARAM


@pytest.mark.parametrize("ptx", sorted(KERNEL_DIR.glob("*.ptx")), ids=lambda p: p.stem)
def test_every_analysis_runs_on_every_committed_kernel(ptx):
    for func in parse_ptx(ptx.read_text(), str(ptx)).kernels:
        a = FunctionAnalysis(func)
        assert sum(len(b) for b in a.cfg) == len(func.instructions)
        for block in a.cfg:
            for pc in block.pcs:
                a.liveness.live_before(pc)
        assert len(a.classes) == len(func.instructions)
        for loop in a.loops:
            assert loop.header in loop.blocks


def test_a_function_without_instructions_has_no_blocks_and_runs():
    from ndpsim.analysis.sndp import sndp_blocks
    from ndpsim.analysis.tom import tom_candidates
    from ndpsim.ptx import DeviceMemory, launch

    text = ".version 9.0\n.target sm_75\n.address_size 64\n.visible .entry k()\n{\n}\n"
    module = parse_ptx(text)
    function = module.functions["k"]
    assert len(FunctionAnalysis(function).cfg.blocks) == 0
    assert tom_candidates(function) == tom_candidates(function, "maximal") == ()
    assert sndp_blocks(function) == ()
    assert launch(module, "k", 2, 32, [], DeviceMemory()).num_warp_instructions == 0
