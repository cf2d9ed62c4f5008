"""Operand types, vector arity, literal ranges and declarations, as the PTX ISA states them."""

from __future__ import annotations

import pytest

from ndpsim.errors import PTXSyntaxError, PTXTypeError
from ndpsim.frontend.ir import PTX_TYPES
from ndpsim.frontend.parser import parse_ptx
from ndpsim.frontend.typecheck import CHECKED_OPCODES, compatible
from ndpsim.simt.semantics import _BUILDERS
from tests.frontend.test_parser import HEADER, first_instruction, kernel


@pytest.mark.parametrize(
    ("line", "message"),
    [
        # a predicate where a float goes, a 64-bit register in a 32-bit instruction
        ("add.f32 %f1, %p1, %f2;", r"second operand must be a \.f32 register.*%p1 is \.pred"),
        ("add.s32 %r1, %rd1, %r2;", r"second operand must be a \.s32 register.*%rd1 is \.b64"),
        ("mov.u32 %r1, %f1;", r"\.u32 register.*%f1 is \.f32"),
        ("setp.lt.f32 %r1, %f1, %f2;", r"first operand must be a \.pred register"),
        ("selp.b32 %r1, %r2, %r3, %r4;", r"fourth operand must be a \.pred register"),
        ("cvt.u32.u64 %r1, %r2;", r"second operand must be a \.u64 register"),
        # a float literal is not an integer; a literal must fit its type
        ("add.s32 %r1, %r2, 0f3F800000;", r"floating-point literal \(0f3F800000\) is not an"),
        ("add.s32 %r1, %r2, 4294967296;", r"literal 4294967296 does not fit"),
        ("mov.u16 %rs1, 65536;", r"does not fit .* \.u16 \(16 bits\)"),
        ("mov.b32 %r1, 0d3FF0000000000000;", "64-bit 0d literal does not fit"),
        # what an opcode takes
        ("and.f32 %f1, %f2, %f3;", r"and does not take \.f32; it takes bit or predicate types"),
        ("shl.f32 %f1, %f2, 1;", r"shl does not take \.f32"),
        ("neg.pred %p1, %p2;", r"neg does not take \.pred"),
        ("sub.pred %p1, %p2, %p3;", r"sub does not take \.pred"),
        ("not.f32 %f1, %f2;", r"not does not take \.f32"),
        ("fma.wide.f32 %f1, %f2, %f3, %f4;", r"fma has no \.wide form"),
        ("mul.wide.f32 %f1, %f2, %f3;", r"apply to integer types"),
        ("mul.wide.u64 %rd1, %rd2, %rd3;", r"16- or 32-bit type"),
        ("sqrt.rn.s32 %r1, %r2;", r"sqrt does not take \.s32"),
        # shuffles move 32 bits
        ("shfl.sync.idx.b64 %rd1, %rd2, 0, 31, -1;", r"shfl moves \.b32 values, not \.b64"),
        ("shfl.sync.idx.b32 %r1, %rd2, 0, 31, -1;", r"second operand must be a \.b32 register"),
        ("shfl.sync.idx.b32 %r1, %p2, 0, 31, -1;", r"%p2 is \.pred"),
        ("shfl.sync.idx.pred %p1, %p2, 0, 31, -1;", r"shfl does not take \.pred"),
        # vectors: the arity of .vN, and nowhere else
        ("ld.global.v4.f32 {%f1, %f2}, [%rd1];", r"\.v4 takes 4 elements in its vector, found 2"),
        ("st.global.v2.f32 [%rd1], %f1;", r"\.v2 takes a vector of 2 registers"),
        ("add.f32 {%f1, %f2}, %f3, %f4;", "cannot be a vector"),
        ("mov.b64 %rd1, {%r1, %rs1};", r"split \.b64 into equal registers"),
        # names: a function or label is not a value; an address is an integer
        ("mov.u64 %rd1, k;", r"'k' is a function"),
        ("st.global.f32 [k], %f1;", r"'k' is a function; an address names a variable"),
        ("mov.f32 %f1, k_param_0;", r"address of 'k_param_0' is a 32- or 64-bit integer"),
        # special registers
        ("mov.u32 %r1, %tid;", r"%tid is read by component"),
        ("mov.u32 %r1, %laneid.x;", "%laneid has no components"),
        ("mov.f32 %f1, %tid.x;", r"%tid is a 32-bit integer; .* is \.f32"),
        ("mov.u32 %r1, %clock64;", r"%clock64 is a 64-bit integer"),
        # guards and negation are predicates
        ("@%r1 add.s32 %r2, %r2, 1;", r"the guard must be a \.pred register"),
        ("add.s32 %r1, !%p1, 1;", "'!' negates predicates"),
        ("cvt.f32 %f1, %r1;", "cvt takes a destination type and a source type"),
        ("mov.pred %p1, 2;", r"a literal there must be 0, 1 or -1 \(true\)"),
    ],
)
def test_ill_typed_instructions_are_refused_where_they_stand(line, message):
    with pytest.raises(PTXTypeError, match=message) as err:
        first_instruction(line)
    assert err.value.location is not None and err.value.location.line > 1


