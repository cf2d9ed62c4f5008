"""Run a few PTX instructions over many lanes of inputs and read the results back."""

from __future__ import annotations

import numpy as np

from ndpsim.frontend.parser import parse_ptx
from ndpsim.ptx import DeviceMemory, launch
from ndpsim.simt.interpreter import compile_program

HEADER = ".version 9.0\n.target sm_75\n.address_size 64\n"
REGISTERS = (
    ".reg .pred %p<8>;\n.reg .b16 %rs<8>;\n.reg .b32 %r<40>;\n.reg .f32 %f<16>;\n"
    ".reg .b64 %rd<40>;\n.reg .f64 %fd<8>;\n"
)


def module_from(body: str, *, params: str, decls: str = ""):
    text = f"{HEADER}.visible .entry k({params})\n{{\n{REGISTERS}{decls}{body}\n}}\n"
    module = parse_ptx(text, "test.ptx")
    compile_program(module.functions["k"], module)
    return module


def lanes(a, b, c, body: str, width: int = 32, outputs: int = 1, block: int = 128):
    """Run ``body`` once per lane with inputs ``a``, ``b``, ``c`` (arrays of ``width`` bits) in
    registers %r1/%r2/%r3 (or %rd1..3 for 64 bits); the body leaves results in %r10, %r11 (or
    %rd10, %rd11). Returns the result arrays."""
    a, b, c = (np.ascontiguousarray(x) for x in (a, b, c))
    n = len(a)
    reg, move = ("%r", "b32") if width == 32 else ("%rd", "b64")
    size = width // 8
    body_text = f"""
    ld.param.u64 %rd30, [k_a];
    ld.param.u64 %rd31, [k_b];
    ld.param.u64 %rd32, [k_c];
    ld.param.u64 %rd33, [k_out];
    ld.param.u32 %r30, [k_n];
    mov.u32 %r31, %ctaid.x;
    mov.u32 %r32, %ntid.x;
    mov.u32 %r33, %tid.x;
    mad.lo.s32 %r34, %r31, %r32, %r33;
    setp.ge.u32 %p7, %r34, %r30;
    @%p7 bra $DONE;
    mul.wide.u32 %rd34, %r34, {size};
    add.s64 %rd35, %rd30, %rd34;
    add.s64 %rd36, %rd31, %rd34;
    add.s64 %rd37, %rd32, %rd34;
    ld.global.{move} {reg}1, [%rd35];
    ld.global.{move} {reg}2, [%rd36];
    ld.global.{move} {reg}3, [%rd37];
    {body}
    mul.wide.u32 %rd38, %r34, {size * outputs};
    add.s64 %rd39, %rd33, %rd38;
    st.global.{move} [%rd39], {reg}10;
    {f"st.global.{move} [%rd39+{size}], {reg}11;" if outputs == 2 else ""}
$DONE:
    ret;
    """
    params = ".param .u64 k_a, .param .u64 k_b, .param .u64 k_c, .param .u64 k_out, .param .u32 k_n"
    module = module_from(body_text, params=params)
    mem = DeviceMemory()
    pa, pb, pc = (mem.to_device(x) for x in (a, b, c))
    out = mem.alloc(n * size * outputs)
    launch(module, "k", -(-n // block), block, [pa, pb, pc, out, np.uint32(n)], mem)
    dtype = np.uint32 if width == 32 else np.uint64
    result = mem.from_device(out, dtype, n * outputs)
    return result.reshape(n, outputs).T if outputs == 2 else result


def edge_u32(rng: np.random.Generator, n: int = 1024) -> np.ndarray:
    """Random 32-bit patterns with the interesting edges mixed in."""
    edges = np.array([0, 1, 2, 31, 32, 33, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF, 0xFFFFFFFE, 255,
                      256, 0x8000, 0xFFFF], dtype=np.uint32)  # fmt: skip
    values = rng.integers(0, 1 << 32, size=n, dtype=np.uint64).astype(np.uint32)
    values[: len(edges)] = edges
    return rng.permutation(values)


def edge_f32(rng: np.random.Generator, n: int = 1024) -> np.ndarray:
    """Random floats of mixed magnitudes and signs with zeros, infinities and NaN mixed in."""
    values = (rng.standard_normal(n) * 10.0 ** rng.integers(-3, 4, n)).astype(np.float32)
    values[:7] = [0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan]
    return rng.permutation(values)
