"""What each PTX instruction does, as NumPy operations over the active threads.

:class:`Decoder` turns an :class:`~ndpsim.frontend.ir.Instruction` into an *executor*: a closure
``run(step)`` that reads its source registers for the threads in ``step.sel`` (a slice or an index
array), computes, and writes its destinations for those threads only. Decoding happens once per
function, so executing an instruction costs one Python call plus its NumPy work. Branches,
returns and barriers are handled by the interpreter, which owns the SIMT stacks.

Deviations from hardware, all documented in docs/interpreter.md: ``.ftz`` is ignored (subnormals
are kept), directed rounding is exact for f32 and ignored for f64, and ``.approx`` operations are
computed exactly (they are within the error bounds PTX allows).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ndpsim.errors import MemoryAccessError, SimulationError, UnsupportedInstruction
from ndpsim.frontend.ir import (
    Address,
    Immediate,
    Instruction,
    Operand,
    Register,
    RegisterPair,
    Sink,
    Space,
    SpecialRegister,
    Symbol,
    Vector,
)
from ndpsim.numba_cache import compiled
from ndpsim.simt.state import LOCAL_WINDOW, SHARED_WINDOW, WARP_SIZE, WINDOW_BYTES
from ndpsim.simt.values import (
    SIGNED_OF_SIZE,
    UNSIGNED_OF_SIZE,
    convert_width,
    float_literal,
    float_to_int,
    integer_bits,
    numpy_dtype,
    round_to_float32,
    saturate_float,
)
from ndpsim.trace.trace import MemoryKind, MemorySpace

Executor = Callable[["Step"], None]
Reader = Callable[["Step"], np.ndarray]
Writer = Callable[["Step", np.ndarray], None]

_ROUNDING = ("rn", "rz", "rm", "rp")
_INT_ROUNDING = ("rni", "rzi", "rmi", "rpi")


class Step:
    """The threads an instruction runs for: ``sel`` indexes every per-thread column. ``full``
    says ``sel`` is a slice covering every lane of the consecutive warps ``warps``."""

    __slots__ = ("_threads", "block_start", "full", "masks", "recorder", "sel", "state", "warps")

    def __init__(self, state, sel, warps, masks, recorder, block_start, full=False):
        self.state = state
        self.sel = sel
        self.warps = warps
        self.masks = masks
        self.recorder = recorder
        self.block_start = block_start
        self.full = full
        self._threads = None

    @property
    def count(self) -> int:
        sel = self.sel
        return sel.stop - sel.start if isinstance(sel, slice) else len(sel)

    def threads(self) -> np.ndarray:
        """Thread indices of the selected lanes, ascending."""
        if self._threads is None:
            sel = self.sel
            self._threads = (
                np.arange(sel.start, sel.stop, dtype=np.int64) if isinstance(sel, slice) else sel
            )
        return self._threads


# -------------------------------------------------------------------------------- atomics
@compiled(allocates=True)
def _atomic_arith(image, index, b, c, op, old):  # pragma: no cover - compiled
    """Apply read-modify-writes one lane after another (lane order within warp order)."""
    for k in range(index.shape[0]):
        i = index[k]
        value = image[i]
        old[k] = value
        if op == 0:  # add
            image[i] = value + b[k]
        elif op == 1:  # min
            image[i] = b[k] if b[k] < value else value
        elif op == 2:  # max
            image[i] = b[k] if b[k] > value else value
        elif op == 3:  # exch
            image[i] = b[k]
        elif op == 4:  # cas
            if value == b[k]:
                image[i] = c[k]
        elif op == 5:  # inc
            image[i] = 0 if value >= b[k] else value + 1
        elif op == 6:  # dec
            image[i] = b[k] if (value == 0 or value > b[k]) else value - 1


@compiled(allocates=True)
def _atomic_bitwise(image, index, b, op, old):  # pragma: no cover - compiled
    for k in range(index.shape[0]):
        i = index[k]
        value = image[i]
        old[k] = value
        if op == 0:
            image[i] = value & b[k]
        elif op == 1:
            image[i] = value | b[k]
        else:
            image[i] = value ^ b[k]


_ARITH_ATOMICS = {"add": 0, "min": 1, "max": 2, "exch": 3, "cas": 4, "inc": 5, "dec": 6}
_BITWISE_ATOMICS = {"and": 0, "or": 1, "xor": 2}


# ------------------------------------------------------------------------------- decoding
class Decoder:
    """Builds executors for the instructions of one function."""

    def __init__(
        self,
        function,
        register_index: dict[str, int],
        register_dtypes: list[np.dtype],
        shared_offsets: dict[str, int],
        local_offsets: dict[str, int],
        param_offsets: dict[str, int],
    ):
        self.function = function
        self.register_index = register_index
        self.register_dtypes = register_dtypes
        self.shared_offsets = shared_offsets
        self.local_offsets = local_offsets
        self.param_offsets = param_offsets

    def unsupported(self, inst: Instruction, why: str) -> UnsupportedInstruction:
        return UnsupportedInstruction(why, inst.location, inst.text)

    def decode(self, inst: Instruction) -> Executor:
        builder = _BUILDERS.get(inst.opcode)
        if builder is None:
            raise self.unsupported(inst, f"ndpsim cannot execute opcode {inst.opcode!r}")
        try:
            return builder(self, inst)
        except (KeyError, IndexError, ValueError, TypeError) as exc:
            raise self.unsupported(
                inst, f"ndpsim cannot execute this form of {inst.opcode!r} ({exc})"
            ) from None

    # ---------------------------------------------------------------------- types
    def dtype(self, inst: Instruction, position: int = -1) -> np.dtype:
        types = inst.types
        if not types:
            raise self.unsupported(inst, "instruction has no type modifier")
        dtype = numpy_dtype(types[position])
        if dtype is None:
            raise self.unsupported(inst, f"type .{types[position].name} is not supported")
        return dtype

    # -------------------------------------------------------------------- operands
    def reader(self, op: Operand, dtype: np.dtype) -> Reader:
        """A function giving the operand's value in every selected thread, as ``dtype``."""
        dtype = np.dtype(dtype)
        match op:
            case Register(name=name, negated=negated):
                index = self.register_index[name]
                storage = self.register_dtypes[index]
                if negated:
                    return lambda s: ~s.state.regs[index][s.sel]
                if storage == dtype:
                    return lambda s: s.state.regs[index][s.sel]
                if storage.itemsize == dtype.itemsize and dtype != np.bool_:
                    return lambda s: s.state.regs[index].view(dtype)[s.sel]
                return lambda s: convert_width(s.state.regs[index][s.sel], dtype)
            case Immediate(value=value, text=text):
                if isinstance(value, float):
                    const = float_literal(value, text, dtype)
                else:
                    const = integer_bits(value, dtype)
                return lambda s: const
            case SpecialRegister(name=name, component=component):
                return lambda s: convert_width(s.state.special(name, component)[s.sel], dtype)
            case Symbol(name=name):
                return self.symbol_reader(name, dtype)
            case _:
                raise ValueError(f"operand {op} cannot be read as a value")

    def symbol_reader(self, name: str, dtype: np.dtype) -> Reader:
        """``mov %r, var``: the address of a variable in its own state space."""
        if name in self.shared_offsets:
            const = integer_bits(self.shared_offsets[name], dtype)
            return lambda s: const
        if name in self.local_offsets:
            const = integer_bits(self.local_offsets[name], dtype)
            return lambda s: const
        if name in self.param_offsets:
            const = integer_bits(self.param_offsets[name], dtype)
            return lambda s: const
        return lambda s: integer_bits(s.state.symbol_addresses[name], dtype)

    def writer(self, op: Operand, dtype: np.dtype) -> Writer:
        """A function storing ``dtype`` values into the operand for the selected threads."""
        dtype = np.dtype(dtype)
        match op:
            case Sink():
                return lambda s, v: None
            case Register(name=name):
                index = self.register_index[name]
                storage = self.register_dtypes[index]
                if storage == dtype:

                    def write(s, v):
                        s.state.regs[index][s.sel] = v

                elif storage.itemsize == dtype.itemsize and np.bool_ not in (dtype, storage):

                    def write(s, v):
                        s.state.regs[index].view(dtype)[s.sel] = v

                else:

                    def write(s, v):
                        s.state.regs[index][s.sel] = convert_width(
                            np.asarray(v, dtype=dtype), storage
                        )

                return write
            case _:
                raise ValueError(f"operand {op} cannot be written")

    def register_elements(self, op: Operand) -> list[Operand]:
        return list(op.elements) if isinstance(op, Vector) else [op]


