"""The PTX parser: what it reads, and how it reports what it cannot."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ndpsim.errors import PTXError, PTXSyntaxError, UnsupportedInstruction
from ndpsim.frontend.ir import (
    Address,
    Immediate,
    Register,
    RegisterPair,
    Sink,
    Space,
    SpecialRegister,
    Symbol,
    Vector,
)
from ndpsim.frontend.parser import parse_ptx
from ndpsim.workloads.base import KERNEL_DIR

HEADER = ".version 9.0\n.target sm_75\n.address_size 64\n"


def kernel(body: str, params: str = ".param .u64 k_param_0", decls: str = "") -> str:
    regs = (
        ".reg .pred %p<8>;\n.reg .b16 %rs<8>;\n.reg .b32 %r<32>;\n.reg .f32 %f<16>;\n"
        ".reg .b64 %rd<16>;\n.reg .f64 %fd<8>;\n"
    )
    return f"{HEADER}.visible .entry k(\n{params}\n)\n{{\n{regs}{decls}{body}\n}}\n"


BODY_LINE = kernel("@BODY@").splitlines().index("@BODY@") + 1


def first_instruction(line: str):
    return parse_ptx(kernel(line + "\nret;")).functions["k"].instructions[0]


def test_module_directives_and_parameters_are_read():
    module = parse_ptx(kernel("ret;", ".param .u64 k_param_0,\n.param .u32 k_param_1"))
    assert (module.version, module.target, module.address_size) == ("9.0", "sm_75", 64)
    params = module.functions["k"].params
    assert [(p.name, p.type.name, p.offset) for p in params] == [
        ("k_param_0", "u64", 0),
        ("k_param_1", "u32", 8),
    ]
    assert module.functions["k"].param_bytes == 12


def test_register_ranges_declare_each_register():
    func = parse_ptx(kernel("ret;")).functions["k"]
    assert func.registers["%r0"].name == "b32" and func.registers["%r31"].name == "b32"
    assert "%r32" not in func.registers
    assert func.registers["%p7"].kind == "pred"


def test_guard_opcode_modifiers_and_operands():
    inst = first_instruction("@!%p1 ld.global.nc.v2.f32 {%f1, %f2}, [%rd3+-8];")
    assert inst.guard == Register("%p1", negated=True)
    assert inst.opcode == "ld"
    assert inst.modifiers == ("global", "nc", "v2", "f32")
    assert inst.space is Space.GLOBAL and inst.vector_width == 2
    assert inst.operands == (
        Vector((Register("%f1"), Register("%f2"))),
        Address(Register("%rd3"), -8),
    )
    assert inst.defs == ("%f1", "%f2") and set(inst.uses) == {"%rd3", "%p1"}


def test_float_literals_in_hex_are_decoded_exactly():
    inst = first_instruction("mov.f32 %f1, 0f3F800000;")
    assert inst.operands[1] == Immediate(1.0, "0f3F800000")
    double = first_instruction("mov.f64 %fd1, 0dC000000000000000;")
    assert double.operands[1].value == -2.0
    nan = first_instruction("mov.f32 %f1, 0f7FC00000;")
    assert math.isnan(nan.operands[1].value)


def test_special_registers_pairs_sinks_and_symbols():
    inst = first_instruction("mov.u32 %r1, %ctaid.y;")
    assert inst.operands[1] == SpecialRegister("ctaid", "y")
    shfl = first_instruction("shfl.sync.down.b32 %r2|%p1, %r3, 16, 31, -1;")
    assert shfl.operands[0] == RegisterPair(Register("%r2"), Register("%p1"))
    assert shfl.defs == ("%r2", "%p1")
    assert shfl.operands[4] == Immediate(-1, "-1")
    vote = first_instruction("ld.global.v4.u32 {%r1, _, %r3, _}, [%rd1];")
    assert vote.operands[0].elements[1] == Sink()
    smem = parse_ptx(
        kernel("mov.u32 %r1, buf;\nret;", decls=".shared .align 4 .b8 buf[256];\n")
    ).functions["k"]
    assert smem.instructions[0].operands[1] == Symbol("buf")
    assert smem.variables["buf"].size_bytes == 256 and smem.variables["buf"].space is Space.SHARED


def test_labels_name_the_next_instruction():
    func = parse_ptx(kernel("bra $L1;\nadd.s32 %r1, %r1, 1;\n$L1:\nret;")).functions["k"]
    assert func.labels == {"$L1": 2}
    assert func.instructions[0].branch_target == "$L1"


def test_comments_pragmas_debug_directives_and_nested_scopes_are_skipped():
    text = kernel(
        '// a comment\n.loc 1 2 3\n.pragma "nounroll";\n/* block\ncomment */\n'
        "{\n.reg .b32 %t1;\nmov.u32 %t1, 7;\n}\nret;"
    )
    func = parse_ptx(text).functions["k"]
    assert [i.opcode for i in func.instructions] == ["mov", "ret"]


def test_instruction_locations_point_at_the_statement():
    func = parse_ptx(kernel("  add.s32 %r1, %r2, 3;\n@%p1 bra $L;\n$L:\nret;")).functions["k"]
    first, branch = func.instructions[0], func.instructions[1]
    assert (first.location.line, first.location.column) == (BODY_LINE, 3)
    assert (branch.location.line, branch.location.column) == (BODY_LINE + 1, 1)


@pytest.mark.parametrize(
    ("body", "message", "token"),
    [
        ("add.s32 %r1, %r2 %r3;\nret;", "expected ',' or ';'", "%r3"),
        ("add.s32 %r1, %r99, 1;\nret;", "never declared", "add.s32"),
        ("bra $nowhere;\nret;", "undefined label", "bra"),
        ("ld.global.f32 %f1, [%rd1;\nret;", "']'", ";"),
        ("mov.u32 %r1, #;\nret;", "unexpected character", "#"),
    ],
)
def test_malformed_input_is_a_located_syntax_error(body, message, token):
    with pytest.raises(PTXSyntaxError) as info:
        parse_ptx(kernel(body), "bad.ptx")
    err = info.value
    line = BODY_LINE
    assert message in str(err)
    assert err.location.file == "bad.ptx" and err.location.line == line
    assert err.token == token
    assert str(err).startswith(f"bad.ptx:{line}:")


def test_unknown_opcode_is_unsupported_with_its_location():
    with pytest.raises(UnsupportedInstruction) as info:
        parse_ptx(kernel("frobnicate.b32 %r1, %r2;\nret;"), "x.ptx")
    assert info.value.location.line == BODY_LINE and info.value.token == "frobnicate.b32"


def test_missing_version_and_unclosed_function_are_reported():
    with pytest.raises(PTXSyntaxError, match=r"missing \.version"):
        parse_ptx(".target sm_75\n")
    with pytest.raises(PTXSyntaxError, match=r"not closed|end of file"):
        parse_ptx(HEADER + ".visible .entry k()\n{\nret;\n")


_OPERANDS = st.sampled_from(
    [
        *("%r1", "%r2", "%f3", "%rd4", "-7", "0x1F", "0f40490FDB", "%tid.x", "[%rd1+16]"),
        *("{%f1, %f2}", "%r5|%p2", "_", "!%p3"),
    ]
)
_MNEMONICS = st.sampled_from(
    [
        *("add.s32", "ld.global.f32", "setp.lt.and.s32", "mov.b64", "cvt.rn.f32.s32"),
        *("shfl.sync.idx.b32", "atom.global.add.u32", "st.shared.v2.f32", "fma.rn.f32"),
        "bar.sync",
    ]
)


@given(_MNEMONICS, st.lists(_OPERANDS, max_size=5), st.booleans())
def test_printed_instructions_parse_back_to_the_same_instruction(mnemonic, operands, guarded):
    text = ("@%p1 " if guarded else "") + mnemonic + " " + ", ".join(operands) + ";"
    inst = first_instruction(text.replace(" ;", ";"))
    again = first_instruction(inst.text + ";")
    assert (again.opcode, again.modifiers, again.operands, again.guard) == (
        inst.opcode,
        inst.modifiers,
        inst.operands,
        inst.guard,
    )


@settings(max_examples=300)
@given(st.text(alphabet=st.sampled_from(list("%.$_[]{}(),;:<>+-|!@=*/ \n\tabcdefxyz0123456789")),
               max_size=200))  # fmt: skip
def test_arbitrary_text_in_a_body_never_escapes_as_a_bare_exception(body):
    try:
        parse_ptx(kernel(body))
    except PTXError as err:
        assert err.location is None or err.location.line >= 1


@pytest.mark.parametrize("ptx", sorted(KERNEL_DIR.glob("*.ptx")), ids=lambda p: p.stem)
def test_every_committed_kernel_parses(ptx):
    module = parse_ptx(ptx.read_text(), str(ptx))
    assert module.kernels
    assert module.version.startswith("9.")