@pytest.mark.parametrize(
    "line",
    [
        "ld.global.u8 %r1, [%rd1];",  # a wider register takes a narrow load (zero-extended)
        "ld.global.s16 %rd1, [%rd1];",
        "st.global.u8 [%rd1], %r1;",  # and a narrow store truncates it
        "ld.global.f32 %r1, [%rd1];",  # a bit register holds a float
        "st.global.b32 [%rd1], %f1;",
        "cvt.u16.u32 %rs1, %r1;",
        "cvt.u64.u32 %rd1, %tid.x;",
        "mov.b64 %rd1, {%r1, %r2};",
        "mov.b32 {%rs1, %rs2}, %r1;",
        "mov.b64 {%r1, %r2}, %fd1;",
        "mov.b32 %r1, 0f3F800000;",  # a bit type takes a float literal's bits
        "add.f32 %f1, %r2, 1;",  # a bit register goes with any type of its size; an integer
        # literal in a float instruction is its value
        "add.s32 %r1, %r2, -1;",
        "add.u32 %r1, %r2, 4294967295;",
        "and.pred %p1, %p2, %p3;",
        "not.pred %p1, %p2;",
        "setp.lt.and.s32 %p1|%p2, %r1, %r2, !%p3;",
        "shfl.sync.bfly.b32 %r1|%p1, %f1, 16, 31, -1;",
        "vote.sync.ballot.b32 %r1, %p1, -1;",
        "mov.u64 %rd1, %clock64;",
        "mul.wide.s32 %rd1, %r1, %r2;",
        "mad.wide.u32 %rd1, %r1, %r2, %rd3;",
        "atom.global.cas.b32 %r1, [%rd1], %r2, %r3;",
        "ld.global.v2.f32 {%f1, _}, [%rd1];",
        "cvta.to.global.u64 %rd1, %rd2;",
        "slct.f32.s32 %f1, %f2, %f3, %r1;",
        "set.lt.u32.f32 %r1, %f1, %f2;",
        "mov.pred %p1, -1;",  # true, as nvcc writes it
    ],
)
def test_what_the_isa_allows_is_accepted(line):
    first_instruction(line)


def test_every_opcode_the_interpreter_executes_has_typing_rules():
    assert set(_BUILDERS) <= CHECKED_OPCODES


@pytest.mark.parametrize(
    ("want", "have", "wider", "ok"),
    [
        ("u32", "s32", False, True),
        ("b32", "f32", False, True),
        ("f32", "b32", False, True),
        ("f32", "u32", False, False),
        ("f32", "f64", True, False),
        ("f32", "b64", True, True),
        ("u8", "b32", True, True),
        ("u32", "b16", True, False),
        ("pred", "b32", False, False),
    ],
)
def test_compatibility_follows_the_isa_table(want, have, wider, ok):
    assert compatible(PTX_TYPES[want], PTX_TYPES[have], wider=wider) is ok


@pytest.mark.parametrize(
    ("decls", "message"),
    [
        (".reg .f32 %r1;\n", r"%r1 is declared again differently \(first as \.b32, now as \.f32"),
        (".shared .b8 buf[16];\n.shared .b32 buf[16];\n", "buf is declared again differently"),
        (".shared .b8 buf[-4];\n", "array dimension must be a positive integer"),
        (".shared .b8 buf[0];\n", "array dimension must be a positive integer"),
        (".shared .align 3 .b8 buf[16];\n", r"\.align takes a power of two"),
        (".shared .align 0 .b8 buf[16];\n", r"\.align takes a power of two"),
        (".shared .align 1099511627776 .b8 buf[16];\n", r"\.align takes a power of two"),
        (".shared .b8 buf[1099511627776];\n", r"more than the 233,472 bytes a \.shared variable"),
        (".shared .b8 buf[4096][4096][4096][4096];\n", r"\.shared variable may hold"),
        (".local .b32 depot[9223372036854775807];\n", r"\.local variable may hold"),
        (".global .b8 g[2147483648];\n", r"1,073,741,824 bytes a \.global variable"),
    ],
)
def test_declarations_are_unique_positive_bounded_and_aligned(decls, message):
    with pytest.raises(PTXSyntaxError, match=message):
        parse_ptx(kernel("ret;", decls=decls))


def test_a_declaration_repeated_as_it_was_is_accepted():
    # nvcc repeats `.reg .b32 temp_param_reg;` in each call sequence's nested scope
    func = parse_ptx(kernel("{\n.reg .b32 t;\n}\n{\n.reg .b32 t;\n}\nret;")).functions["k"]
    assert func.registers["t"].name == "b32"


@pytest.mark.parametrize(
    ("params", "message"),
    [
        (".param .u64 a, .param .u32 a", "parameter a is declared twice"),
        (".param .align 6 .b8 a[8]", r"\.align takes a power of two"),
        (".param .b8 a[40000]", r"32,764 bytes"),
        (".param .b8 a[]", "needs a size"),
    ],
)
def test_parameters_are_unique_sized_and_bounded(params, message):
    with pytest.raises(PTXSyntaxError, match=message):
        parse_ptx(f"{HEADER}.visible .entry k({params})\n{{\nret;\n}}\n")


def test_a_module_variable_declared_twice_differently_is_refused():
    text = f"{HEADER}.global .b32 g;\n.global .f64 g;\n.visible .entry k()\n{{\nret;\n}}\n"
    with pytest.raises(PTXSyntaxError, match="g is declared again differently"):
        parse_ptx(text)