# =============================================================================== builders
_BUILDERS: dict[str, Callable[[Decoder, Instruction], Executor]] = {}


def builds(*opcodes: str):
    def register(fn):
        for opcode in opcodes:
            _BUILDERS[opcode] = fn
        return fn

    return register


def _rounding(inst: Instruction) -> str:
    return next((m for m in inst.modifiers if m in _ROUNDING), "rn")


def _float_result(inst: Instruction, exact64, dtype):
    """Round a float64 computation to the instruction's float type and apply ``.sat``."""
    if dtype == np.float32:
        out = round_to_float32(np.asarray(exact64, dtype=np.float64), _rounding(inst))
    else:
        out = np.asarray(exact64).astype(dtype)
    return saturate_float(out) if inst.has("sat") else out


def _unary(fn):
    def build(d: Decoder, inst: Instruction) -> Executor:
        dtype = d.dtype(inst)
        out = d.writer(inst.operands[0], dtype)
        a = d.reader(inst.operands[1], dtype)

        def run(s):
            out(s, fn(a(s)).astype(dtype, copy=False))

        return run

    return build


def _float_unary(fn64):
    """Transcendental ops: computed in float64, rounded to the instruction type."""

    def build(d: Decoder, inst: Instruction) -> Executor:
        dtype = d.dtype(inst)
        out = d.writer(inst.operands[0], dtype)
        a = d.reader(inst.operands[1], dtype)

        def run(s):
            out(s, _float_result(inst, fn64(np.asarray(a(s), dtype=np.float64)), dtype))

        return run

    return build


# ------------------------------------------------------------------------- arithmetic
@builds("add", "sub")
def _add_sub(d: Decoder, inst: Instruction) -> Executor:
    dtype = d.dtype(inst)
    out = d.writer(inst.operands[0], dtype)
    a = d.reader(inst.operands[1], dtype)
    b = d.reader(inst.operands[2], dtype)
    sign = 1 if inst.opcode == "add" else -1
    if dtype.kind == "f" and (inst.has("sat") or (dtype == np.float32 and _rounding(inst) != "rn")):
        return lambda s: out(
            s, _float_result(inst, np.float64(1) * a(s) + sign * np.float64(1) * b(s), dtype)
        )
    if dtype.kind in "iu" and inst.has("sat"):  # add.sat.s32 clamps instead of wrapping
        info = np.iinfo(dtype)
        return lambda s: out(
            s,
            np.clip(
                np.asarray(a(s), np.int64) + sign * np.asarray(b(s), np.int64), info.min, info.max
            ).astype(dtype),
        )
    op = np.add if sign == 1 else np.subtract
    return lambda s: out(s, op(a(s), b(s)))


def _mul_parts(d: Decoder, inst: Instruction, three: bool):
    """mul/mad operands: returns (writer, reader a, reader b, reader c or None, product fn)."""
    dtype = d.dtype(inst)
    wide = inst.has("wide")
    hi = inst.has("hi")
    out_dtype = dtype
    if wide:
        out_dtype = np.dtype((SIGNED_OF_SIZE if dtype.kind == "i" else UNSIGNED_OF_SIZE)[
            dtype.itemsize * 2
        ])  # fmt: skip
    out = d.writer(inst.operands[0], out_dtype)
    a = d.reader(inst.operands[1], dtype)
    b = d.reader(inst.operands[2], dtype)
    c = d.reader(inst.operands[3], out_dtype) if three else None
    bits = dtype.itemsize * 8
    if dtype.kind == "f":

        def product(x, y):
            return np.asarray(x, np.float64) * np.asarray(y, np.float64)

    elif wide:

        def product(x, y):
            return np.asarray(x).astype(out_dtype) * np.asarray(y).astype(out_dtype)

    elif hi and bits <= 32:
        big = np.int64 if dtype.kind == "i" else np.uint64

        def product(x, y):
            full = np.asarray(x).astype(big) * np.asarray(y).astype(big)
            return (full >> bits).astype(dtype)

    elif hi:

        def product(x, y):
            return _mul_hi_64(np.asarray(x), np.asarray(y), dtype)

    elif inst.opcode in ("mul24", "mad24"):

        def product(x, y):
            mask = np.asarray(0xFFFFFF, dtype=np.int64)
            xx = np.asarray(x).astype(np.int64) & mask
            yy = np.asarray(y).astype(np.int64) & mask
            if dtype.kind == "i":
                xx = (xx ^ 0x800000) - 0x800000
                yy = (yy ^ 0x800000) - 0x800000
            return (xx * yy).astype(dtype)

    else:

        def product(x, y):
            return np.multiply(x, y, dtype=dtype)

    return out, out_dtype, a, b, c, product


