"""Ramulator's load/store trace format: one request per line, ``LD 0x1f40`` or ``ST 0x1f80``.

Lets the DRAM model be driven by, and compared with, traces other simulators use. Addresses may
be hexadecimal (``0x``) or decimal; blank lines and lines starting with ``#`` are skipped.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ndpsim.errors import TraceFormatError
from ndpsim.textfile import read_text
from ndpsim.trace.trace import NPZ_READ_ERRORS


def read_ldst(path: str | Path) -> tuple[np.ndarray, np.ndarray]:
    """(addresses as uint64, is_write as uint8) of a Ramulator LD/ST trace, or of an ``.npz``
    holding ``addr`` and ``is_write`` arrays (the anchor traces come in both forms)."""
    path = Path(path)
    if path.suffix == ".npz":
        return _read_npz(path)
    text = read_text(path, TraceFormatError)
    ops: list[str] = []
    addresses: list[int] = []
    for number, line in enumerate(text.splitlines(), start=1):
        fields = line.split()
        if not fields or fields[0].startswith("#"):
            continue
        if len(fields) != 2 or fields[0] not in ("LD", "ST"):
            raise TraceFormatError(
                f"{path}:{number}: expected 'LD <address>' or 'ST <address>', got {line.strip()!r}"
            )
        token = fields[1]
        digits = token.removeprefix("-")
        try:
            if digits[:2].lower() == "0x":
                address = int(digits[2:], 16)
            elif digits.isdigit():
                address = int(digits, 10)
            else:
                raise ValueError(token)
            if token.startswith("-"):
                address = -address
        except ValueError:
            raise TraceFormatError(
                f"{path}:{number}: {fields[1]!r} is not an address (hex 0x... or decimal)"
            ) from None
        if not 0 <= address < 1 << 64:
            raise TraceFormatError(f"{path}:{number}: address {fields[1]} is out of range")
        ops.append(fields[0])
        addresses.append(address)
    return (
        np.array(addresses, dtype=np.uint64),
        np.array([op == "ST" for op in ops], dtype=np.uint8),
    )


def _read_npz(path: Path) -> tuple[np.ndarray, np.ndarray]:
    try:
        with np.load(path) as data:
            if "addr" not in data.files or "is_write" not in data.files:
                raise TraceFormatError(f"{path}: expected arrays 'addr' and 'is_write'")
            addr, write = data["addr"], data["is_write"]
    except NPZ_READ_ERRORS as exc:
        raise TraceFormatError(f"{path}: not a readable .npz trace ({exc})") from None
    if addr.shape != write.shape or addr.ndim != 1:
        raise TraceFormatError(f"{path}: 'addr' and 'is_write' must be 1-D of equal length")
    if addr.dtype.kind not in "iu" or (addr.dtype.kind == "i" and addr.size and addr.min() < 0):
        raise TraceFormatError(f"{path}: 'addr' must hold non-negative integers")
    if write.size and not np.isin(write, (0, 1)).all():
        first = int(np.flatnonzero(~np.isin(write, (0, 1)))[0])
        raise TraceFormatError(
            f"{path}: 'is_write' must be 0 or 1; entry {first} is {write[first]!r}"
        )
    return addr.astype(np.uint64), write.astype(np.uint8)


def write_ldst(path: str | Path, addresses: np.ndarray, is_write: np.ndarray) -> None:
    """Write requests as a Ramulator LD/ST trace."""
    addresses = np.asarray(addresses, dtype=np.uint64)
    is_write = np.asarray(is_write).astype(bool)
    if addresses.shape != is_write.shape:
        raise ValueError("addresses and is_write must have the same length")
    ops = np.where(is_write, "ST", "LD")
    lines = [f"{op} {int(a):#x}" for op, a in zip(ops, addresses, strict=True)]
    Path(path).write_text("\n".join(lines) + ("\n" if lines else ""))
