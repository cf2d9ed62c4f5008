"""Reading ``.npz`` archives we are handed without trusting them.

``numpy.load`` believes an archive: a member whose header claims 2^40 elements makes it allocate
terabytes before reading a byte, a ``.npy`` file renamed ``.npz`` comes back as a bare array, and
a member that is not an array comes back as raw bytes. :class:`NpzArchive` reads each member's
header first and loads the array only once its shape, its dtype and the member's stored size
agree and the machine has the memory; anything else is a :class:`TraceFormatError` naming the
file and the member.
"""

from __future__ import annotations

import math
import warnings
import zipfile
import zlib
from pathlib import Path
from types import TracebackType

import numpy as np

from ndpsim.errors import TraceFormatError
from ndpsim.hostmemory import available_bytes, size_text

#: What zipfile and zlib raise on a damaged archive or member.
_ZIP_ERRORS = (OSError, EOFError, ValueError, zipfile.BadZipFile, zlib.error, NotImplementedError)
#: What parsing a damaged ``.npy`` header raises: its dictionary is a Python literal (a deeply
#: nested one makes the parser raise MemoryError or RecursionError) describing a dtype.
_HEADER_ERRORS = (*_ZIP_ERRORS, TypeError, KeyError, SyntaxError, MemoryError, RecursionError)
_READ_HEADER = {(1, 0): np.lib.format.read_array_header_1_0,
                (2, 0): np.lib.format.read_array_header_2_0}  # fmt: skip


class NpzArchive:
    """The arrays of an ``.npz`` file, read one by one, each checked before it is allocated.
    Use as a context manager; ``files`` and ``archive[name]`` work as with ``numpy.load``.
    ``what`` names the kind of file in the error raised when it cannot be opened."""

    def __init__(self, path: Path, what: str):
        self.path = path
        try:
            with path.open("rb") as raw:
                is_npy = raw.read(6) == b"\x93NUMPY"
            if not is_npy:
                self.zip = zipfile.ZipFile(path)
        except _ZIP_ERRORS as exc:
            raise TraceFormatError(f"{path}: not a readable {what} ({_reason(exc)})") from None
        if is_npy:
            raise TraceFormatError(f"{path}: a single .npy array, not an .npz archive of arrays")
        self.members = {
            info.filename.removesuffix(".npy"): info
            for info in self.zip.infolist()
            if info.filename.endswith(".npy")
        }

    @property
    def files(self) -> list[str]:
        """Names of the arrays (members ending in ``.npy``, without the suffix)."""
        return list(self.members)

    def __enter__(self) -> NpzArchive:
        return self

    def __exit__(self, kind: type | None, value: BaseException | None,
                 traceback: TracebackType | None) -> None:  # fmt: skip
        self.zip.close()

    def __getitem__(self, name: str) -> np.ndarray:
        info = self.members.get(name)
        if info is None:
            raise TraceFormatError(f"{self.path}: no array {name!r}")
        where = f"{self.path}: member {info.filename!r}"
        if info.flag_bits & 0x1:
            raise TraceFormatError(f"{where} is encrypted")
        if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
            raise TraceFormatError(
                f"{where} is compressed with method {info.compress_type}; numpy writes stored "
                "or deflated members"
            )
        try:
            with self.zip.open(info) as member, warnings.catch_warnings():
                warnings.simplefilter("ignore")  # a header written by Python 2 warns
                shape, dtype, header_bytes = _header(member)
                _check_size(where, shape, dtype, info.file_size - header_bytes)
                member.seek(0)
                return np.lib.format.read_array(member, allow_pickle=False)
        except _HEADER_ERRORS as exc:
            raise TraceFormatError(
                f"{where} is not a readable .npy array ({_reason(exc)})"
            ) from None


def _reason(exc: BaseException) -> str:
    """What went wrong, on one short line (numpy's messages span lines and quote headers)."""
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text if len(text) <= 120 else text[:117] + "..."


def _header(member) -> tuple[tuple[int, ...], np.dtype, int]:
    """Shape, dtype and length of the ``.npy`` header at the start of ``member``."""
    version = np.lib.format.read_magic(member)
    read = _READ_HEADER.get(version)
    if read is None:
        raise ValueError(f"format version {version[0]}.{version[1]}; expected 1.0 or 2.0")
    shape, _, dtype = read(member)
    return shape, dtype, member.tell()


def _check_size(where: str, shape: tuple[int, ...], dtype: np.dtype, stored: int) -> None:
    """The data the header describes must be what the member holds, and fit in memory."""
    if dtype.hasobject:
        raise TraceFormatError(f"{where} holds Python objects ({dtype}); expected numbers")
    if any(n < 0 for n in shape):
        raise TraceFormatError(f"{where}: its header claims the shape {shape}")
    claimed = math.prod(shape) * dtype.itemsize
    if claimed != stored:
        raise TraceFormatError(
            f"{where}: its header claims {shape} elements of {dtype} ({claimed} B), but the "
            f"member holds {stored} B of data"
        )
    free = available_bytes()
    if free is not None and claimed > free:
        raise TraceFormatError(
            f"{where} needs {size_text(claimed)}, more than the {size_text(free)} of memory "
            "available"
        )
