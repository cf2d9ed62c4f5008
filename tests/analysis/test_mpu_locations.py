"""MPU's location annotation (Algorithm 1) on hand-written PTX: the labels the paper's rules give
(Fig. 7's near-bank chain among them), the readings docs/offload.md states, the runs the pass
reports and how `ndpsim analyze --pass mpu-locations` prints them."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from ndpsim.analysis.mpu import (
    BOTH,
    FAR,
    NEAR,
    UNKNOWN,
    join,
    location_runs,
    mpu_locations,
    register_split,
)
from ndpsim.analysis.passes import OFFLOAD_PASSES
from ndpsim.cli.main import app
from ndpsim.frontend.ir import Function
from ndpsim.frontend.parser import parse_ptx

HEADER = (
    ".version 9.0\n.target sm_75\n.address_size 64\n"
    ".visible .entry k(.param .u64 k_p0, .param .u64 k_p1, .param .u32 k_p2)\n{\n"
    ".reg .pred %p<8>;\n.reg .b32 %r<32>;\n.reg .f32 %f<16>;\n.reg .b64 %rd<16>;\n"
    ".shared .align 4 .b8 buf[1024];\n"
)

# Fig. 7 of the paper inside a kernel: two loads, their sum, its store
FIG7 = """
    ld.param.u64 %rd1, [k_p0];
    ld.param.u64 %rd2, [k_p1];
    mov.u32 %r1, %tid.x;
    mul.wide.u32 %rd7, %r1, 4;
    add.s64 %rd8, %rd1, %rd7;
    add.s64 %rd9, %rd2, %rd7;
    ld.global.f32 %f1, [%rd9];
    ld.global.f32 %f2, [%rd8];
    add.f32 %f3, %f2, %f1;
    add.s64 %rd10, %rd1, %rd7;
    st.global.f32 [%rd10], %f3;
    ret;
