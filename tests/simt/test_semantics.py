"""Instruction semantics against independent references, over 1024 lanes of edge cases."""

from __future__ import annotations

import numpy as np
import pytest

from tests.simt.harness import edge_f32, edge_u32, lanes

RNG = np.random.default_rng(2024)
A, B, C = edge_u32(RNG), edge_u32(RNG), edge_u32(RNG)
SA, SB = A.view(np.int32).astype(np.int64), B.view(np.int32).astype(np.int64)
UA, UB, UC = A.astype(np.int64), B.astype(np.int64), C.astype(np.int64)
M32 = (1 << 32) - 1


def u32(values) -> np.ndarray:
    return (np.asarray(values, dtype=object) & M32).astype(np.uint64).astype(np.uint32)


def per_lane(fn, *columns):
    return u32([fn(*(int(x) for x in row)) for row in zip(*columns, strict=True)])


def trunc_div(x: int, y: int) -> int:
    q = abs(x) // abs(y)
    return q if (x >= 0) == (y >= 0) else -q


def bfe(value: int, pos: int, length: int, signed: bool) -> int:
    pos, length = pos & 0xFF, length & 0xFF
    bits = [(value >> i) & 1 for i in range(32)]
    top = min(pos + length - 1, 31)
    sign = bits[top] if (signed and length) else 0
    out = 0
    for i in range(32):
        bit = bits[pos + i] if (i < length and pos + i <= 31) else sign
        out |= bit << i
    return out


def prmt(a: int, b: int, selector: int) -> int:
    source = [(a >> (8 * k)) & 0xFF for k in range(4)] + [(b >> (8 * k)) & 0xFF for k in range(4)]
    out = 0
    for k in range(4):
        nibble = (selector >> (4 * k)) & 0xF
        byte = source[nibble & 7]
        if nibble & 8:
            byte = 0xFF if byte & 0x80 else 0
        out |= byte << (8 * k)
    return out


NONZERO_B = np.where(B == 0, 1, B).astype(np.uint32)
SHIFT = (B & 63).astype(np.uint32)  # amounts past the width, too

