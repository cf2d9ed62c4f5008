"""Reading the text files users hand us (PTX, memory traces, presets).

An unreadable file or one that is not UTF-8 becomes the caller's own error class, naming the file
and, for bad bytes, the line and column of the first one, instead of an OSError or
UnicodeDecodeError traceback.
"""

from __future__ import annotations

from pathlib import Path

from ndpsim.errors import NdpsimError


def read_text(path: Path, error: type[NdpsimError]) -> str:
    """The UTF-8 text of ``path``; any failure raises ``error`` with a one-line message."""
    return decode_text(read_bytes(path, error), path, error)


def read_bytes(path: Path, error: type[NdpsimError]) -> bytes:
    """The bytes of ``path`` (for a reader that looks at them before decoding them); a file
    that cannot be read raises ``error`` with a one-line message."""
    try:
        return path.read_bytes()
    except OSError as exc:
        raise error(f"{path}: cannot read ({exc.strerror})") from None


def decode_text(data: bytes, path: Path, error: type[NdpsimError]) -> str:
    """``data``, read from ``path``, as UTF-8 text; bytes that are not raise ``error`` naming
    the line and column of the first."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        column = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        raise error(
            f"{path}:{line}:{column}: not UTF-8 text (byte {data[exc.start]:#04x})"
        ) from None