"""


def kernel(body: str) -> Function:
    return parse_ptx(HEADER + body + "\n}\n").functions["k"]


def test_fig7_value_chain_is_near_bank_and_addresses_far():
    f = kernel(FIG7)
    where = mpu_locations(f).registers
    assert {r: where[r] for r in ("%f1", "%f2", "%f3")} == dict.fromkeys(
        ("%f1", "%f2", "%f3"), NEAR
    )
    for address in ("%rd1", "%rd2", "%rd7", "%rd8", "%rd9", "%rd10", "%r1"):
        assert where[address] == FAR, address
    at = mpu_locations(f).instructions
    assert at[6:9] == (NEAR, NEAR, NEAR)  # the loads and the add: the destination's location
    assert at[10] == FAR and at[11] == FAR  # the store follows its address; ret is control


def test_shared_memory_accesses_are_near_bank_address_and_value():
    f = kernel("""
        mov.u32 %r1, %tid.x;
        shl.b32 %r2, %r1, 2;
        mov.u32 %r3, buf;
        add.s32 %r4, %r3, %r2;
        ld.shared.f32 %f1, [%r4];
        add.f32 %f2, %f1, %f1;
        st.shared.f32 [%r4], %f2;
        ret;
    """)
    where = mpu_locations(f).registers
    assert all(where[r] == NEAR for r in ("%r1", "%r2", "%r3", "%r4", "%f1", "%f2"))
    assert mpu_locations(f).instructions[6] == NEAR  # a shared store sits with its address


def test_predicates_and_branch_sources_are_far_bank_and_a_guard_takes_no_location():
    f = kernel("""
        ld.param.u32 %r1, [k_p2];
        mov.u32 %r2, %tid.x;
        setp.ge.u32 %p1, %r2, %r1;
        @%p1 bra DONE;
        ld.param.u64 %rd1, [k_p0];
        ld.global.f32 %f1, [%rd1];
        setp.gt.f32 %p2, %f1, 0f00000000;
        @%p2 add.f32 %f2, %f1, %f1;
        st.global.f32 [%rd1], %f2;
    DONE:
        ret;
    """)
    where = mpu_locations(f).registers
    assert where["%p1"] == where["%p2"] == FAR  # predicates: control on the base die
    assert where["%r1"] == where["%r2"] == FAR  # they only decide a branch
    # a loaded value both stored and compared is wanted on both sides
    assert where["%f1"] == BOTH
    assert where["%f2"] == NEAR  # guarded by %p2, which stays F


def test_a_loaded_value_used_as_an_address_is_both():
    f = kernel("""
        ld.param.u64 %rd1, [k_p0];
        ld.global.u64 %rd2, [%rd1];
        ld.global.f32 %f1, [%rd2];
        st.global.f32 [%rd1], %f1;
        ret;
    """)
    where = mpu_locations(f).registers
    assert where["%rd2"] == BOTH  # a load's value (N) and the next load's address (F)
    assert where["%rd1"] == FAR and where["%f1"] == NEAR


def test_locations_propagate_from_destinations_back_through_computing_chains():
    f = kernel("""
        ld.param.u64 %rd1, [k_p0];
        ld.param.u32 %r1, [k_p2];
        cvt.rn.f32.u32 %f1, %r1;
        mul.f32 %f2, %f1, %f1;
        add.f32 %f3, %f2, 0f3F800000;
        st.global.f32 [%rd1], %f3;
        ret;
    """)
    where = mpu_locations(f).registers
    # the stored value's whole chain, three instructions back, goes near the banks
    assert where["%f3"] == where["%f2"] == where["%f1"] == where["%r1"] == NEAR


def test_an_atomic_has_its_address_far_and_its_values_near():
    f = kernel("""
        ld.param.u64 %rd1, [k_p0];
        ld.param.u32 %r1, [k_p2];
        atom.global.add.u32 %r2, [%rd1], %r1;
        red.global.add.u32 [%rd1], %r2;
        ret;
    """)
    where = mpu_locations(f).registers
    assert where["%rd1"] == FAR and where["%r1"] == where["%r2"] == NEAR
    assert mpu_locations(f).instructions[3] == FAR  # a reduction follows its address


def test_a_value_no_seed_reaches_is_left_to_the_hardware():
    f = kernel("""
        ld.param.u32 %r1, [k_p2];
        add.u32 %r2, %r1, 1;
        ret;
    """)
    assert mpu_locations(f).registers["%r2"] == UNKNOWN
    assert mpu_locations(f).instructions[1] == UNKNOWN
    assert register_split(f)["registers"]["unknown"] == 2  # %r1 only feeds %r2


def test_joining_annotations():
    assert join(UNKNOWN, NEAR) == join(NEAR, UNKNOWN) == join(NEAR, NEAR) == NEAR
    assert join(NEAR, FAR) == join(FAR, NEAR) == join(BOTH, NEAR) == BOTH


def test_runs_cover_every_instruction_once_in_one_location_inside_a_block():
    f = kernel(FIG7)
    runs = location_runs(f)
    assert [(r.begin, r.end, r.location) for r in runs] == [
        (0, 5, FAR), (6, 8, NEAR), (9, 11, FAR),
    ]  # fmt: skip
    assert runs[1].instructions[2] == "add.f32 %f3, %f2, %f1"
    assert OFFLOAD_PASSES.get("mpu-locations")(f) == runs


def test_the_register_split_sits_beside_the_papers():
    split = register_split(kernel(FIG7))
    assert split["registers"] == {"near-bank": 3, "far-bank": 7, "both": 0, "unknown": 0}
    assert abs(sum(split["shares"].values()) - 1) < 1e-12
    assert split["paper_shares"] == {"near-bank": 0.325, "far-bank": 0.637, "both": 0.038}


def test_analyze_prints_each_instructions_location_and_the_split(tmp_path):
    ptx = tmp_path / "fig7.ptx"
    ptx.write_text(HEADER + FIG7 + "\n}\n")
    runner = CliRunner()
    shown = runner.invoke(app, ["analyze", str(ptx), "--pass", "mpu-locations"],
                          env={"COLUMNS": "160"})  # fmt: skip
    assert shown.exit_code == 0, shown.output
    assert "registers near / far / both: 30.0 / 70.0 / 0.0% (paper 32.5 / 63.7 / 3.8%)" in (
        shown.output
    )
    assert "N (near-bank)" in shown.output and "ld.param.u64 %rd1, [k_p0]" in shown.output
    out = tmp_path / "fig7.json"
    assert runner.invoke(app, ["analyze", str(ptx), "--pass", "mpu-locations", "--json",
                               str(out)]).exit_code == 0  # fmt: skip
    (function,) = json.loads(out.read_text())["functions"]
    assert function["mpu_register_split"]["registers"]["near-bank"] == 3
    assert [run["location"] for run in function["mpu_location_runs"]] == [FAR, NEAR, FAR]
