"""ALP's compiler phase (sec. 3.1): segments, Equation 1 on hand-written PTX, and the clusters of
tightly connected segments, the if/else rule of Figure 3b among them."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from ndpsim.analysis.alp import clusters, connectivity, segments
from ndpsim.analysis.passes import OFFLOAD_PASSES
from ndpsim.cli.main import app
from ndpsim.frontend.ir import Function
from ndpsim.frontend.parser import parse_ptx, parse_ptx_file
from ndpsim.workloads.base import KERNEL_DIR


def ptx_text(body: str) -> str:
    return (
        ".version 9.0\n.target sm_75\n.address_size 64\n"
        ".visible .entry k(.param .u64 k_p0, .param .u32 k_p1)\n{\n"
        ".reg .pred %p<8>;\n.reg .b32 %r<32>;\n.reg .b64 %rd<16>;\n" + body + "\n}\n"
    )


def kernel(body: str) -> Function:
    return parse_ptx(ptx_text(body)).functions["k"]


# b0 computes r1, r2, r3 and branches; b1 uses r1 and r2 (and r4, which it computes itself);
# b2 uses r3 only
HANDS_ON = kernel("""
    ld.param.u64 %rd1, [k_p0];
    ld.param.u32 %r1, [k_p1];
    add.s32 %r2, %r1, 1;
    add.s32 %r3, %r1, 2;
    setp.lt.s32 %p1, %r1, 5;
    @%p1 bra FAR;
    mul.lo.s32 %r4, %r1, %r2;
    add.s32 %r5, %r4, %r2;
    st.global.u32 [%rd1], %r5;
    ret;
FAR:
    st.global.u32 [%rd1], %r3;
    ret;
""")


def test_equation_1_takes_the_larger_share_of_what_either_segment_moves():
    first, second = frozenset({"%a", "%b"}), frozenset({"%x", "%y", "%z"})
    # the first hands the second %x and %y of its three outputs; the second takes four inputs
    inputs = frozenset({"%x", "%y", "%c", "%d"})
    assert connectivity(first, second, inputs, frozenset()) == pytest.approx(max(2 / 5, 2 / 4))
    assert connectivity(first, second, frozenset({"%c"}), frozenset({"%e"})) == 0.0
    assert connectivity(frozenset(), frozenset(), frozenset(), frozenset()) == 0.0


def test_segments_are_basic_blocks_with_the_registers_they_take_and_hand_on():
    s = segments(HANDS_ON)
    assert [(x.begin, x.end) for x in s] == [(0, 5), (6, 9), (10, 11)]
    assert s[0].reg_in == frozenset()
    assert s[0].reg_out == {"%rd1", "%r1", "%r2", "%r3"}  # each read after the branch
    assert s[1].reg_in == {"%rd1", "%r1", "%r2"}  # r4 and r5 are its own
    assert s[1].reg_out == frozenset() and s[2].reg_in == {"%rd1", "%r3"}
    # Equation 1 on the two edges: b0 hands b1 three of its four outputs (b1 takes just
    # those three), b2 two (both of b2's inputs)
    assert connectivity(s[0].reg_in, s[0].reg_out, s[1].reg_in, s[1].reg_out) == 1.0
    assert connectivity(s[0].reg_in, s[0].reg_out, s[2].reg_in, s[2].reg_out) == 1.0


# a loop (b1) that hands a single value on to a long tail (b2) that reads much else
LOOSE = kernel("""
    ld.param.u64 %rd1, [k_p0];
    ld.param.u32 %r1, [k_p1];
    mov.u32 %r2, 0;
    mov.u32 %r10, 7;
    mov.u32 %r11, 8;
    mov.u32 %r12, 9;
    mov.u32 %r13, 10;
LOOP:
    add.s32 %r2, %r2, 1;
    setp.lt.s32 %p1, %r2, %r1;
    @%p1 bra LOOP;
    add.s32 %r20, %r10, %r11;
    add.s32 %r21, %r12, %r13;
    add.s32 %r22, %r20, %r21;
    add.s32 %r23, %r22, %r2;
    st.global.u32 [%rd1], %r23;
    ret;