def _mul_hi_64(x: np.ndarray, y: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """High 64 bits of a 64x64-bit product, from 32-bit limbs."""
    ux = np.broadcast_to(x, np.broadcast(x, y).shape).astype(np.uint64)
    uy = np.broadcast_to(y, ux.shape).astype(np.uint64)
    m32 = np.uint64(0xFFFFFFFF)
    s32 = np.uint64(32)
    x0, x1, y0, y1 = ux & m32, ux >> s32, uy & m32, uy >> s32
    p00, p01, p10, p11 = x0 * y0, x0 * y1, x1 * y0, x1 * y1
    middle = (p00 >> s32) + (p01 & m32) + (p10 & m32)
    high = p11 + (p01 >> s32) + (p10 >> s32) + (middle >> s32)
    if dtype.kind == "i":  # signed correction: subtract y if x < 0 and x if y < 0
        high = high - np.where(x < 0, uy, 0).astype(np.uint64)
        high = high - np.where(y < 0, ux, 0).astype(np.uint64)
    return high.view(dtype)


@builds("mul", "mul24")
def _mul(d: Decoder, inst: Instruction) -> Executor:
    out, out_dtype, a, b, _, product = _mul_parts(d, inst, three=False)
    if out_dtype.kind == "f":
        if out_dtype == np.float32 and _rounding(inst) == "rn" and not inst.has("sat"):
            return lambda s: out(s, np.multiply(a(s), b(s), dtype=np.float32))
        return lambda s: out(s, _float_result(inst, product(a(s), b(s)), out_dtype))
    return lambda s: out(s, product(a(s), b(s)))


@builds("mad", "mad24", "fma")
def _mad(d: Decoder, inst: Instruction) -> Executor:
    out, out_dtype, a, b, c, product = _mul_parts(d, inst, three=True)
    assert c is not None
    if out_dtype.kind == "f":  # mad.f32 and fma are fused: one rounding of a*b+c
        return lambda s: out(
            s, _float_result(inst, product(a(s), b(s)) + np.asarray(c(s), np.float64), out_dtype)
        )
    return lambda s: out(s, np.add(product(a(s), b(s)), c(s), dtype=out_dtype))


@builds("div")
def _div(d: Decoder, inst: Instruction) -> Executor:
    dtype = d.dtype(inst)
    out = d.writer(inst.operands[0], dtype)
    a = d.reader(inst.operands[1], dtype)
    b = d.reader(inst.operands[2], dtype)
    if dtype.kind == "f":
        if dtype == np.float32 and _rounding(inst) != "rn":
            return lambda s: out(
                s, _float_result(inst, np.asarray(a(s), np.float64) / np.asarray(b(s)), dtype)
            )
        return lambda s: out(s, np.divide(a(s), b(s), dtype=dtype))

    unsigned = np.dtype(UNSIGNED_OF_SIZE[dtype.itemsize])

    def magnitude(v):  # |v| as an unsigned value: exact even for the most negative integer
        raw = np.asarray(v, dtype=dtype).astype(unsigned)
        return np.where(np.asarray(v) < 0, ~raw + unsigned.type(1), raw).astype(unsigned)

    def run(s):  # integer division truncates towards zero, as in C; x / 0 gives all ones
        x, y = np.asarray(a(s)), np.asarray(b(s))
        safe = np.where(y == 0, 1, y).astype(dtype)
        if dtype.kind == "i":
            q = magnitude(x) // magnitude(safe)
            q = np.where((x < 0) != (safe < 0), ~q + unsigned.type(1), q).astype(unsigned)
            q = q.astype(unsigned).view(dtype)
        else:
            q = x // safe
        out(s, np.where(y == 0, integer_bits(-1, dtype), q).astype(dtype))

    return run


@builds("rem")
def _rem(d: Decoder, inst: Instruction) -> Executor:
    dtype = d.dtype(inst)
    out = d.writer(inst.operands[0], dtype)
    a = d.reader(inst.operands[1], dtype)
    b = d.reader(inst.operands[2], dtype)

    def run(s):  # the remainder takes the dividend's sign, as in C; x % 0 gives x
        x, y = np.asarray(a(s)), np.asarray(b(s))
        safe = np.where(y == 0, 1, y).astype(dtype)
        if dtype.kind == "i" and dtype.itemsize < 8:
            wide = np.fmod(x.astype(np.int64), safe.astype(np.int64)).astype(dtype)
        else:
            wide = np.fmod(x, safe)
        out(s, np.where(y == 0, x, wide).astype(dtype))

    return run


@builds("min", "max")
def _min_max(d: Decoder, inst: Instruction) -> Executor:
    dtype = d.dtype(inst)
    out = d.writer(inst.operands[0], dtype)
    a = d.reader(inst.operands[1], dtype)
    b = d.reader(inst.operands[2], dtype)
    if dtype.kind == "f":  # a NaN operand yields the other operand
        fn = np.fmin if inst.opcode == "min" else np.fmax
    else:
        fn = np.minimum if inst.opcode == "min" else np.maximum
    return lambda s: out(s, fn(a(s), b(s)).astype(dtype, copy=False))


builds("neg")(_unary(np.negative))
builds("abs")(_unary(np.abs))
builds("not")(_unary(np.invert))
builds("sqrt")(_float_unary(np.sqrt))
builds("rsqrt")(_float_unary(lambda x: 1.0 / np.sqrt(x)))
builds("rcp")(_float_unary(lambda x: 1.0 / x))
builds("ex2")(_float_unary(np.exp2))
builds("lg2")(_float_unary(np.log2))
builds("sin")(_float_unary(np.sin))
builds("cos")(_float_unary(np.cos))
builds("tanh")(_float_unary(np.tanh))


@builds("copysign")
def _copysign(d: Decoder, inst: Instruction) -> Executor:
    dtype = d.dtype(inst)
    out = d.writer(inst.operands[0], dtype)
    a = d.reader(inst.operands[1], dtype)
    b = d.reader(inst.operands[2], dtype)
    return lambda s: out(s, np.copysign(b(s), a(s)).astype(dtype, copy=False))


@builds("and", "or", "xor")
def _bitwise(d: Decoder, inst: Instruction) -> Executor:
    dtype = d.dtype(inst)
    out = d.writer(inst.operands[0], dtype)
    a = d.reader(inst.operands[1], dtype)
    b = d.reader(inst.operands[2], dtype)
    fn = {"and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor}[inst.opcode]
    return lambda s: out(s, fn(a(s), b(s)))


@builds("cnot")
def _cnot(d: Decoder, inst: Instruction) -> Executor:
    dtype = d.dtype(inst)
    out = d.writer(inst.operands[0], dtype)
    a = d.reader(inst.operands[1], dtype)
    return lambda s: out(s, (np.asarray(a(s)) == 0).astype(dtype))


@builds("shl", "shr")
def _shift(d: Decoder, inst: Instruction) -> Executor:
    dtype = d.dtype(inst)  # shr.bN is a logical shift: bN maps to an unsigned dtype
    out = d.writer(inst.operands[0], dtype)
    a = d.reader(inst.operands[1], dtype)
    amount = d.reader(inst.operands[2], np.uint32)
    bits = dtype.itemsize * 8
    left = inst.opcode == "shl"
    arithmetic = not left and dtype.kind == "i"

    def run(s):  # shifting by the width or more gives 0, or the sign for shr.sN
        x = np.asarray(a(s))
        n = np.asarray(amount(s)).astype(np.int64)
        k = np.minimum(n, bits - 1).astype(dtype)
        if left:
            result = np.where(n >= bits, 0, np.left_shift(x, k))
        elif arithmetic:
            result = np.right_shift(x, k)
        else:
            result = np.where(n >= bits, 0, np.right_shift(x, k))
        out(s, np.asarray(result).astype(dtype))

    return run


@builds("popc", "clz", "brev", "bfind")
def _bit_count(d: Decoder, inst: Instruction) -> Executor:
    dtype = d.dtype(inst)
    unsigned = np.dtype(UNSIGNED_OF_SIZE[dtype.itemsize])
    a = d.reader(inst.operands[1], unsigned)
    bits = dtype.itemsize * 8
    result_dtype = unsigned if inst.opcode == "brev" else np.dtype(np.uint32)
    out = d.writer(inst.operands[0], result_dtype)

    def smear(x):
        x = x.copy()
        shift = 1
        while shift < bits:
            x |= x >> unsigned.type(shift)
            shift *= 2
        return x

    def run(s):
        x = np.atleast_1d(np.asarray(a(s), dtype=unsigned))
        if inst.opcode == "popc":
            value = np.bitwise_count(x).astype(np.uint32)
        elif inst.opcode == "clz":
            value = (bits - np.bitwise_count(smear(x))).astype(np.uint32)
        elif inst.opcode == "bfind":  # position of the most significant set bit, or ~0
            value = np.where(
                x == 0, 0xFFFFFFFF, np.bitwise_count(smear(x)).astype(np.int64) - 1
            ).astype(np.uint32)
        else:
            # Bits of the little-endian bytes in order, packed back most significant first.
            as_bytes = x.astype(unsigned.newbyteorder("<")).view(np.uint8)
            in_order = np.unpackbits(as_bytes, bitorder="little")
            value = np.packbits(in_order, bitorder="big").view(unsigned.newbyteorder(">"))
            value = value.astype(unsigned)
        out(s, value)

    return run


def _low_mask(count: np.ndarray) -> np.ndarray:
    """uint64 masks of the ``count`` low bits (count 0..64)."""
    count = np.asarray(count, dtype=np.uint64)
    partial = (np.uint64(1) << np.minimum(count, np.uint64(63))) - np.uint64(1)
    return np.where(count >= 64, np.uint64(0xFFFFFFFFFFFFFFFF), partial).astype(np.uint64)


def _as_unsigned64(values, dtype: np.dtype) -> np.ndarray:
    """Zero-extend values of an integer dtype to uint64 (keeping their bit pattern)."""
    raw = np.asarray(values, dtype=dtype).astype(UNSIGNED_OF_SIZE[dtype.itemsize], copy=False)
    return raw.astype(np.uint64)


@builds("bfe")
def _bfe(d: Decoder, inst: Instruction) -> Executor:
    """Extract ``len`` bits from ``pos``; signed types replicate the field's top bit."""
    dtype = d.dtype(inst)
    out = d.writer(inst.operands[0], dtype)
    a = d.reader(inst.operands[1], dtype)
    pos = d.reader(inst.operands[2], np.uint32)
    length = d.reader(inst.operands[3], np.uint32)
    bits = dtype.itemsize * 8

    def run(s):
        ua = _as_unsigned64(a(s), dtype)
        p = np.asarray(pos(s)).astype(np.int64) & 0xFF
        n = np.asarray(length(s)).astype(np.int64) & 0xFF
        available = np.clip(np.minimum(n, bits - p), 0, bits)
        field = (ua >> np.minimum(p, 63).astype(np.uint64)) & _low_mask(available)
        if dtype.kind == "i":
            top = np.minimum(p + n - 1, bits - 1).astype(np.uint64)
            sign = np.where(n == 0, 0, (ua >> top) & np.uint64(1)).astype(bool)
            field = np.where(sign, field | ~_low_mask(available), field)
        width_mask = _low_mask(np.asarray(bits))
        result = np.asarray(field, dtype=np.uint64) & width_mask
        out(s, result.astype(UNSIGNED_OF_SIZE[dtype.itemsize]).view(dtype))

    return run


@builds("bfi")
def _bfi(d: Decoder, inst: Instruction) -> Executor:
    """Insert the ``len`` low bits of ``a`` into ``b`` at ``pos``."""
    dtype = d.dtype(inst)
    out = d.writer(inst.operands[0], dtype)
    a = d.reader(inst.operands[1], dtype)
    b = d.reader(inst.operands[2], dtype)
    pos = d.reader(inst.operands[3], np.uint32)
    length = d.reader(inst.operands[4], np.uint32)
    bits = dtype.itemsize * 8

    def run(s):
        p = np.asarray(pos(s)).astype(np.int64) & 0xFF
        n = np.asarray(length(s)).astype(np.int64) & 0xFF
        inside = p < bits
        shift = np.minimum(p, 63).astype(np.uint64)
        mask = np.where(inside, _low_mask(n) << shift, np.uint64(0)) & _low_mask(np.asarray(bits))
        ua, ub = _as_unsigned64(a(s), dtype), _as_unsigned64(b(s), dtype)
        result = (ub & ~mask) | ((ua << shift) & mask)
        out(s, np.asarray(result).astype(UNSIGNED_OF_SIZE[dtype.itemsize]).view(dtype))

    return run


@builds("prmt")
def _prmt(d: Decoder, inst: Instruction) -> Executor:
    mode = next((m for m in inst.modifiers if m in ("f4e", "b4e", "rc8", "ecl", "ecr", "rc16")),
                None)  # fmt: skip
    if mode is not None:
        raise ValueError(f"prmt mode .{mode}")
    out = d.writer(inst.operands[0], np.uint32)
    a = d.reader(inst.operands[1], np.uint32)
    b = d.reader(inst.operands[2], np.uint32)
    c = d.reader(inst.operands[3], np.uint32)

    def run(s):
        av, bv, cv = (np.atleast_1d(np.asarray(x, np.uint32)) for x in (a(s), b(s), c(s)))
        n = max(av.size, bv.size, cv.size)
        src = np.zeros((n, 8), dtype=np.uint8)
        src[:, :4] = np.broadcast_to(av, (n,)).astype("<u4").view(np.uint8).reshape(n, 4)
        src[:, 4:] = np.broadcast_to(bv, (n,)).astype("<u4").view(np.uint8).reshape(n, 4)
        sel = np.broadcast_to(cv, (n,))
        result = np.zeros(n, dtype=np.uint32)
        rows = np.arange(n)
        for k in range(4):
            nib = (sel >> np.uint32(4 * k)) & np.uint32(0xF)
            byte = src[rows, (nib & 7).astype(np.intp)]
            sign = (nib & 8) != 0
            byte = np.where(sign, np.where(byte & 0x80, 0xFF, 0), byte).astype(np.uint32)
            result |= byte << np.uint32(8 * k)
        out(s, result)

    return run


@builds("lop3")
def _lop3(d: Decoder, inst: Instruction) -> Executor:
    dtype = d.dtype(inst)
    out = d.writer(inst.operands[0], dtype)
    a = d.reader(inst.operands[1], dtype)
    b = d.reader(inst.operands[2], dtype)
    c = d.reader(inst.operands[3], dtype)
    lut = inst.operands[4]
    if not isinstance(lut, Immediate):
        raise ValueError("the lop3 lookup table must be an immediate")
    table = int(lut.value) & 0xFF

    def run(s):
        x, y, z = a(s), b(s), c(s)
        result = np.zeros(np.broadcast(x, y, z).shape, dtype=dtype)
        for minterm in range(8):
            if table >> minterm & 1:
                tx = x if minterm & 4 else ~x
                ty = y if minterm & 2 else ~y
                tz = z if minterm & 1 else ~z
                result |= tx & ty & tz
        out(s, result)

    return run


@builds("shf")
def _shf(d: Decoder, inst: Instruction) -> Executor:
    out = d.writer(inst.operands[0], np.uint32)
    a = d.reader(inst.operands[1], np.uint32)
    b = d.reader(inst.operands[2], np.uint32)
    c = d.reader(inst.operands[3], np.uint32)
    left = inst.has("l")
    clamp = inst.has("clamp")

    def run(s):
        n = np.asarray(c(s), np.uint64)
        n = np.minimum(n, 32) if clamp else n & np.uint64(31)
        joined = (np.asarray(b(s), np.uint64) << np.uint64(32)) | np.asarray(a(s), np.uint64)
        result = (joined << n) >> np.uint64(32) if left else joined >> n
        out(s, (result & np.uint64(0xFFFFFFFF)).astype(np.uint32))

    return run


@builds("sad")
def _sad(d: Decoder, inst: Instruction) -> Executor:
    dtype = d.dtype(inst)
    out = d.writer(inst.operands[0], dtype)
    a, b, c = (d.reader(op, dtype) for op in inst.operands[1:4])

    def run(s):
        x, y = np.asarray(a(s)).astype(np.int64), np.asarray(b(s)).astype(np.int64)
        out(s, (np.abs(x - y) + np.asarray(c(s)).astype(np.int64)).astype(dtype))

    return run


# ---------------------------------------------------------------------- compare, select
_INT_COMPARE = {
    "eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal, "gt": np.greater,
    "ge": np.greater_equal, "lo": np.less, "ls": np.less_equal, "hi": np.greater,
    "hs": np.greater_equal,
}  # fmt: skip


def _float_compare(op: str):
    def ordered(fn):
        return lambda a, b: fn(a, b) & ~np.isnan(a) & ~np.isnan(b)

    def unordered(fn):
        return lambda a, b: fn(a, b) | np.isnan(a) | np.isnan(b)

    base = {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal,
            "gt": np.greater, "ge": np.greater_equal}  # fmt: skip
    if op in base:
        return ordered(base[op])
    if op.endswith("u") and op[:-1] in base:
        return unordered(base[op[:-1]])
    if op == "num":
        return lambda a, b: ~np.isnan(a) & ~np.isnan(b)
    if op == "nan":
        return lambda a, b: np.isnan(a) | np.isnan(b)
    raise ValueError(f"comparison .{op}")


def _comparison(inst: Instruction, dtype: np.dtype):
    ops = [m for m in inst.modifiers if m in _INT_COMPARE or m in ("equ", "neu", "ltu", "leu",
           "gtu", "geu", "num", "nan")]  # fmt: skip
    if not ops:
        raise ValueError("missing comparison")
    if dtype.kind == "f":
        return _float_compare(ops[0])
    return _INT_COMPARE[ops[0]]


def _combine(inst: Instruction):
    for name, fn in (("and", np.logical_and), ("or", np.logical_or), ("xor", np.logical_xor)):
        if inst.has(name):
            return fn
    return None


@builds("setp")
def _setp(d: Decoder, inst: Instruction) -> Executor:
    dtype = d.dtype(inst)
    compare = _comparison(inst, dtype)
    combine = _combine(inst)
    dest = inst.operands[0]
    first, second = (dest.first, dest.second) if isinstance(dest, RegisterPair) else (dest, None)
    out = d.writer(first, np.bool_)
    out_not = d.writer(second, np.bool_) if second is not None else None
    a = d.reader(inst.operands[1], dtype)
    b = d.reader(inst.operands[2], dtype)
    c = d.reader(inst.operands[3], np.bool_) if combine else None

    def run(s):
        t = np.asarray(compare(a(s), b(s)))
        if combine is not None:
            cv = c(s)  # type: ignore[misc]
            out(s, combine(t, cv))
            if out_not is not None:
                out_not(s, combine(~t, cv))
        else:
            out(s, t)
            if out_not is not None:
                out_not(s, ~t)

    return run


@builds("set")
def _set(d: Decoder, inst: Instruction) -> Executor:
    out_dtype = d.dtype(inst, 0)
    dtype = d.dtype(inst, 1)
    compare = _comparison(inst, dtype)
    combine = _combine(inst)
    out = d.writer(inst.operands[0], out_dtype)
    a = d.reader(inst.operands[1], dtype)
    b = d.reader(inst.operands[2], dtype)
    c = d.reader(inst.operands[3], np.bool_) if combine else None
    true = (
        np.float32(1.0).astype(out_dtype) if out_dtype.kind == "f" else integer_bits(-1, out_dtype)
    )

    def run(s):
        t = np.asarray(compare(a(s), b(s)))
        if combine is not None:
            t = combine(t, c(s))  # type: ignore[misc]
        out(s, np.where(t, true, out_dtype.type(0)).astype(out_dtype))

    return run


@builds("selp")
def _selp(d: Decoder, inst: Instruction) -> Executor:
    dtype = d.dtype(inst)
    out = d.writer(inst.operands[0], dtype)
    a = d.reader(inst.operands[1], dtype)
    b = d.reader(inst.operands[2], dtype)
    c = d.reader(inst.operands[3], np.bool_)
    return lambda s: out(s, np.where(c(s), a(s), b(s)).astype(dtype, copy=False))


@builds("slct")
def _slct(d: Decoder, inst: Instruction) -> Executor:
    dtype = d.dtype(inst, 0)
    ctype = d.dtype(inst, 1)
    out = d.writer(inst.operands[0], dtype)
    a = d.reader(inst.operands[1], dtype)
    b = d.reader(inst.operands[2], dtype)
    c = d.reader(inst.operands[3], ctype)
    return lambda s: out(s, np.where(np.asarray(c(s)) >= 0, a(s), b(s)).astype(dtype))


@builds("testp")
def _testp(d: Decoder, inst: Instruction) -> Executor:
    dtype = d.dtype(inst)
    out = d.writer(inst.operands[0], np.bool_)
    a = d.reader(inst.operands[1], dtype)
    tiny = np.finfo(dtype).tiny
    tests = {
        "finite": np.isfinite, "infinite": np.isinf, "number": lambda x: ~np.isnan(x),
        "notanumber": np.isnan,
        "normal": lambda x: np.isfinite(x) & (np.abs(x) >= tiny),
        "subnormal": lambda x: (np.abs(x) < tiny) & (x != 0),
    }  # fmt: skip
    test = next(tests[m] for m in inst.modifiers if m in tests)
    return lambda s: out(s, test(a(s)))


# ------------------------------------------------------------------------- move, convert
@builds("mov")
def _mov(d: Decoder, inst: Instruction) -> Executor:
    dtype = d.dtype(inst)
    dest, src = inst.operands[0], inst.operands[1]
    if isinstance(src, Vector):  # pack {lo, hi} into one wide register
        parts = src.elements
        part_dtype = np.dtype(UNSIGNED_OF_SIZE[dtype.itemsize // len(parts)])
        readers = [d.reader(p, part_dtype) for p in parts]
        out = d.writer(dest, UNSIGNED_OF_SIZE[dtype.itemsize])
        wide = UNSIGNED_OF_SIZE[dtype.itemsize]
        shift = part_dtype.itemsize * 8

        def pack(s):
            value = np.asarray(readers[0](s)).astype(wide)
            for k, r in enumerate(readers[1:], start=1):
                value = value | (np.asarray(r(s)).astype(wide) << wide(shift * k))
            out(s, value)

        return pack
    if isinstance(dest, Vector):  # unpack one wide register into {lo, hi}
        parts = dest.elements
        part_dtype = np.dtype(UNSIGNED_OF_SIZE[dtype.itemsize // len(parts)])
        wide = UNSIGNED_OF_SIZE[dtype.itemsize]
        read = d.reader(src, wide)
        writers = [d.writer(p, part_dtype) for p in parts]
        shift = part_dtype.itemsize * 8

        def unpack(s):
            value = np.asarray(read(s), dtype=wide)
            for k, w in enumerate(writers):
                w(s, (value >> wide(shift * k)).astype(part_dtype))

        return unpack
    out = d.writer(dest, dtype)
    read = d.reader(src, dtype)
    return lambda s: out(s, read(s))


@builds("cvt")
def _cvt(d: Decoder, inst: Instruction) -> Executor:
    dest_type, src_type = inst.types[0], inst.types[1]
    out_dtype = d.dtype(inst, 0)
    in_dtype = d.dtype(inst, 1)
    out = d.writer(inst.operands[0], out_dtype)
    read = d.reader(inst.operands[1], in_dtype)
    int_mode = next((m for m in inst.modifiers if m in _INT_ROUNDING), None)
    float_mode = _rounding(inst)
    sat = inst.has("sat")
    if dest_type.is_float and src_type.is_float:
        if out_dtype == np.float32 and in_dtype == np.float64 and float_mode != "rn":
            convert = lambda x: round_to_float32(np.asarray(x, np.float64), float_mode)  # noqa: E731
        elif int_mode is not None:  # cvt.rni.f32.f32: round to an integral value
            fn = {"rni": np.rint, "rzi": np.trunc, "rmi": np.floor, "rpi": np.ceil}[int_mode]
            convert = lambda x: fn(x).astype(out_dtype)  # noqa: E731
        else:
            convert = lambda x: np.asarray(x).astype(out_dtype)  # noqa: E731
        if sat:
            return lambda s: out(s, saturate_float(np.atleast_1d(convert(read(s)))))
        return lambda s: out(s, convert(read(s)))
    if dest_type.is_float:  # integer to float
        if out_dtype == np.float32 and float_mode != "rn":
            return lambda s: out(
                s, round_to_float32(np.asarray(read(s)).astype(np.float64), float_mode)
            )
        return lambda s: out(s, np.asarray(read(s)).astype(out_dtype))
    if src_type.is_float:  # float to integer: rounds, saturates
        mode = int_mode or "rzi"
        return lambda s: out(s, float_to_int(np.atleast_1d(read(s)), out_dtype, mode))
    if sat:  # integer to integer, clamped to the destination range
        info = np.iinfo(out_dtype)

        def clamp(s):
            x = np.asarray(read(s))
            big = x.astype(np.float64) if x.dtype.itemsize == 8 else x.astype(np.int64)
            out(s, np.clip(big, info.min, info.max).astype(out_dtype))

        return clamp
    return lambda s: out(s, np.asarray(read(s)).astype(out_dtype))


@builds("cvta")
def _cvta(d: Decoder, inst: Instruction) -> Executor:
    dtype = d.dtype(inst)
    out = d.writer(inst.operands[0], dtype)
    read = d.reader(inst.operands[1], dtype)
    space = next((m for m in inst.modifiers if m in ("global", "shared", "local", "const",
                                                    "param")), "global")  # fmt: skip
    window = {"shared": SHARED_WINDOW, "local": LOCAL_WINDOW}.get(space, 0)
    if window == 0:
        return lambda s: out(s, read(s))
    delta = dtype.type(window if not inst.has("to") else (-window) % (1 << 64))
    return lambda s: out(s, np.add(read(s), delta, dtype=dtype))


@builds("isspacep")
def _isspacep(d: Decoder, inst: Instruction) -> Executor:
    out = d.writer(inst.operands[0], np.bool_)
    read = d.reader(inst.operands[1], np.uint64)
    space = next(m for m in inst.modifiers if m in ("global", "shared", "local", "const",
                                                   "param"))  # fmt: skip

    def run(s):
        a = np.asarray(read(s), np.uint64)
        in_shared = (a >= SHARED_WINDOW) & (a < SHARED_WINDOW + WINDOW_BYTES)
        in_local = (a >= LOCAL_WINDOW) & (a < LOCAL_WINDOW + WINDOW_BYTES)
        result = {"shared": in_shared, "local": in_local}.get(space, ~in_shared & ~in_local)
        out(s, result)

    return run


# --------------------------------------------------------------------------------- memory
class _Location:
    """Where some selected lanes of a memory instruction point: the space, which lanes
    (``lanes`` indexes the selection, None for all), their addresses within that space
    (device addresses, or offsets in a CTA's shared or a thread's local memory), and the byte
    indices of those addresses in the NumPy image holding the space."""

    __slots__ = ("addresses", "byte_index", "image", "lanes", "space")

    def __init__(self, space, image, lanes, addresses, byte_index):
        self.space = space
        self.image = image
        self.lanes = lanes
        self.addresses = addresses
        self.byte_index = byte_index

    def record(self, s: Step, pc: int, size: int, kind: MemoryKind) -> None:
        s.recorder.memory(s, pc, self.lanes, self.addresses, size, kind, self.space)


def _locate(s: Step, space: Space, addresses: np.ndarray, size: int) -> list[_Location]:
    st = s.state
    if space in (Space.GLOBAL, Space.CONST):
        index = st.memory.byte_offsets(addresses, size)
        kind = MemorySpace.CONST if space is Space.CONST else MemorySpace.GLOBAL
        return [_Location(kind, st.device_view(np.uint8), None, addresses, index)]
    if space is Space.SHARED:
        index = _window_index(s, addresses, size, shared=True)
        return [_Location(MemorySpace.SHARED, st.shared, None, addresses, index)]
    if space is Space.LOCAL:
        index = _window_index(s, addresses, size, shared=False)
        return [_Location(MemorySpace.LOCAL, st.local, None, addresses, index)]
    # Generic: split the lanes by the window their address falls in.
    in_shared = (addresses >= SHARED_WINDOW) & (addresses < SHARED_WINDOW + WINDOW_BYTES)
    in_local = (addresses >= LOCAL_WINDOW) & (addresses < LOCAL_WINDOW + WINDOW_BYTES)
    if not in_shared.any() and not in_local.any():
        return _locate(s, Space.GLOBAL, addresses, size)
    parts = []
    for mask, sub_space, window in (
        (~in_shared & ~in_local, Space.GLOBAL, 0),
        (in_shared, Space.SHARED, SHARED_WINDOW),
        (in_local, Space.LOCAL, LOCAL_WINDOW),
    ):
        lanes = np.flatnonzero(mask)
        if len(lanes) == 0:
            continue
        sub = Step(s.state, s.threads()[lanes], s.warps, s.masks, s.recorder, s.block_start)
        (loc,) = _locate(sub, sub_space, addresses[lanes] - np.uint64(window), size)
        parts.append(_Location(loc.space, loc.image, lanes, loc.addresses, loc.byte_index))
    return parts


def _window_index(s: Step, offsets: np.ndarray, size: int, shared: bool) -> np.ndarray:
    st = s.state
    limit = st.shared_bytes if shared else st.local_bytes
    name = "shared" if shared else "local"
    if len(offsets) and int(offsets.max()) + size > limit:
        bad = int(offsets[np.argmax(offsets)])
        raise MemoryAccessError(
            f"{size}-byte {name} access at offset {bad:#x} is beyond the {limit} bytes declared"
        )
    if size > 1 and len(offsets) and np.any(offsets & np.uint64(size - 1)):
        raise MemoryAccessError(f"misaligned {size}-byte {name} access")
    off = offsets.astype(np.int64)
    if shared:
        return st.cta_of_thread[s.sel] * st.shared_stride + off
    return s.threads() * st.local_stride + off


def _address_of(d: Decoder, op: Address) -> Callable[[Step], np.ndarray]:
    """Per-lane byte address (uint64) of an ``[base+offset]`` operand."""
    offset = np.uint64(op.offset % (1 << 64))
    base = op.base
    if isinstance(base, Register):
        index = d.register_index[base.name]
        if d.register_dtypes[index].itemsize <= 4:
            # A 32-bit register holds a 32-bit address (the shared and local windows): the sum
            # wraps at 2^32 as the hardware's does, so nvcc's folded ``[%r + 128]`` with %r a
            # pointer 116 bytes before an array at window offset 0 reaches offset 12.
            wrap = np.uint64(0xFFFFFFFF)

            def from_register32(s):
                return (s.state.regs[index][s.sel].astype(np.uint64) + offset) & wrap

            return from_register32

        def from_register(s):
            return s.state.regs[index][s.sel].astype(np.uint64) + offset

        return from_register
    if isinstance(base, Symbol):
        read = d.symbol_reader(base.name, np.dtype(np.uint64))
        return lambda s: np.full(s.count, read(s) + offset, dtype=np.uint64)
    return lambda s: np.full(s.count, offset, dtype=np.uint64)


def _memory_operands(inst: Instruction) -> tuple[Address, list[Operand]]:
    address = next(op for op in inst.operands if isinstance(op, Address))
    others = [op for op in inst.operands if not isinstance(op, Address)]
    return address, others


@builds("ld", "ldu")
def _load(d: Decoder, inst: Instruction) -> Executor:
    dtype = d.dtype(inst)
    space = inst.space
    address_op, (dest,) = _memory_operands(inst)
    elements = d.register_elements(dest)
    writers = [d.writer(e, dtype) for e in elements]
    element_bytes = dtype.itemsize
    access_bytes = element_bytes * len(elements)
    if space is Space.PARAM:
        base = address_op.base
        start = address_op.offset + (d.param_offsets[base.name] if isinstance(base, Symbol) else 0)
        if not isinstance(base, Symbol | None):
            raise ValueError("ld.param through a register address")

        def load_param(s):
            raw = s.state.params
            if start < 0 or start + access_bytes > raw.size:
                raise MemoryAccessError(
                    f"ld.param at offset {start} outside the {raw.size}-byte parameter buffer"
                )
            values = raw[start : start + access_bytes].view(dtype)
            for k, w in enumerate(writers):
                w(s, values[k])

        return load_param
    address = _address_of(d, address_op)
    pc = inst.pc

    def load(s):
        parts = _locate(s, space, address(s), access_bytes)
        for loc in parts:
            loc.record(s, pc, access_bytes, MemoryKind.LOAD)
        if len(parts) == 1 and parts[0].lanes is None:
            loc = parts[0]
            view = loc.image.view(dtype)
            base_index = loc.byte_index // element_bytes
            for k, w in enumerate(writers):
                w(s, view[base_index + k])
            return
        columns = [np.zeros(s.count, dtype=dtype) for _ in writers]
        for loc in parts:
            view = loc.image.view(dtype)
            base_index = loc.byte_index // element_bytes
            for k, column in enumerate(columns):
                column[loc.lanes] = view[base_index + k]
        for w, column in zip(writers, columns, strict=True):
            w(s, column)

    return load


@builds("st")
def _store(d: Decoder, inst: Instruction) -> Executor:
    dtype = d.dtype(inst)
    space = inst.space
    if space is Space.PARAM:
        raise ValueError("st.param (device function calls are not supported)")
    address_op, (src,) = _memory_operands(inst)
    elements = d.register_elements(src)
    readers = [d.reader(e, dtype) for e in elements]
    element_bytes = dtype.itemsize
    access_bytes = element_bytes * len(elements)
    address = _address_of(d, address_op)
    pc = inst.pc

    def store(s):
        values = [r(s) for r in readers]
        for loc in _locate(s, space, address(s), access_bytes):
            loc.record(s, pc, access_bytes, MemoryKind.STORE)
            view = loc.image.view(dtype)
            base_index = loc.byte_index // element_bytes
            for k, v in enumerate(values):
                if loc.lanes is not None and np.ndim(v):
                    v = v[loc.lanes]
                view[base_index + k if k else base_index] = v

    return store


@builds("atom", "red")
def _atomic(d: Decoder, inst: Instruction) -> Executor:
    dtype = d.dtype(inst)
    if dtype.kind == "f" and dtype.itemsize == 2:
        raise ValueError("half-precision atomics")
    op_name = next((m for m in inst.modifiers if m in _ARITH_ATOMICS or m in _BITWISE_ATOMICS),
                   None)  # fmt: skip
    if op_name is None:
        raise ValueError("missing atomic operation")
    space = inst.space
    address_op, others = _memory_operands(inst)
    returns = inst.opcode == "atom"
    out = d.writer(others[0], dtype) if returns else None
    operands = others[1:] if returns else others
    b = d.reader(operands[0], dtype)
    c = d.reader(operands[1], dtype) if len(operands) > 1 else None
    bitwise = op_name in _BITWISE_ATOMICS
    code = (_BITWISE_ATOMICS if bitwise else _ARITH_ATOMICS)[op_name]
    size = dtype.itemsize
    address = _address_of(d, address_op)
    kind = MemoryKind.ATOMIC if returns else MemoryKind.REDUCTION
    pc = inst.pc

    def run(s):
        n = s.count
        bv = np.ascontiguousarray(np.broadcast_to(b(s), (n,)), dtype=dtype)
        cv = (np.ascontiguousarray(np.broadcast_to(c(s), (n,)), dtype=dtype) if c is not None
              else bv)  # fmt: skip
        old = np.zeros(n, dtype=dtype)
        for loc in _locate(s, space, address(s), size):
            loc.record(s, pc, size, kind)
            view = loc.image.view(dtype)
            index = (loc.byte_index // size).astype(np.int64)
            lanes = slice(None) if loc.lanes is None else loc.lanes
            part_old = np.zeros(len(index), dtype=dtype)
            if bitwise:
                _atomic_bitwise(view, index, np.ascontiguousarray(bv[lanes]), code, part_old)
            else:
                _atomic_arith(view, index, np.ascontiguousarray(bv[lanes]),
                              np.ascontiguousarray(cv[lanes]), code, part_old)  # fmt: skip
            old[lanes] = part_old
        if out is not None:
            out(s, old)

    return run


@builds("prefetch", "prefetchu", "membar", "fence", "nanosleep", "pmevent")
def _no_effect(d: Decoder, inst: Instruction) -> Executor:
    """Hints and orderings: the interpreter runs one warp-instruction at a time, in order."""
    return lambda s: None


# ------------------------------------------------------------------------- warp collectives
@builds("shfl")
def _shfl(d: Decoder, inst: Instruction) -> Executor:
    mode = next(m for m in inst.modifiers if m in ("up", "down", "bfly", "idx"))
    dest = inst.operands[0]
    first, second = (dest.first, dest.second) if isinstance(dest, RegisterPair) else (dest, None)
    out = d.writer(first, np.uint32)
    out_valid = d.writer(second, np.bool_) if second is not None else None
    source = inst.operands[1]
    lane_reader = d.reader(inst.operands[2], np.uint32)
    clamp_reader = d.reader(inst.operands[3], np.uint32)
    src_index = d.register_index[source.name] if isinstance(source, Register) else None
    src_const = d.reader(source, np.uint32) if src_index is None else None

    def run(s):
        lane = (s.threads() % WARP_SIZE).astype(np.int64)
        bval = np.asarray(lane_reader(s)).astype(np.int64) & 31
        cval = np.asarray(clamp_reader(s)).astype(np.int64)
        seg_mask = (cval >> 8) & 31
        max_lane = (lane & seg_mask) | (cval & 31 & ~seg_mask)
        min_lane = lane & seg_mask
        if mode == "up":
            j = lane - bval
            valid = j >= max_lane
        elif mode == "down":
            j = lane + bval
            valid = j <= max_lane
        elif mode == "bfly":
            j = lane ^ bval
            valid = j <= max_lane
        else:
            j = min_lane | (bval & ~seg_mask)
            valid = j <= max_lane
        j = np.where(valid, j, lane)
        source_threads = s.threads() - lane + j
        if src_index is not None:
            values = s.state.regs[src_index].view(np.uint32)[source_threads]
        else:
            values = np.broadcast_to(src_const(s), (s.count,))  # type: ignore[misc]
        out(s, values)
        if out_valid is not None:
            out_valid(s, valid)

    return run


@builds("vote")
def _vote(d: Decoder, inst: Instruction) -> Executor:
    mode = next(m for m in inst.modifiers if m in ("all", "any", "uni", "ballot"))
    dtype = np.dtype(np.uint32) if mode == "ballot" else np.dtype(np.bool_)
    out = d.writer(inst.operands[0], dtype)
    pred = d.reader(inst.operands[1], np.bool_)
    member = d.reader(inst.operands[2], np.uint32) if len(inst.operands) > 2 else None

    def run(s):
        threads = s.threads()
        warp = threads // WARP_SIZE
        lane = (threads % WARP_SIZE).astype(np.uint32)
        p = np.broadcast_to(pred(s), (len(threads),))
        if member is not None:
            allowed = (np.broadcast_to(member(s), (len(threads),)) >> lane) & 1
            p_in = p & allowed.astype(bool)
        else:
            p_in = p
        first = np.r_[0, np.flatnonzero(np.diff(warp)) + 1]
        bits = np.where(p_in, np.uint32(1) << lane, np.uint32(0)).astype(np.uint32)
        ballot = np.bitwise_or.reduceat(bits, first) if len(bits) else bits
        present = np.bitwise_or.reduceat(np.uint32(1) << lane, first) if len(bits) else bits
        counts = np.diff(np.r_[first, len(threads)])
        if mode == "ballot":
            value = ballot
        elif mode == "any":
            value = ballot != 0
        elif mode == "all":
            value = ballot == present
        else:
            value = (ballot == 0) | (ballot == present)
        out(s, np.repeat(value, counts))

    return run


@builds("activemask")
def _activemask(d: Decoder, inst: Instruction) -> Executor:
    out = d.writer(inst.operands[0], np.uint32)

    def run(s):
        threads = s.threads()
        warp = threads // WARP_SIZE
        lane = (threads % WARP_SIZE).astype(np.uint32)
        first = np.r_[0, np.flatnonzero(np.diff(warp)) + 1]
        masks = np.bitwise_or.reduceat(np.uint32(1) << lane, first)
        out(s, np.repeat(masks, np.diff(np.r_[first, len(threads)])))

    return run


@builds("trap", "brkpt")
def _trap(d: Decoder, inst: Instruction) -> Executor:
    def run(s):
        raise SimulationError(f"{inst.location}: kernel executed {inst.opcode!r}")

    return run
