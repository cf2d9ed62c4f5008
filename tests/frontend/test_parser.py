"""The PTX parser: what it reads, and how it reports what it cannot."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ndpsim.errors import PTXError, PTXSyntaxError, PTXTypeError, UnsupportedInstruction
from ndpsim.frontend.ir import (
    NO_DESTINATION_OPCODES,
    Address,
    ArgumentList,
    Immediate,
    Register,
    RegisterPair,
    Sink,
    Space,
    SpecialRegister,
    Symbol,
    Vector,
)
from ndpsim.frontend.parser import OPERAND_COUNTS, parse_ptx
from ndpsim.simt.semantics import _BUILDERS
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


def test_integer_literals_are_hex_octal_or_decimal():
    assert first_instruction("mov.u32 %r1, 017;").operands[1].value == 15
    assert first_instruction("mov.u32 %r1, 0x1F;").operands[1].value == 31
    assert first_instruction("mov.u32 %r1, 10U;").operands[1].value == 10
    assert first_instruction("mov.u32 %r1, 0;").operands[1].value == 0


def test_a_leading_zero_literal_with_non_octal_digits_is_an_error():
    with pytest.raises(PTXSyntaxError, match="leading 0 is octal") as info:
        first_instruction("mov.u32 %r1, 09;")
    assert info.value.token == "09"


def test_a_register_declaration_too_large_to_expand_is_an_error():
    with pytest.raises(PTXSyntaxError, match="more than 1,048,576 registers") as info:
        parse_ptx(kernel(".reg .b64 %rd<4000000000>;\nret;"))
    assert info.value.token == "4000000000"


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


def located_syntax_error(text: str) -> PTXSyntaxError:
    """The error parsing ``text`` as bad.ptx raises, checked to name that file."""
    with pytest.raises(PTXSyntaxError) as info:
        parse_ptx(text, "bad.ptx")
    assert info.value.location.file == "bad.ptx"
    return info.value


@pytest.mark.parametrize(
    ("line", "message", "token"),
    [
        ("mov.u32 5, %r1;", "mov.u32 must be a register or '_', not an immediate", "5"),
        ("atom.global.add.u32 4, [%rd1], 1;", "not an immediate", "4"),
        ("mov.u32 %tid.x, %r1;", "not a read-only special register", "%tid.x"),
        ("ld.global.u32 [%rd1], %r1;", "not an address", "["),
        ("and.pred !%p1, %p2, %p3;", "not a negated predicate", "!"),
        ("mov.u64 k_param_0, %rd1;", "not a name", "k_param_0"),
        ("ld.global.v2.u32 {%r1, 3}, [%rd1];", "not an immediate", "3"),
        ("setp.lt.s32 %p1|%tid.x, %r1, 2;", "not a read-only special register", "%tid.x"),
    ],
)
def test_an_immediate_or_other_read_only_operand_cannot_be_a_destination(line, message, token):
    err = located_syntax_error(kernel(line + "\nret;"))
    assert message in err.detail
    assert (err.location.line, err.token) == (BODY_LINE, token)


@pytest.mark.parametrize(
    "line",
    [
        "st.global.u32 [%rd1], 5;",
        "red.global.add.u32 [%rd1], 1;",
        "bar.sync 0;",
        "nanosleep.u32 100;",
        "setmaxnreg.inc.sync.aligned.u32 240;",
        "mbarrier.init.shared.b64 [%rd1], 1;",  # mbarrier.arrive, by contrast, writes a state
    ],
)
def test_instructions_that_write_no_destination_may_begin_with_any_operand(line):
    inst = first_instruction(line)
    assert inst.opcode == line.split(".")[0]


@pytest.mark.parametrize(
    ("line", "message", "token"),
    [
        ("add.s32 %r1, %r2;", "expected 3 operands for add.s32, found 2", ";"),
        ("add.s32 %r1, %r2, %r3, %r0;", "expected 3 operands for add.s32, found 4", "%r0"),
        ("ld.global.u32 %r1, [%rd1], 4;", "expected 2 operands for ld.global.u32, found 3", "4"),
        ("st.global.u32 [%rd1];", "expected 2 operands", ";"),
        ("fma.rn.f32 %f1, %f2, %f3;", "expected 4 operands", ";"),
        ("bfi.b32 %r1, %r2, %r3, %r4;", "expected 5 operands", ";"),
        ("cvt.rn.f32.s32 %f1, %r1, %r2;", "expected 2 operands", "%r2"),
        ("setp.lt.and.s32 %p1, %r1, %r2;", "expected 4 operands for setp.lt.and.s32", ";"),
        ("setp.lt.s32 %p1, %r1, %r2, %p2;", "expected 3 operands for setp.lt.s32", "%p2"),
        ("atom.global.cas.b32 %r1, [%rd1], %r2;", "expected 4 operands", ";"),
        ("shfl.sync.idx.b32 %r1, %r2, 0;", "expected 4 or 5 operands", ";"),
        ("bar.sync;", "expected 1 or 2 operands for bar.sync, found 0", ";"),
        ("activemask.b32 %r1, %r2;", "expected 1 operand for activemask.b32, found 2", "%r2"),
        ("ret 1;", "expected 0 operands for ret, found 1", "1"),
        # the three-source min/max of newer PTX is not executed, so it is not accepted either
        ("min.f32 %f1, %f2, %f3, %f4;", "expected 3 operands for min.f32, found 4", "%f4"),
    ],
)
def test_an_executed_opcode_with_the_wrong_number_of_operands_is_an_error(line, message, token):
    err = located_syntax_error(kernel(line + "\nret;"))
    assert message in err.detail
    assert (err.location.line, err.token) == (BODY_LINE, token)


@pytest.mark.parametrize(
    "line",
    [
        "setp.ne.and.s32 %p3|%p4, %r1, %r3, %p1;",
        "atom.global.cas.b32 %r1, [%rd1], %r2, %r3;",
        "ld.global.L2::cache_hint.u32 %r1, [%rd1], %rd2;",
        "atom.global.L2::cache_hint.cas.b32 %r1, [%rd1], %r2, %r3, %rd2;",
        "shfl.down.b32 %r1, %r2, 1, 31;",
        "vote.ballot.b32 %r1, %p1;",
        "bar.sync 1, 64;",
        "bar.red.popc.u32 %r1, 0, %p1;",
        "barrier.cluster.arrive;",
        "cvt.rn.f16x2.f32 %r1, %f1, %f2;",
        "fence.proxy.tensormap::generic.acquire.gpu [%rd1], 128;",
        "lop3.or.b32 %r1|%p1, %r2, %r3, %r4, 0xE8, %p2;",
    ],
)
def test_optional_operands_of_executed_opcodes_are_accepted(line):
    assert first_instruction(line).opcode == line.split(".")[0]


def test_every_opcode_the_interpreter_executes_has_an_operand_count():
    control = {"bra", "ret", "exit", "bar", "barrier"}  # run by the interpreter, not a builder
    assert set(OPERAND_COUNTS) == set(_BUILDERS) | control


@pytest.mark.parametrize(
    ("line", "modifier", "column"),
    [
        ("add.q32 %r1, %r2, %r3;", ".q32", 4),
        ("cvt.u33.u32 %rd1, %r1;", ".u33", 4),
        ("  ld.global.f31 %f1, [%rd1];", ".f31", 12),
    ],
)
def test_an_unknown_type_suffix_is_an_error_naming_the_valid_types(line, modifier, column):
    err = located_syntax_error(kernel(line + "\nret;"))
    assert f"unknown type {modifier}: expected one of .pred, .s8," in err.detail
    assert ".f32" in err.detail and ".bf16x2" in err.detail
    assert (err.location.line, err.location.column, err.token) == (BODY_LINE, column, modifier)


@pytest.mark.parametrize(
    "line",
    [
        "ld.global.nc.v4.f32 {%f1, %f2, %f3, %f4}, [%rd1];",
        "ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%r1, %r2, %r3, %r4}, [%rd1];",
        "mma.sync.aligned.m8n8k32.row.col.s32.s4.u4.s32 {%r1, %r2}, {%r3}, {%r4}, {%r5, %r6};",
        "mma.sync.aligned.m8n8k128.row.col.s32.b1.b1.s32.and.popc {%r1, %r2}, %r3, %r4, {%r5};",
        "prmt.b32.rc8 %r1, %r2, %r3, %r4;",
        "cvt.rn.satfinite.e4m3x2.f32 %rs1, %f1, %f2;",
        "fma.rn.ftz.sat.f32 %f1, %f2, %f3, %f4;",
        "mul.wide.u32 %rd1, %r1, %r2;",
        "add.rn.bf16x2 %r1, %r2, %r3;",
        "bar.warp.sync -1;",
    ],
)
def test_modifiers_spelled_like_types_that_are_valid_still_parse(line):
    assert first_instruction(line).opcode == line.split(".")[0]


CALLS = (
    HEADER
    + """