# body -> (inputs a, b, c; reference over Python ints of those inputs, unsigned or signed)
INTEGER_CASES = {
    "add.s32 %r10, %r1, %r2;": ((A, B, C), lambda a, b, c: a + b),
    "sub.s32 %r10, %r1, %r2;": ((A, B, C), lambda a, b, c: a - b),
    "mul.lo.s32 %r10, %r1, %r2;": ((A, B, C), lambda a, b, c: s32(a) * s32(b)),
    "mul.hi.u32 %r10, %r1, %r2;": ((A, B, C), lambda a, b, c: (a * b) >> 32),
    "mul.hi.s32 %r10, %r1, %r2;": ((A, B, C), lambda a, b, c: (s32(a) * s32(b)) >> 32),
    "mad.lo.s32 %r10, %r1, %r2, %r3;": ((A, B, C), lambda a, b, c: s32(a) * s32(b) + c),
    "div.u32 %r10, %r1, %r2;": ((A, NONZERO_B, C), lambda a, b, c: a // b),
    "div.s32 %r10, %r1, %r2;": ((A, NONZERO_B, C), lambda a, b, c: trunc_div(s32(a), s32(b))),
    "rem.s32 %r10, %r1, %r2;": (
        (A, NONZERO_B, C),
        lambda a, b, c: s32(a) - trunc_div(s32(a), s32(b)) * s32(b),
    ),
    "min.s32 %r10, %r1, %r2;": ((A, B, C), lambda a, b, c: min(s32(a), s32(b))),
    "max.u32 %r10, %r1, %r2;": ((A, B, C), lambda a, b, c: max(a, b)),
    "and.b32 %r10, %r1, %r2;": ((A, B, C), lambda a, b, c: a & b),
    "xor.b32 %r10, %r1, %r2;": ((A, B, C), lambda a, b, c: a ^ b),
    "not.b32 %r10, %r1;": ((A, B, C), lambda a, b, c: ~a),
    "neg.s32 %r10, %r1;": ((A, B, C), lambda a, b, c: -s32(a)),
    "abs.s32 %r10, %r1;": ((A, B, C), lambda a, b, c: abs(s32(a))),
    "shl.b32 %r10, %r1, %r2;": ((A, SHIFT, C), lambda a, b, c: a << b if b < 32 else 0),
    "shr.u32 %r10, %r1, %r2;": ((A, SHIFT, C), lambda a, b, c: a >> b if b < 32 else 0),
    "shr.s32 %r10, %r1, %r2;": ((A, SHIFT, C), lambda a, b, c: s32(a) >> min(b, 31)),
    "popc.b32 %r10, %r1;": ((A, B, C), lambda a, b, c: bin(a).count("1")),
    "clz.b32 %r10, %r1;": ((A, B, C), lambda a, b, c: 32 - a.bit_length()),
    "brev.b32 %r10, %r1;": ((A, B, C), lambda a, b, c: int(f"{a:032b}"[::-1], 2)),
    "bfind.u32 %r10, %r1;": ((A, B, C), lambda a, b, c: a.bit_length() - 1 if a else M32),
    "bfe.u32 %r10, %r1, %r2, %r3;": ((A, B, C), lambda a, b, c: bfe(a, b, c, False)),
    "bfe.s32 %r10, %r1, %r2, %r3;": ((A, B, C), lambda a, b, c: bfe(a, b, c, True)),
    "bfe.u32 %r11, %r1, %r2, %r3;\nbfe.s32 %r10, %r1, %r2, %r3;": (
        (A, B & 31, C & 31),
        lambda a, b, c: bfe(a, b, c, True),
    ),
    "prmt.b32 %r10, %r1, %r2, %r3;": ((A, B, C), prmt),
    "lop3.b32 %r10, %r1, %r2, %r3, 0xE8;": ((A, B, C), lambda a, b, c: (a & b) | (a & c) | (b & c)),
    "shf.l.wrap.b32 %r10, %r1, %r2, %r3;": (
        (A, B, C),
        lambda a, b, c: (((b << 32) | a) << (c & 31)) >> 32,
    ),
    "shf.r.clamp.b32 %r10, %r1, %r2, %r3;": (
        (A, B, C),
        lambda a, b, c: ((b << 32) | a) >> min(c, 32),
    ),
    "sad.u32 %r10, %r1, %r2, %r3;": ((A, B, C), lambda a, b, c: abs(a - b) + c),
    "cnot.b32 %r10, %r1;": ((A, B, C), lambda a, b, c: int(a == 0)),
}


def s32(value: int) -> int:
    return value - (1 << 32) if value & 0x80000000 else value


@pytest.mark.parametrize("body", list(INTEGER_CASES), ids=lambda b: b.split()[0])
def test_integer_instruction(body):
    (a, b, c), reference = INTEGER_CASES[body]
    got = lanes(a, b, c, body)
    np.testing.assert_array_equal(got, per_lane(reference, a, b, c))


def test_bfi_inserts_a_field():
    a, b, c = A, B, C & 31
    length = (A >> 3) & 15
    got = lanes(
        a, b, c, "shr.u32 %r5, %r1, 3;\nand.b32 %r5, %r5, 15;\nbfi.b32 %r10, %r1, %r2, %r3, %r5;"
    )

    def ref(x, y, pos, n):
        mask = ((1 << n) - 1) << pos & M32
        return (y & ~mask) | ((x << pos) & mask)

    np.testing.assert_array_equal(got, per_lane(ref, a, b, c, length))


def test_wide_multiply_and_64_bit_conversions():
    lo, hi = lanes(A, B, C, "mul.wide.s32 %rd10, %r1, %r2;\nmov.b64 {%r10, %r11}, %rd10;",
                   outputs=2)  # fmt: skip
    product = (SA * SB).astype(np.int64).view(np.uint64)
    np.testing.assert_array_equal(lo, (product & M32).astype(np.uint32))
    np.testing.assert_array_equal(hi, (product >> 32).astype(np.uint32))
    sext = lanes(
        A, B, C, "cvt.s64.s32 %rd10, %r1;\nshr.u64 %rd11, %rd10, 32;\ncvt.u32.u64 %r10, %rd11;"
    )
    np.testing.assert_array_equal(sext, np.where(SA < 0, M32, 0).astype(np.uint32))


def test_setp_selp_and_predicate_logic():
    body = """
    setp.lt.s32 %p1, %r1, %r2;
    setp.lo.u32 %p2, %r1, %r2;
    setp.ne.and.s32 %p3|%p4, %r1, %r3, %p1;
    selp.u32 %r10, 1, 0, %p1;
    selp.u32 %r11, 2, 0, %p2;
    add.s32 %r10, %r10, %r11;
    selp.u32 %r11, 4, 0, %p3;
    add.s32 %r10, %r10, %r11;
    selp.u32 %r11, 8, 0, %p4;
    add.s32 %r10, %r10, %r11;
    """
    got = lanes(A, B, C, body)
    p1, p2 = SA < SB, UA < UB
    p3, p4 = (A != C) & p1, (A == C) & p1
    want = p1 * 1 + p2 * 2 + p3 * 4 + p4 * 8
    np.testing.assert_array_equal(got, want.astype(np.uint32))


FA, FB, FC = edge_f32(RNG), edge_f32(RNG), edge_f32(RNG)


def run_float(body: str) -> np.ndarray:
    prologue = "mov.b32 %f1, %r1;\nmov.b32 %f2, %r2;\nmov.b32 %f3, %r3;\n"
    out = lanes(FA.view(np.uint32), FB.view(np.uint32), FC.view(np.uint32),
                prologue + body + "\nmov.b32 %r10, %f10;")  # fmt: skip
    return out.view(np.float32)


def same_floats(got, want, ulps: int = 0):
    with np.errstate(over="ignore"):
        want = np.asarray(want).astype(np.float32)
    nan = np.isnan(want)
    np.testing.assert_array_equal(np.isnan(got), nan)
    exact = ~nan & (~np.isfinite(want) | (ulps == 0))
    np.testing.assert_array_equal(got[exact], want[exact])
    near = ~nan & ~exact
    spacing = np.abs(np.spacing(want[near]))
    assert np.all(np.abs(got[near] - want[near]) <= ulps * spacing)


FLOAT_CASES = {
    "add.f32 %f10, %f1, %f2;": (lambda: FA + FB, 0),
    "sub.rn.f32 %f10, %f1, %f2;": (lambda: FA - FB, 0),
    "mul.f32 %f10, %f1, %f2;": (lambda: FA * FB, 0),
    "div.rn.f32 %f10, %f1, %f2;": (lambda: FA / FB, 0),
    "fma.rn.f32 %f10, %f1, %f2, %f3;": (
        lambda: (FA.astype(np.float64) * FB + FC).astype(np.float32),
        0,
    ),
    "min.f32 %f10, %f1, %f2;": (lambda: np.fmin(FA, FB), 0),
    "max.f32 %f10, %f1, %f2;": (lambda: np.fmax(FA, FB), 0),
    "abs.f32 %f10, %f1;": (lambda: np.abs(FA), 0),
    "neg.f32 %f10, %f1;": (lambda: -FA, 0),
    "sqrt.rn.f32 %f10, %f1;": (lambda: np.sqrt(FA), 0),
    "rcp.rn.f32 %f10, %f1;": (lambda: np.float32(1) / FA, 0),
    "ex2.approx.ftz.f32 %f10, %f1;": (lambda: np.exp2(FA.astype(np.float64)), 1),
    "lg2.approx.f32 %f10, %f1;": (lambda: np.log2(FA.astype(np.float64)), 1),
    "copysign.f32 %f10, %f1, %f2;": (lambda: np.copysign(FB, FA), 0),
    "cvt.rni.f32.f32 %f10, %f1;": (lambda: np.rint(FA), 0),
    "cvt.rmi.f32.f32 %f10, %f1;": (lambda: np.floor(FA), 0),
    "cvt.sat.f32.f32 %f10, %f1;": (lambda: np.nan_to_num(np.clip(FA, 0, 1), nan=0.0), 0),
}


@pytest.mark.parametrize("body", list(FLOAT_CASES), ids=lambda b: b.split()[0])
def test_float_instruction(body):
    fn, ulps = FLOAT_CASES[body]
    with np.errstate(all="ignore"):
        want = fn()
    same_floats(run_float(body), want, ulps)


def test_directed_rounding_brackets_the_exact_sum():
    down = run_float("add.rm.f32 %f10, %f1, %f2;")
    up = run_float("add.rp.f32 %f10, %f1, %f2;")
    exact = FA.astype(np.float64) + FB.astype(np.float64)
    finite = np.isfinite(exact) & np.isfinite(down) & np.isfinite(up)
    assert np.all(down[finite] <= exact[finite]) and np.all(up[finite] >= exact[finite])
    assert np.all(up[finite] - down[finite] <= np.abs(np.spacing(up[finite])))


def test_float_comparisons_are_ordered_unless_marked_unordered():
    body = """
    setp.ne.f32 %p1, %f1, %f2;
    setp.neu.f32 %p2, %f1, %f2;
    selp.f32 %f10, 0f3F800000, 0f00000000, %p1;
    selp.f32 %f11, 0f40000000, 0f00000000, %p2;
    add.f32 %f10, %f10, %f11;
    """
    got = run_float(body)
    ordered = (FA != FB) & ~np.isnan(FA) & ~np.isnan(FB)
    unordered = (FA != FB) | np.isnan(FA) | np.isnan(FB)
    np.testing.assert_array_equal(got, ordered * 1.0 + unordered * 2.0)


def test_float_to_int_conversion_rounds_and_saturates():
    got = lanes(FA.view(np.uint32), B, C, "mov.b32 %f1, %r1;\ncvt.rzi.s32.f32 %r10, %f1;")
    with np.errstate(all="ignore"):
        want = np.clip(np.nan_to_num(np.trunc(FA.astype(np.float64)), nan=0), -(2**31), 2**31 - 1)
    np.testing.assert_array_equal(got.view(np.int32), want.astype(np.int32))
    got_u = lanes(FA.view(np.uint32), B, C, "mov.b32 %f1, %r1;\ncvt.rni.u32.f32 %r10, %f1;")
    with np.errstate(all="ignore"):
        want_u = np.clip(np.nan_to_num(np.rint(FA.astype(np.float64)), nan=0), 0, 2**32 - 1)
    np.testing.assert_array_equal(got_u, want_u.astype(np.uint32))


def test_int_to_float_conversion_rounds_to_nearest():
    got = lanes(A, B, C, "cvt.rn.f32.s32 %f10, %r1;\nmov.b32 %r10, %f10;").view(np.float32)
    np.testing.assert_array_equal(got, SA.astype(np.float32))


def test_64_bit_arithmetic():
    rng = np.random.default_rng(5)
    a = rng.integers(0, 2**63, 512, dtype=np.uint64) * np.uint64(2) + rng.integers(
        0, 2, 512
    ).astype(np.uint64)
    b = rng.integers(0, 2**63, 512, dtype=np.uint64)
    c = rng.integers(0, 64, 512).astype(np.uint64)
    got = lanes(a, b, c, "add.s64 %rd10, %rd1, %rd2;\nmul.hi.u64 %rd11, %rd1, %rd2;",
                width=64, outputs=2)  # fmt: skip
    np.testing.assert_array_equal(got[0], a + b)
    want_hi = [(int(x) * int(y)) >> 64 for x, y in zip(a, b, strict=True)]
    np.testing.assert_array_equal(got[1], np.array(want_hi, dtype=np.uint64))
