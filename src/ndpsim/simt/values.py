"""NumPy views of PTX types and the bit-exact conversions between them."""

from __future__ import annotations

import numpy as np

from ndpsim.frontend.ir import PtxType

_INT_DTYPES = {
    ("s", 8): np.int8, ("s", 16): np.int16, ("s", 32): np.int32, ("s", 64): np.int64,
    ("u", 8): np.uint8, ("u", 16): np.uint16, ("u", 32): np.uint32, ("u", 64): np.uint64,
    ("b", 8): np.uint8, ("b", 16): np.uint16, ("b", 32): np.uint32, ("b", 64): np.uint64,
}  # fmt: skip
_FLOAT_DTYPES = {"f16": np.float16, "f32": np.float32, "f64": np.float64}

UNSIGNED_OF_SIZE = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}
SIGNED_OF_SIZE = {1: np.int8, 2: np.int16, 4: np.int32, 8: np.int64}


def numpy_dtype(ptx_type: PtxType) -> np.dtype | None:
    """The NumPy dtype holding a PTX type, or None if ndpsim has no arithmetic for it."""
    if ptx_type.kind == "pred":
        return np.dtype(np.bool_)
    if ptx_type.name in _FLOAT_DTYPES:
        return np.dtype(_FLOAT_DTYPES[ptx_type.name])
    key = (ptx_type.kind, ptx_type.bits)
    if key in _INT_DTYPES:
        return np.dtype(_INT_DTYPES[key])
    if ptx_type.name in ("f16x2", "bf16x2"):
        return np.dtype(np.uint32)  # moved and stored as bits only
    if ptx_type.name == "bf16":
        return np.dtype(np.uint16)
    return None


def integer_bits(value: int, dtype: np.dtype):
    """An integer literal as a scalar of ``dtype``, wrapping as a register of that width would."""
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return np.bool_(value != 0)
    if dtype.kind == "f":
        with np.errstate(over="ignore"):  # an integer literal past .f16's range is infinity
            return dtype.type(value)
    size = dtype.itemsize
    raw = UNSIGNED_OF_SIZE[size](value & ((1 << (8 * size)) - 1))
    return raw.view(dtype)


def float_literal(value: float, text: str, dtype: np.dtype):
    """A ``0f``/``0d``/decimal literal as a scalar of ``dtype``: a float type takes its value,
    an integer or bit type takes its bit pattern (``mov.b32 %r1, 0f3F800000``)."""
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        with np.errstate(over="ignore"):  # 1e40 in an .f32 instruction rounds to infinity
            return dtype.type(value)
    if text.lstrip("-")[:2] in ("0f", "0F"):
        bits = np.float32(value).view(np.uint32)
    else:
        bits = np.float64(value).view(np.uint64)
    return integer_bits(int(bits), dtype)


def convert_width(values: np.ndarray, target: np.dtype) -> np.ndarray:
    """Zero- or sign-extend (by the source's signedness) or truncate integers to ``target``'s
    width, keeping bit patterns, as PTX does when a register and an instruction type differ."""
    target = np.dtype(target)
    if values.dtype == target:
        return values
    if values.dtype.itemsize == target.itemsize:
        return values.view(target)
    if target == np.bool_:
        return values != 0
    if values.dtype == np.bool_:
        return values.astype(target)
    if values.dtype.kind == "f":
        values = values.view(UNSIGNED_OF_SIZE[values.dtype.itemsize])
    if target.kind == "f":
        return values.astype(UNSIGNED_OF_SIZE[target.itemsize]).view(target)
    return values.astype(target)


def round_to_float32(exact: np.ndarray, mode: str) -> np.ndarray:
    """Round float64 results to float32 with a PTX rounding mode (rn, rz, rm, rp)."""
    nearest = exact.astype(np.float32)
    if mode == "rn":
        return nearest
    back = nearest.astype(np.float64)
    if mode == "rm":
        fix = back > exact
        return np.where(fix, np.nextafter(nearest, np.float32(-np.inf)), nearest)
    if mode == "rp":
        fix = back < exact
        return np.where(fix, np.nextafter(nearest, np.float32(np.inf)), nearest)
    # rz: towards zero
    fix = np.abs(back) > np.abs(exact)
    return np.where(fix, np.nextafter(nearest, np.float32(0)), nearest)


def saturate_float(values: np.ndarray) -> np.ndarray:
    """PTX ``.sat`` on floats: clamp to [0, 1], NaN becomes 0."""
    return np.nan_to_num(np.clip(values, 0, 1), nan=0.0).astype(values.dtype, copy=False)


def float_to_int(values: np.ndarray, target: np.dtype, mode: str) -> np.ndarray:
    """``cvt.rXi.intN.fM``: round by mode, saturate to the integer range, NaN becomes 0."""
    target = np.dtype(target)
    rounded = {"rni": np.rint, "rzi": np.trunc, "rmi": np.floor, "rpi": np.ceil}[mode](
        values.astype(np.float64)
    )
    info = np.iinfo(target)
    clipped = np.clip(np.nan_to_num(rounded, nan=0.0), float(info.min), float(info.max))
    out = clipped.astype(target)
    if target.itemsize == 8:  # float64 cannot hold the int64 extremes exactly
        out = np.where(rounded >= float(info.max), info.max, out)
        out = np.where(rounded <= float(info.min), info.min, out).astype(target)
    return out
