"""Ramulator's load/store trace format: one request per line, ``LD 0x1f40`` or ``ST 0x1f80``.

Lets the DRAM model be driven by, and compared with, traces other simulators use. Addresses may
be hexadecimal (``0x`` and ASCII hex digits) or decimal (ASCII digits); fields are separated by
spaces or tabs, lines by newlines; blank lines and lines starting with ``#`` are skipped. A trace
without a request is an error (a run over it would report zeros as if they were a result).

A trace of a million lines is read with NumPy over its bytes, not line by line in Python (ten
times faster, `bench/dram.py`): the bytes are cut into tokens at blanks and newlines, each
line's tokens checked against the grammar above, and each address's digits, read through a
sliding window, turned into a number for all addresses at once. A file that breaks any rule
(or holds a byte that is not ASCII, even in a comment) is read again line by line, which
reports the first bad line, so every error names the file, the line and what is wrong exactly
as the line reader always has; a property test holds the two readers to the same result on
generated traces, bad lines included.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from ndpsim.errors import TraceFormatError
from ndpsim.textfile import decode_text, read_bytes
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
    data = read_bytes(path, TraceFormatError)
    requests = _vectorised(data)
    if requests is not None:
        return requests
    return _read_line_by_line(data, path)


def _read_line_by_line(data: bytes, path: Path) -> tuple[np.ndarray, np.ndarray]:
    """:func:`read_ldst` of a text trace's bytes ``data``, read from ``path``, a line at a
    time: the reader of record, which names the first line that breaks the format."""
    text = decode_text(data, path, TraceFormatError)
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


_NEWLINE, _HASH, _ZERO = ord("\n"), ord("#"), ord("0")


def _vectorised(data: bytes) -> tuple[np.ndarray, np.ndarray] | None:
    """The requests of a text trace's bytes, or None where any line breaks the format (or a
    byte is not ASCII): the line reader then says which."""
    raw = np.frombuffer(data, dtype=np.uint8)
    if not raw.size or raw.max() >= 0x80:
        return None
    token = raw > ord(" ")  # printable ASCII; of the bytes below it, only blanks may appear
    blanks = np.count_nonzero(raw == ord(" ")) + np.count_nonzero(raw - np.uint8(9) <= 4)
    if blanks != raw.size - np.count_nonzero(token):  # another control character
        return None
    edges = np.flatnonzero(token[1:] != token[:-1]) + 1
    if token[0]:
        edges = np.concatenate(([0], edges))
    if token[-1]:
        edges = np.concatenate((edges, [raw.size]))
    starts, ends = edges[0::2], edges[1::2]  # a token starts, then ends, in turn
    if not starts.size:
        return None
    # the first token of each line: the first after each newline, and the file's first
    first = np.zeros(starts.size + 1, dtype=bool)
    first[np.searchsorted(starts, np.flatnonzero(raw == _NEWLINE))] = True
    first = first[:-1]
    first[0] = True
    commented = first & (raw[starts] == _HASH)
    if commented.any():  # drop the lines that start with '#'
        line = np.cumsum(first) - 1  # each token's line among the lines that have tokens
        keep = ~np.isin(line, line[commented])
        starts, ends, first = starts[keep], ends[keep], first[keep]
    # two tokens a line: the operation, first on its line, then the address, last on it
    if not starts.size or starts.size % 2 or not first[0::2].all() or first[1::2].any():
        return None
    op_start, op_end = starts[0::2], ends[0::2]
    address_start, address_end = starts[1::2], ends[1::2]
    if not (op_end - op_start == 2).all():
        return None
    op = raw[op_start].astype(np.uint16) << 8 | raw[op_start + 1]
    is_write = op == (ord("S") << 8 | ord("T"))
    if not (is_write | (op == (ord("L") << 8 | ord("D")))).all():
        return None
    second = raw[np.minimum(address_start + 1, raw.size - 1)]  # (a one-digit address ends it)
    hexadecimal = ((address_end - address_start > 2) & (raw[address_start] == _ZERO)
                   & ((second | 0x20) == ord("x")))  # fmt: skip
    digits_start = address_start + 2 * hexadecimal
    addresses = np.zeros(address_start.size, dtype=np.uint64)
    for is_hex in (True, False):
        chosen = hexadecimal == is_hex
        if not chosen.any():
            continue
        if chosen.all():  # every address in one base, as in the usual trace: no copies
            chosen = slice(None)
        values = _numbers(raw, digits_start[chosen], address_end[chosen], is_hex)
        if values is None:
            return None
        addresses[chosen] = values
    return addresses, is_write.astype(np.uint8)


def _numbers(raw: np.ndarray, start: np.ndarray, end: np.ndarray,
             hexadecimal: bool) -> np.ndarray | None:  # fmt: skip
    """The numbers the digits ``raw[start:end]`` spell (hexadecimal or decimal), or None if a
    token holds another character, more significant digits than a 64-bit address has, or a
    number past 64 bits."""
    width = _HEX_DIGITS if hexadecimal else _DECIMAL_DIGITS
    length = end - start
    for k in np.flatnonzero(length > width):  # the rare long token: leading zeros only
        if (raw[start[k] : end[k] - width] != _ZERO).any():
            return None
    # each token's last ``columns`` bytes (as many as the longest has, up to ``width``; whole
    # bytes of two hexadecimal digits), read through a sliding window: one row per token
    columns = min(width, int(length.max()))
    columns += columns % 2 if hexadecimal else 0
    padded = np.concatenate((np.zeros(columns, dtype=np.uint8), raw))
    text = sliding_window_view(padded, columns)[end]
    inside = np.arange(columns) >= (columns - np.minimum(length, columns))[:, None]
    digit = text - np.uint8(ord("0"))
    decimal = digit < 10
    if hexadecimal:
        letter = (text | np.uint8(0x20)) - np.uint8(ord("a") - 10)  # a-f and A-F as 10-15
        if ((letter - np.uint8(10) > 5) & ~decimal & inside).any():
            return None
        digit = letter + decimal.view(np.uint8) * (digit - letter)  # modulo 256: the digit
        digit *= inside.view(np.uint8)
        packed = np.zeros((digit.shape[0], 8), dtype=np.uint8)  # two digits a byte,
        packed[:, 8 - columns // 2 :] = digit[:, 0::2] << 4 | digit[:, 1::2]
        return packed.view(">u8").ravel().astype(np.uint64)  # eight a big-endian number
    if (~decimal & inside).any():
        return None
    digit *= inside.view(np.uint8)
    if columns == width:  # twenty digits may pass 2**64 - 1: Python's integers say
        for k in np.flatnonzero(digit[:, 0]):
            if int(raw[end[k] - width : end[k]].tobytes()) >= 1 << 64:
                return None
    value = np.zeros(digit.shape[0], dtype=np.uint64)
    for column in digit.T:  # Horner's rule, a column of all tokens at a time
        value = value * np.uint64(10) + column
    return value


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