.func (.param .b32 func_retval0) square(.param .b32 square_param_0)
{
.reg .b32 %r<3>;
ld.param.u32 %r1, [square_param_0];
mul.lo.s32 %r2, %r1, %r1;
st.param.b32 [func_retval0+0], %r2;
ret;
}
.extern .func sink
(
)
;
.visible .entry k(.param .u64 k_param_0)
{
.reg .b32 %r<4>;
{ // callseq 0, 0
.reg .b32 temp_param_reg;
.param .b32 param0;
st.param.b32 [param0+0], %r1;
.param .b32 retval0;
call.uni (retval0),
square,
(
param0
);
ld.param.b32 %r2, [retval0+0];
} // callseq 0
call.uni sink, ();
call sink;
call.uni later, (%r3, 5);
ret;
}
.func later(.param .b32 a, .param .b32 b)
{
ret;
}
"""
)


def test_calls_to_defined_declared_and_later_functions_parse_with_their_lists():
    module = parse_ptx(CALLS)
    calls = [i for i in module.functions["k"].instructions if i.opcode == "call"]
    assert [c.operands for c in calls] == [
        (ArgumentList((Symbol("retval0"),)), Symbol("square"), ArgumentList((Symbol("param0"),))),
        (Symbol("sink"), ArgumentList(())),
        (Symbol("sink"),),
        (Symbol("later"), ArgumentList((Register("%r3"), Immediate(5, "5")))),
    ]
    assert calls[0].text == "call.uni (retval0), square, (param0)"
    assert calls[3].uses == ("%r3",) and calls[3].defs == ()
    assert module.functions["k"].variables["param0"].space is Space.PARAM


@pytest.mark.parametrize(
    ("line", "message", "token"),
    [
        ("call.uni foo, (%r1);", "call to undefined function 'foo': expected a .func", "foo"),
        ("call.uni (%r1), k, (%r2);", "call to kernel 'k': expected a .func", "k"),
        ("call.uni (%r1), 5;", "expected the name of the called function", "5"),
        ("call.uni;", "expected the name of the called function", ";"),
        ("mov.u32 %r1, (%r2);", "only call takes a '(...)' list", "("),
    ],
)
def test_a_call_must_name_a_function_of_the_module(line, message, token):
    err = located_syntax_error(kernel(line + "\nret;"))
    assert message in err.detail
    assert (err.location.line, err.token) == (BODY_LINE, token)


def test_missing_version_and_unclosed_function_are_reported():
    with pytest.raises(PTXSyntaxError, match=r"missing \.version"):
        parse_ptx(".target sm_75\n")
    with pytest.raises(PTXSyntaxError, match=r"not closed|end of file"):
        parse_ptx(HEADER + ".visible .entry k()\n{\nret;\n")


_OPERANDS = st.sampled_from(
    [
        *("%r1", "%r2", "%f3", "%rd4", "-7", "0x1F", "0f40490FDB", "%tid.x"),
        *("{%f1, %f2}", "%r5|%p2", "_", "!%p3"),
    ]
)
_ADDRESSES = st.sampled_from(["[%rd1+16]", "[%rd1]", "[k_param_0]", "[k_param_0+-8]", "[64]"])
# What an instruction that writes its first operand may have there.
_DESTINATIONS = st.sampled_from(["%r1", "%f3", "{%f1, %f2}", "%r5|%p2", "_"])
# Mnemonics with the number of operands each takes and where its address goes (or None).
_MNEMONICS = st.sampled_from(
    [
        *(("add.s32", 3, None), ("ld.global.f32", 2, 1), ("setp.lt.and.s32", 4, None)),
        *(("mov.b64", 2, None), ("cvt.rn.f32.s32", 2, None), ("shfl.sync.idx.b32", 5, None)),
        *(("atom.global.add.u32", 3, 1), ("st.shared.v2.f32", 2, 0), ("fma.rn.f32", 4, None)),
        ("bar.sync", 1, None),
    ]
)


@st.composite
def _instructions(draw) -> str:
    mnemonic, count, address = draw(_MNEMONICS)
    writes = mnemonic.split(".")[0] not in NO_DESTINATION_OPCODES
    operands = [draw(_DESTINATIONS if writes else _OPERANDS)]
    operands += [draw(_OPERANDS) for _ in range(count - 1)]
    if address is not None:
        operands[address] = draw(_ADDRESSES)
    return f"{mnemonic} {', '.join(operands)};"


@given(_instructions(), st.booleans())
def test_printed_instructions_parse_back_to_the_same_instruction(text, guarded):
    try:
        inst = first_instruction(("@%p1 " if guarded else "") + text)
    except PTXTypeError as err:  # ill-typed: its printed form must be refused the same way
        with pytest.raises(PTXTypeError) as again:
            first_instruction(err.token + ";")
        assert (again.value.token, again.value.detail) == (err.token, err.detail)
        return
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


@pytest.mark.parametrize(
    "line, message",
    [
        ("bra %rd1;", "bra takes the name of a label"),
        ("ld.global.f32 %f1, %rd1;", "takes one address operand"),
        ("st.global.f32 %rd1, %f1;", "takes one address operand"),
        ("atom.global.add.u32 %r1, %rd1, 1;", "takes one address operand"),
        ("shfl.sync.b32 %r1, %r2, 1, 31, -1;", "shfl takes a mode"),
        ("mov.b64 %rd1, {};", "1 to 8 elements"),
        ("mov.b64 %rd1, " + "{" * 3000 + "%r1;", "expected an operand"),
        ("mov.u64 %rd1, " + "9" * 5000 + ";", "wider than 64 bits"),
        ("mov.u64 %rd1, 18446744073709551616;", "wider than 64 bits"),
        ("mov.s64 %rd1, -9223372036854775809;", "wider than 64 bits"),
        ("ld.global.f32 %f1, [%rd1+99999999999999999999];", "wider than 64 bits"),
    ],
)
def test_operands_an_opcode_cannot_take_are_errors_not_crashes(line, message):
    # each of these once escaped as a bare KeyError, StopIteration, ZeroDivisionError,
    # RecursionError or ValueError, or a literal silently wrapped
    with pytest.raises(PTXSyntaxError, match=message):
        first_instruction(line)


def test_the_widest_64_bit_literals_are_accepted():
    for literal, value in (("18446744073709551615", (1 << 64) - 1), ("-9223372036854775808",
                           -(1 << 63)), ("01777777777777777777777", (1 << 64) - 1)):  # fmt: skip
        assert first_instruction(f"mov.u64 %rd1, {literal};").operands[1].value == value


@pytest.mark.parametrize("size", ["abc", "123456789", "0", ""])
def test_an_address_size_other_than_32_or_64_is_an_error(size):
    text = kernel("ret;").replace(".address_size 64", f".address_size {size}")
    with pytest.raises(PTXSyntaxError, match="takes 32 or 64"):
        parse_ptx(text)