""")


def test_segments_join_a_cluster_only_above_the_threshold():
    s = segments(LOOSE)
    assert len(s) == 3
    loop_to_tail = connectivity(s[1].reg_in, s[1].reg_out, s[2].reg_in, s[2].reg_out)
    assert 0 < loop_to_tail < 0.5
    tight = clusters(LOOSE, threshold=loop_to_tail)
    assert [c.blocks for c in tight] == [(0, 1, 2)]  # b0 hands both everything they take
    loose = clusters(LOOSE, threshold=1.01)  # no pair reaches it: every segment alone
    assert [c.blocks for c in loose] == [(0,), (1,), (2,)]
    # a cluster's registers are those that cross its border
    assert tight[0].reg_in == frozenset() and tight[0].reg_out == frozenset()


# b0 computes values for the sides; b1 branches on a value of its own to b2 or b3, which meet
# again at b4: b1 takes and hands on nothing, so only the if/else rule joins it to its sides
DIAMOND_BODY = """
    ld.param.u64 %rd1, [k_p0];
    ld.param.u32 %r1, [k_p1];
    add.s32 %r2, %r1, 1;
    bra.uni BRANCH;
BRANCH:
    ld.param.u32 %r9, [k_p1];
    setp.lt.s32 %p1, %r9, 5;
    @%p1 bra ELSE;
    add.s32 %r7, %r1, %r2;
    bra.uni JOIN;
ELSE:
    mov.u32 %r7, 0;
JOIN:
    st.global.u32 [%rd1], %r7;
    ret;
"""
DIAMOND = kernel(DIAMOND_BODY)


def test_a_tightly_connected_side_of_a_branch_clusters_the_whole_diamond():
    s = segments(DIAMOND)
    assert [x.successors for x in s] == [(1,), (3, 2), (4,), (4,), ()]
    assert s[1].reg_in == s[1].reg_out == frozenset()  # the branch's segment moves nothing

    def strength(a, b):
        return connectivity(s[a].reg_in, s[a].reg_out, s[b].reg_in, s[b].reg_out)

    assert strength(1, 2) == strength(1, 3) == 0.0
    threshold = strength(2, 4)  # the weaker side's edge into the join
    assert 0 < threshold <= strength(3, 4)
    # by the if/else rule the branch, both sides and the join form one cluster, which then
    # takes b0 too (b0 hands it everything it reads)
    assert [c.blocks for c in clusters(DIAMOND, threshold)] == [(0, 1, 2, 3, 4)]
    # just above the sides' edges nothing joins, the branch's segment included
    assert [c.blocks for c in clusters(DIAMOND, 1.01)] == [(0,), (1,), (2,), (3,), (4,)]


def test_the_alp_segments_pass_lists_every_segment_with_its_connectivity():
    alp = OFFLOAD_PASSES.get("alp-segments")
    assert [x.block for x in alp(HANDS_ON)] == [0, 1, 2]
    facts = alp.facts(HANDS_ON)["alp_connectivity"]
    assert facts == {"b0": {"b2": 1.0, "b1": 1.0}, "b1": {}, "b2": {}}


@pytest.mark.parametrize("threshold", [0.0, 0.5, 1.01])
def test_clusters_partition_every_suite_kernels_segments(threshold):
    for path in sorted(KERNEL_DIR.glob("*.ptx")):
        for function in parse_ptx_file(path).functions.values():
            found = clusters(function, threshold)
            blocks = sorted(b for c in found for b in c.blocks)
            assert blocks == list(range(len(segments(function)))), path.name
            if threshold == 0.0:  # every edge joins: a kernel's blocks are one cluster
                assert len(found) == 1, path.name


def test_analyze_shows_the_segments_and_their_connectivity(tmp_path):
    ptx = tmp_path / "diamond.ptx"
    ptx.write_text(ptx_text(DIAMOND_BODY))
    runner = CliRunner()
    shown = runner.invoke(app, ["analyze", str(ptx), "--pass", "alp-segments"],
                          env={"COLUMNS": "160"})  # fmt: skip
    assert shown.exit_code == 0, shown.output
    assert "5 segments; connectivity (Equation 1):" in shown.output
    out = tmp_path / "diamond.json"
    assert runner.invoke(app, ["analyze", str(ptx), "--pass", "alp-segments", "--json",
                               str(out)]).exit_code == 0  # fmt: skip
    (function,) = json.loads(out.read_text())["functions"]
    assert [s["successors"] for s in function["alp_segments"]] == [[1], [3, 2], [4], [4], []]
    assert function["alp_connectivity"]["b1"] == {"b3": 0.0, "b2": 0.0}
