"""Ramulator's load/store trace format: one request per line, ``LD 0x1f40`` or ``ST 0x1f80``.

Lets the DRAM model be driven by, and compared with, traces other simulators use. Addresses may
be hexadecimal (``0x`` and ASCII hex digits) or decimal (ASCII digits); fields are separated by
spaces or tabs, lines by newlines; blank lines and lines starting with ``#`` are skipped. A trace
without a request is an error (a run over it would report zeros as if they were a result).
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np

from ndpsim.errors import TraceFormatError
from ndpsim.textfile import read_text
from ndpsim.trace.npz import NpzArchive

#: What separates fields: ASCII blanks only (``str.split`` would also take Unicode spaces).
_BLANKS = " \t\r\f\v"
#: An address as Ramulator writes one. Python's ``int`` would also take Unicode digits
#: ('\u0663'), signs inside the hex prefix ('0x+10') and underscores; the sign is matched only
#: to report a negative address as out of range.
_ADDRESS = re.compile(r"(-?)(?:0[xX]([0-9a-fA-F]+)|([0-9]+))")
#: Significant digits of the largest 64-bit address, in hex and in decimal.
_HEX_DIGITS, _DECIMAL_DIGITS = 16, 20


def read_ldst(path: str | Path) -> tuple[np.ndarray, np.ndarray]:
    """(addresses as uint64, is_write as uint8) of a Ramulator LD/ST trace, or of an ``.npz``
    holding ``addr`` and ``is_write`` arrays (the anchor traces come in both forms)."""
    path = Path(path)
    if path.suffix == ".npz":
        return _read_npz(path)
    text = read_text(path, TraceFormatError)
    ops: list[str] = []
    addresses: list[int] = []
    for number, line in enumerate(text.split("\n"), start=1):
        stripped = line.strip(_BLANKS)
        if not stripped or stripped.startswith("#"):
            continue
        fields = re.split(f"[{_BLANKS}]+", stripped)
        if len(fields) != 2 or fields[0] not in ("LD", "ST"):
            raise TraceFormatError(
                f"{path}:{number}: expected 'LD <address>' or 'ST <address>', "
                f"got {_clipped(stripped)!r}"
            )
        ops.append(fields[0])
        addresses.append(_address(fields[1], f"{path}:{number}"))
    if not addresses:
        raise TraceFormatError(f"no requests in {path}")
    return (
        np.array(addresses, dtype=np.uint64),
        np.array([op == "ST" for op in ops], dtype=np.uint8),
    )


def _address(token: str, where: str) -> int:
    """The 64-bit address ``token`` spells, or a TraceFormatError at ``where``."""
    match = _ADDRESS.fullmatch(token)
    if match is None:
        raise TraceFormatError(
            f"{where}: {_clipped(token)!r} is not an address (hex 0x... or decimal)"
        )
    sign, hex_digits, decimal_digits = match.groups()
    digits = (hex_digits or decimal_digits).lstrip("0")
    longest = _HEX_DIGITS if hex_digits else _DECIMAL_DIGITS
    # checked before int(), which refuses decimals of thousands of digits
    if (sign and digits) or len(digits) > longest:
        raise TraceFormatError(f"{where}: address {_clipped(token)} is out of range")
    address = int(hex_digits, 16) if hex_digits else int(decimal_digits)
    if address >= 1 << 64:
        raise TraceFormatError(f"{where}: address {_clipped(token)} is out of range")
    return address


def _clipped(text: str) -> str:
    """At most 40 characters of ``text``, so that an error stays one readable line."""
    return text if len(text) <= 40 else text[:37] + "..."


def _read_npz(path: Path) -> tuple[np.ndarray, np.ndarray]:
    with NpzArchive(path, ".npz trace") as data:
        if "addr" not in data.files or "is_write" not in data.files:
            raise TraceFormatError(
                f"{path}: expected arrays 'addr' and 'is_write', found "
                f"{', '.join(map(repr, data.files)) or 'none'}"
            )
        addr, write = data["addr"], data["is_write"]
    if addr.shape != write.shape or addr.ndim != 1:
        raise TraceFormatError(
            f"{path}: 'addr' and 'is_write' must be 1-D of equal length; they are "
            f"{addr.shape} and {write.shape}"
        )
    if addr.dtype.kind not in "iu":
        raise TraceFormatError(f"{path}: 'addr' must hold non-negative integers, not {addr.dtype}")
    if addr.dtype.kind == "i" and addr.size and addr.min() < 0:
        first = int(np.flatnonzero(addr < 0)[0])
        raise TraceFormatError(
            f"{path}: 'addr' must hold non-negative integers; entry {first} is {addr[first]}"
        )
    if write.dtype.kind not in "biuf":
        raise TraceFormatError(f"{path}: 'is_write' must hold 0 or 1, not {write.dtype}")
    if write.size and not np.isin(write, (0, 1)).all():
        first = int(np.flatnonzero(~np.isin(write, (0, 1)))[0])
        raise TraceFormatError(
            f"{path}: 'is_write' must be 0 or 1; entry {first} is {write[first]!r}"
        )
    if not addr.size:
        raise TraceFormatError(f"no requests in {path}")
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
