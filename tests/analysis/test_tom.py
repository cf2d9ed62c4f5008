"""TOM's offload candidates: the bandwidth equations, the block rules, loops, and the suite."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ndpsim.analysis import Access, Kind, LoopValue, TripCountKind, analyze
from ndpsim.analysis.tom import (
    TAG_RX,
    TAG_TX,
    TomCandidate,
    TripCondition,
    bandwidth_change,
    break_even_trips,
    thread_live_registers,
    tom_candidates,
)
from ndpsim.frontend.ir import Function, Space
from ndpsim.frontend.parser import parse_ptx, parse_ptx_file
from ndpsim.workloads.base import KERNEL_DIR


def kernel(body: str) -> Function:
    text = (
        ".version 9.0\n.target sm_75\n.address_size 64\n"
        ".visible .entry k(.param .u64 k_p0, .param .u32 k_p1)\n{\n"
        ".reg .pred %p<8>;\n.reg .b32 %r<32>;\n.reg .f32 %f<16>;\n.reg .b64 %rd<16>;\n"
        ".shared .align 4 .b8 buf[1024];\n" + body + "\n}\n"
    )
    return parse_ptx(text).functions["k"]


def covering(candidates, *pcs: int) -> TomCandidate:
    (found,) = [c for c in candidates if all(c.begin <= pc <= c.end for pc in pcs)]
    return found


# ------------------------------------------------------------------------- the equations
def test_the_libor_example_of_the_paper_breaks_even_at_four_iterations():
    # Figure 4: five live-ins, no live-out, one load and one store per iteration.
    tx, rx = bandwidth_change(5, 0, 1, 1)
    assert (tx, rx) == (126.5, -16.25)
    assert tx + rx == 110.25
    assert sum(bandwidth_change(5, 0, 4, 4)) == -39
    assert sum(bandwidth_change(5, 0, 3, 3)) > 0
    assert break_even_trips(5, 0, 1, 1) == 4


def test_the_default_constants_are_the_papers():
    explicit = bandwidth_change(
        3, 2, 5, 7, warp_size=32, line_words=32, coal_ld=1.0, coal_st=1.0, miss_ld=0.5
    )
    assert bandwidth_change(3, 2, 5, 7) == explicit
    # Fewer misses save less: a load saves Coal * Miss words of TX and Coal * S_C * Miss of RX.
    assert bandwidth_change(0, 0, 1, 0, miss_ld=1.0) == (-1.0, -32.0)


def test_a_block_without_memory_accesses_never_breaks_even():
    assert break_even_trips(1, 0, 0, 0) is None
    assert break_even_trips(0, 0, 1, 0) == 1


@given(
    reg_tx=st.integers(0, 24),
    reg_rx=st.integers(0, 12),
    n_ld=st.integers(0, 6),
    n_st=st.integers(0, 6),
    once_ld=st.integers(0, 4),
    once_st=st.integers(0, 4),
)
def test_break_even_is_the_smallest_saving_trip_count(reg_tx, reg_rx, n_ld, n_st, once_ld, once_st):
    def total(trips: int) -> float:
        return sum(bandwidth_change(reg_tx, reg_rx, once_ld + trips * n_ld, once_st + trips * n_st))

    trips = break_even_trips(reg_tx, reg_rx, n_ld, n_st, n_ld_once=once_ld, n_st_once=once_st)
    if trips is None:
        assert n_ld == n_st == 0 and total(1) >= 0
    else:
        assert trips >= 1 and total(trips) < 0
        assert trips == 1 or total(trips - 1) >= 0


# ------------------------------------------------------------------------ the block rules
FORBIDDEN = {
    "shared store": "st.shared.f32 [buf], %f1;",
    "shared load": "ld.shared.f32 %f9, [buf];",
    "barrier": "bar.sync 0;",
    "fence": "membar.gl;",
    "atomic": "atom.global.add.u32 %r1, [%rd2+64], 1;",
    "reduction": "red.global.add.u32 [%rd2+64], 1;",
}


@pytest.mark.parametrize("forbidden", FORBIDDEN.values(), ids=FORBIDDEN.keys())
def test_shared_memory_barriers_fences_and_atomics_split_blocks(forbidden):
    f = kernel(
        f"""
        ld.param.u64 %rd1, [k_p0];
        cvta.to.global.u64 %rd2, %rd1;
        ld.global.f32 %f1, [%rd2];
        ld.global.f32 %f2, [%rd2+4];
        ld.global.f32 %f3, [%rd2+8];
        ld.global.f32 %f4, [%rd2+12];
        st.global.f32 [%rd2+16], %f3;
        st.global.f32 [%rd2+20], %f4;
        {forbidden}
        ld.global.f32 %f5, [%rd2+24];
        st.global.f32 [%rd2+28], %f5;
        st.global.f32 [%rd2+32], %f2;
        ret;
        """
    )
    before, after = tom_candidates(f)
    assert before.end < 8 < after.begin  # one block on each side of pc 8, none across it
    assert (before.n_st, after.n_st) == (2, 2)


def test_a_branch_leaving_the_block_past_its_end_excludes_it():
    body = """
        ld.param.u64 %rd1, [k_p0];
        ld.param.u32 %r1, [k_p1];
        cvta.to.global.u64 %rd2, %rd1;
        ld.global.f32 %f1, [%rd2];
        ld.global.f32 %f2, [%rd2+4];
        setp.eq.s32 %p1, %r1, 0;
        @%p1 bra $SKIP;
        st.global.f32 [%rd2+8], %f1;
        {between}
        st.global.f32 [%rd2+12], %f2;
    $SKIP:
        st.global.f32 [%rd2+16], %f1;
        ret;
        """
    # With a barrier before the branch target, no block can hold the branch (pc 6) and reach
    # the point where its warp reconverges.
    blocked = tom_candidates(kernel(body.format(between="bar.sync 0;")))
    assert all(not c.begin <= 6 <= c.end for c in blocked)
    # Without it, the branch targets the pc after the block: fine, the warp reconverges there.
    joined = tom_candidates(kernel(body.format(between="")))
    assert [(c.begin, c.end) for c in joined] == [(0, 9)]


def test_a_branch_into_the_middle_keeps_blocks_from_spanning_it():
    f = kernel(
        """
        ld.param.u64 %rd1, [k_p0];
        ld.param.u32 %r1, [k_p1];
        cvta.to.global.u64 %rd2, %rd1;
        setp.eq.s32 %p1, %r1, 0;
        @%p1 bra $MIDDLE;
        bar.sync 0;
        ld.global.f32 %f1, [%rd2];
        st.global.f32 [%rd2+4], %f1;
    $MIDDLE:
        ld.global.f32 %f2, [%rd2+8];
        st.global.f32 [%rd2+12], %f2;
        ret;
        """
    )
    for c in tom_candidates(f):
        assert not c.begin < 8 <= c.end  # control from pc 4 may enter only at a block's begin


def test_live_ins_are_read_from_outside_and_live_outs_are_used_after():
    f = kernel(
        """
        ld.param.u64 %rd1, [k_p0];
        ld.param.u32 %r9, [k_p1];
        mov.f32 %f7, 0f3F800000;
        bar.sync 0;
        ld.global.f32 %f1, [%rd1];
        ld.global.f32 %f2, [%rd1+128];
        ld.global.f32 %f3, [%rd1+256];
        ld.global.f32 %f4, [%rd1+384];
        add.f32 %f5, %f1, %f2;
        add.f32 %f6, %f3, %f4;
        st.global.f32 [%rd1+512], %f5;
        st.global.u32 [%rd1+640], %r9;
        bar.sync 0;
        st.shared.f32 [buf], %f6;
        st.shared.f32 [buf+4], %f7;
        ret;
        """
    )
    (c,) = tom_candidates(f)
    assert (c.begin, c.end) == (4, 11)
    assert set(c.live_in) == {"%rd1", "%r9"}  # %f1..%f5 are made inside
    assert c.live_out == ("%f6",)  # %f7 passes by untouched: neither sent nor returned
    # before pc 8 the block holds %rd1 (two 32-bit slots), %r9 and %f1-%f4 live; the thread
    # also holds %f7
    assert c.live_registers == 2 + 1 + 4 and c.as_dict()["live_registers"] == 7
    assert thread_live_registers(f) == 2 + 1 + 4 + 1
    assert (c.n_ld, c.n_st, c.loop_kind, c.trips, c.conditional) == (4, 2, "none", 1, False)
    assert (c.bw_tx, c.bw_rx) == bandwidth_change(2, 1, 4, 2) == (-4.0, -32.5)
    assert c.tag == TAG_TX | TAG_RX and c.tag_text == "TX+RX"
    assert c.saving == 36.5 and c.condition == "-" and c.threshold is None


@pytest.mark.parametrize("guard", ["@%p1 ", ""], ids=["guarded", "unguarded"])
def test_a_register_written_only_under_a_guard_is_sent_and_returned(guard):
    f = kernel(
        f"""
        ld.param.u64 %rd1, [k_p0];
        mov.f32 %f7, 0f3F800000;
        bar.sync 0;
        mov.u32 %r1, 0;
    $LOOP:
        ld.global.f32 %f1, [%rd1];
        setp.gt.f32 %p1, %f1, 0f00000000;
        {guard}mov.f32 %f7, %f1;
        st.global.f32 [%rd1+4], %f1;
        add.s64 %rd1, %rd1, 8;
        add.s32 %r1, %r1, 1;
        setp.lt.s32 %p2, %r1, 10;
        @%p2 bra $LOOP;
        bar.sync 0;
        st.shared.f32 [buf], %f7;
        ret;
        """
    )
    (c,) = tom_candidates(f, "maximal")  # with the counter's initialization
    assert (c.begin, c.end) == (3, 11) and c.live_out == ("%f7",)
    if guard:  # lanes whose guard is false must get their old %f7 back
        assert set(c.live_in) == {"%rd1", "%f7"}
    else:
        assert c.live_in == ("%rd1",)


def test_tag_bits_tell_which_link_offloading_relieves():
    # Loads save mostly RX (the line comes back); registers cost both ways.
    (loads,) = tom_candidates(
        kernel(
            """
            ld.param.u64 %rd1, [k_p0];
            bar.sync 0;
            ld.global.f32 %f1, [%rd1];
            ld.global.f32 %f2, [%rd1+128];
            ld.global.f32 %f3, [%rd1+256];
            ld.global.f32 %f4, [%rd1+384];
            add.f32 %f5, %f1, %f2;
            add.f32 %f6, %f3, %f4;
            add.f32 %f7, %f5, %f6;
            bar.sync 0;
            st.shared.f32 [buf], %f7;
            ret;
            """
        )
    )
    assert (loads.bw_tx, loads.bw_rx) == bandwidth_change(1, 1, 4, 0) == (30.0, -32.0)
    assert loads.tag == TAG_RX and loads.tag_text == "RX"
    assert not loads.saves_tx and loads.saves_rx
    # Stores save mostly TX (address and data go out, only an acknowledgement comes back).
    (stores,) = tom_candidates(
        kernel(
            """
            ld.param.u64 %rd1, [k_p0];
            ld.param.u32 %r1, [k_p1];
            add.s32 %r2, %r1, 1;
            st.global.u32 [%rd1], %r1;
            st.global.u32 [%rd1+128], %r1;
            st.global.u32 [%rd1+256], %r2;
            bar.sync 0;
            st.shared.u32 [buf], %r1;
            st.shared.u32 [buf+4], %r2;
            ret;
            """
        )
    )
    assert (stores.bw_tx, stores.bw_rx) == bandwidth_change(0, 2, 0, 3) == (-99.0, 63.25)
    assert stores.tag == TAG_TX and stores.tag_text == "TX"


# --------------------------------------------------------------------------------- loops
def loop_kernel(bound: str, body: str = "") -> Function:
    return kernel(
        f"""
        ld.param.u64 %rd1, [k_p0];
        ld.param.u32 %r9, [k_p1];
        bar.sync 0;
        cvta.to.global.u64 %rd2, %rd1;
        mov.u32 %r1, 0;
        mov.f32 %f2, 0f00000000;
    $LOOP:
        ld.global.f32 %f1, [%rd2];
        add.f32 %f2, %f2, %f1;
        {body}
        add.s64 %rd2, %rd2, 4;
        add.s32 %r1, %r1, 1;
        setp.lt.s32 %p1, %r1, {bound};
        @%p1 bra $LOOP;
        bar.sync 0;
        st.shared.f32 [buf], %f2;
        ret;
        """
    )


def test_a_static_trip_count_multiplies_the_loop_bodys_accesses():
    f = loop_kernel("10")
    (c,) = tom_candidates(f, "maximal")
    assert (c.begin, c.end) == (3, 11) and c.loop_kind == "static" and c.trips == 10
    assert c.live_in == ("%rd1",) and c.live_out == ("%f2",)
    assert (c.n_ld, c.n_st, c.ld_executions, c.st_executions) == (1, 0, 10, 0)
    assert (c.bw_tx, c.bw_rx) == bandwidth_change(1, 1, 10, 0)
    assert c.loop_header_pc == 6 and not c.conditional


def test_a_count_known_at_loop_entry_makes_a_conditional_candidate():
    f = loop_kernel("%r9")
    (loop,) = analyze(f).loops
    assert loop.trip_count_kind is TripCountKind.ENTRY
    (c,) = tom_candidates(f, "maximal")
    assert c.loop_kind == "entry" and c.conditional and c.loop_header_pc == 6
    assert set(c.live_in) == {"%rd1", "%r9"} and c.live_out == ("%f2",)
    # One iteration costs 3 registers (96 words) and saves 16.5: break-even at six.
    assert c.threshold == break_even_trips(2, 1, 1, 0) == 6
    assert (c.bw_tx, c.bw_rx) == bandwidth_change(2, 1, 1, 0)  # one iteration
    assert sum(c.bandwidth_at(6)) < 0 <= sum(c.bandwidth_at(5))
    assert c.condition_register == "%r9" and c.condition == "%r9 >= 6"
    assert c.should_offload({"%r9": 6}) and not c.should_offload({"%r9": 5})
    assert c.tag == TAG_RX  # at six iterations TX still carries the registers
    assert c.as_dict()["condition_registers"] == ["%r9"]


def test_a_count_discovered_while_iterating_counts_once():
    f = loop_kernel("%r2", body="ld.global.u32 %r2, [%rd2+4];\nst.global.f32 [%rd2+8], %f2;")
    (loop,) = analyze(f).loops
    assert loop.trip_count_kind is TripCountKind.DYNAMIC
    (c,) = tom_candidates(f, "maximal")
    assert c.loop_kind == "dynamic" and not c.conditional and c.trips == 1
    assert (c.ld_executions, c.st_executions) == (c.n_ld, c.n_st) == (2, 1)


def _condition_holds(text: str, registers: dict[str, int]) -> bool:
    """Evaluate a condition as the table prints it: ``a >= k``, ``a <= k`` or ``a - b >= k``."""

    def value(term: str) -> int:
        return registers[term] if term.startswith("%") else int(term)

    if m := re.fullmatch(r"(\S+) - (\S+) >= (-?\d+)", text):
        return value(m[1]) - value(m[2]) >= int(m[3])
    if m := re.fullmatch(r"(\S+) >= (-?\d+)", text):
        return value(m[1]) >= int(m[2])
    m = re.fullmatch(r"(\S+) <= (-?\d+)", text)
    assert m is not None, text
    return value(m[1]) <= int(m[2])


@given(
    comparison=st.sampled_from(["lt", "le", "gt", "ge", "ne"]),
    step=st.sampled_from([-3, -2, -1, 1, 2, 3]),
    tested_after_step=st.booleans(),
    shape=st.sampled_from(["both", "start", "bound"]),
    threshold=st.integers(2, 10),
    start=st.integers(-20, 20),
    bound=st.integers(-20, 20),
)
def test_a_printed_condition_agrees_with_the_exact_trip_count(
    comparison, step, tested_after_step, shape, threshold, start, bound
):
    condition = TripCondition(
        LoopValue(register="%s") if shape != "bound" else LoopValue(constant=start),
        LoopValue(constant=step),
        LoopValue(register="%b") if shape != "start" else LoopValue(constant=bound),
        comparison,
        tested_after_step,
    )
    registers = {"%s": start, "%b": bound}
    trips = condition.trip_count(registers)
    text = condition.text(threshold)
    if trips is not None and not text.startswith("trips("):
        assert _condition_holds(text, registers) == (trips >= threshold)


# ----------------------------------------------------------------------- the block rules
TWO_LOOPS = """
        ld.param.u64 %rd1, [k_p0];
        ld.param.u32 %r9, [k_p1];
        cvta.to.global.u64 %rd2, %rd1;
        ld.global.f32 %f5, [%rd2+256];
        mov.u32 %r1, 0;
    $FIRST:
        ld.global.f32 %f1, [%rd2];
        st.global.f32 [%rd2+4], %f1;
        add.s64 %rd2, %rd2, 8;
        add.s32 %r1, %r1, 1;
        setp.lt.s32 %p1, %r1, %r9;
        @%p1 bra $FIRST;
        ld.global.f32 %f6, [%rd2+512];
        mov.u32 %r2, 0;
    $SECOND:
        ld.global.f32 %f2, [%rd2];
        st.global.f32 [%rd2+4], %f2;
        add.s64 %rd2, %rd2, 8;
        add.s32 %r2, %r2, 1;
        setp.lt.s32 %p2, %r2, %r9;
        @%p2 bra $SECOND;
        st.global.f32 [%rd2+1024], %f5;
        st.global.f32 [%rd2+1028], %f6;
        ret;
        """


def test_the_loops_rule_makes_each_loop_a_block_of_its_own_as_figure_4_does():
    f = kernel(TWO_LOOPS)
    loops = analyze(f).loops
    spans = sorted((loop.start_pc, loop.end_pc - 1) for loop in loops)
    assert spans == [(5, 10), (13, 18)]
    by_loops = tom_candidates(f)
    # each loop with the reset of its counter (pcs 4 and 12), conditional on its count; the
    # loads at pcs 3 and 11 and the stores after the second loop stay out
    assert [(c.begin, c.end, c.conditional) for c in by_loops] == [(4, 10, True), (12, 18, True)]
    assert all(c.live_in == ("%r9", "%rd2") for c in by_loops)
    # the maximal rule merges the loops with the accesses around them
    assert any(c.begin <= 3 or c.end >= 19 for c in tom_candidates(f, "maximal"))


def test_the_rules_are_named_and_an_unknown_one_is_refused():
    f = kernel(TWO_LOOPS)
    assert tom_candidates(f, "loops") is tom_candidates(f)  # the default, computed once
    with pytest.raises(ValueError, match="maximal"):
        tom_candidates(f, "largest")


# ------------------------------------------------------------------------------ the suite
SUITE = sorted(KERNEL_DIR.glob("*.ptx"))


def _branch_target(f: Function, pc: int) -> int | None:
    inst = f.instructions[pc]
    return f.labels[inst.branch_target] if inst.is_branch and inst.branch_target else None


@pytest.mark.parametrize("ptx", SUITE, ids=lambda p: p.stem)
def test_every_suite_kernel_yields_disjoint_blocks_that_obey_the_rules(ptx):
    for f in parse_ptx_file(ptx).functions.values():
        candidates = tom_candidates(f)
        assert tom_candidates(f) is candidates  # computed once per function
        a = analyze(f)
        ends = [-1] + [c.end for c in candidates]
        for previous_end, c in zip(ends, candidates, strict=False):
            assert previous_end < c.begin <= c.end
            for pc in range(c.begin, c.end + 1):
                cls = a.classes[pc]
                assert not cls.is_shared_memory and not cls.is_synchronizing
                assert not f.instructions[pc].is_exit
                target = _branch_target(f, pc)
                assert target is None or c.begin <= target <= c.end + 1
            for pc in range(len(f.instructions)):
                target = _branch_target(f, pc)
                if target is not None and not c.begin <= pc <= c.end:
                    assert not c.begin < target <= c.end
            memory = [
                a.classes[pc]
                for pc in range(c.begin, c.end + 1)
                if a.classes[pc].kind is Kind.MEMORY
                and a.classes[pc].access in (Access.LOAD, Access.STORE)
                and a.classes[pc].space in (Space.GLOBAL, Space.LOCAL, Space.GENERIC)
            ]
            assert len(memory) == c.n_ld + c.n_st > 0
            assert set(c.live_in) <= a.liveness.live_before(c.begin)
            if c.conditional:
                assert c.threshold >= 2 and c.loop_kind == "entry"
                assert sum(c.bandwidth_at(c.threshold)) < 0 <= sum(c.bandwidth_at(1))
            else:
                assert c.saving > 0
                assert c.tag == (TAG_TX if c.bw_tx < 0 else 0) | (TAG_RX if c.bw_rx < 0 else 0)
            assert c.as_dict()["begin_pc"] == c.begin
            assert 0 < c.live_registers <= thread_live_registers(f)
            whole = [lp for lp in a.loops if c.begin <= lp.start_pc and lp.end_pc - 1 <= c.end]
            if whole:  # the loops rule: a loop, with set-up code but no other access
                first = min(lp.start_pc for lp in whole)
                assert c.end == max(lp.end_pc for lp in whole) - 1
                assert not any(a.classes[pc].kind is Kind.MEMORY for pc in range(c.begin, first)
                               if a.classes[pc].space in (Space.GLOBAL, Space.LOCAL))  # fmt: skip


def test_lib_offloads_each_figure_4_loop_when_it_runs_four_times():
    (f,) = parse_ptx_file(KERNEL_DIR / "lib.ptx").functions.values()
    a = analyze(f)

    def accesses(loop, access):
        return sum(
            a.classes[pc].access is access and a.classes[pc].is_global_memory
            for b in loop.blocks
            for pc in a.cfg[b].pcs
        )

    # Figure 4's two loops: one load and one store per iteration, counts known at entry.
    figure_4 = [
        loop
        for loop in a.loops
        if accesses(loop, Access.LOAD) == 1 and accesses(loop, Access.STORE) == 1
    ]
    assert len(figure_4) == 2
    # the maximal rule starts each block at the loop counter's initialization to 0, which the
    # paper's five inputs do not count either
    candidates = tom_candidates(f, "maximal")
    for loop in figure_4:
        assert loop.trip_count_kind is TripCountKind.ENTRY
        c = covering(candidates, loop.start_pc, loop.end_pc - 1)
        assert c.conditional and c.threshold == 4 and c.tag == TAG_RX
        assert c.loop_header_pc == a.cfg[loop.header].start
        assert c.condition.endswith(">= 4") and c.condition_register in c.live_in
    # the loops rule finds the same two blocks: each loop with its set-up code
    assert [covering(tom_candidates(f), lp.start_pc) for lp in figure_4] == [
        covering(candidates, lp.start_pc) for lp in figure_4
    ]


def test_vadd_offloads_its_two_loads_and_its_store_together():
    (f,) = parse_ptx_file(KERNEL_DIR / "vadd.ptx").functions.values()
    memory = [pc for pc, inst in enumerate(f.instructions) if inst.opcode in ("ld", "st")]
    accesses = [pc for pc in memory if f.instructions[pc].space is Space.GLOBAL]
    assert len(accesses) == 3
    c = covering(tom_candidates(f), *accesses)
    assert (c.n_ld, c.n_st) == (2, 1) and not c.conditional
    assert c.saving > 0 and c.tag == TAG_TX | TAG_RX
