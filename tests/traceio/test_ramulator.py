"""Ramulator LD/ST traces: exact write/read round trips (64-bit addresses included), the .npz
form, comments and blank lines, and malformed input reported as TraceFormatError at file:line."""

from __future__ import annotations

import io
import re
import struct
import tempfile
import zipfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ndpsim.errors import TraceFormatError
from ndpsim.traceio import ramulator
from ndpsim.traceio.ramulator import read_ldst, write_ldst

_REQUESTS = st.lists(st.tuples(st.integers(0, 2**64 - 1), st.booleans()), min_size=1, max_size=50)


@settings(max_examples=100, deadline=None)
@given(_REQUESTS)
def test_write_then_read_round_trips_addresses_and_flags(requests):
    addresses = np.array([a for a, _ in requests], dtype=np.uint64)
    writes = np.array([w for _, w in requests], dtype=bool)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "trace.txt"
        write_ldst(path, addresses, writes)
        got_addresses, got_writes = read_ldst(path)
    assert got_addresses.dtype == np.uint64
    assert got_writes.dtype == np.uint8
    assert got_addresses.tolist() == [a for a, _ in requests]
    assert got_writes.tolist() == [int(w) for _, w in requests]


def test_written_trace_is_ramulator_text(tmp_path):
    path = tmp_path / "t.trace"
    write_ldst(path, [0x1F40, 2**40 + 5, 0], [False, True, False])
    assert path.read_text() == "LD 0x1f40\nST 0x10000000005\nLD 0x0\n"


def test_an_empty_trace_is_written_but_reading_it_is_an_error(tmp_path):
    path = tmp_path / "empty.trace"
    write_ldst(path, np.array([], dtype=np.uint64), np.array([], dtype=bool))
    assert path.read_text() == ""
    with pytest.raises(TraceFormatError, match=re.escape(f"no requests in {path}")):
        read_ldst(path)


def test_write_rejects_addresses_and_flags_of_different_lengths(tmp_path):
    with pytest.raises(ValueError, match="same length"):
        write_ldst(tmp_path / "t.trace", [1, 2, 3], [True])


def test_blank_lines_and_comments_are_skipped_and_decimal_is_accepted(tmp_path):
    path = tmp_path / "t.trace"
    path.write_text(
        "# a Ramulator trace\n\nLD 0x40\n   \n#ST 0x80\n  # indented comment\nST 128\n"
        "\tLD   0X0c0  \nST 18446744073709551615"  # no final newline
    )
    addresses, writes = read_ldst(path)
    assert addresses.tolist() == [0x40, 128, 0xC0, 2**64 - 1]
    assert writes.tolist() == [0, 1, 0, 1]


@pytest.mark.parametrize(
    "bad,complaint",
    [
        ("LD zzz", "'zzz' is not an address"),
        ("XX 0x10", "expected 'LD <address>' or 'ST <address>'"),
        ("LD", "expected 'LD <address>'"),
        ("ST 0x10 0x20", "expected 'LD <address>'"),
        ("ld 0x10", "expected 'LD <address>'"),
        ("LD 0x10 # trailing comment", "expected 'LD <address>'"),
        ("ST -16", "out of range"),
        (f"LD {2**64:#x}", "out of range"),
    ],
)
def test_a_malformed_line_is_reported_with_file_and_line_number(tmp_path, bad, complaint):
    path = tmp_path / "bad.trace"
    path.write_text(f"# header\nLD 0x0\n\nST 0x40\n{bad}\nLD 0x80\n")
    with pytest.raises(TraceFormatError) as info:
        read_ldst(path)
    message = str(info.value)
    assert message.startswith(f"{path}:5: ")
    assert complaint in message


def test_a_missing_file_is_a_trace_format_error_naming_it(tmp_path):
    path = tmp_path / "nowhere.trace"
    with pytest.raises(TraceFormatError, match=re.escape(str(path))):
        read_ldst(path)


def test_an_npz_trace_reads_its_addr_and_is_write_arrays(tmp_path):
    path = tmp_path / "anchor.npz"
    addr = np.array([0, 64, 2**63 + 128], dtype=np.uint64)
    np.savez(path, addr=addr, is_write=np.array([True, False, True]))
    addresses, writes = read_ldst(path)
    assert addresses.dtype == np.uint64 and writes.dtype == np.uint8
    assert addresses.tolist() == addr.tolist()
    assert writes.tolist() == [1, 0, 1]


@pytest.mark.parametrize(
    "arrays,complaint",
    [
        (dict(addr=np.arange(3)), "expected arrays 'addr' and 'is_write'"),
        (dict(addr=np.arange(3), is_write=np.zeros(2)), "equal length"),
        (dict(addr=np.zeros((2, 2)), is_write=np.zeros((2, 2))), "1-D"),
    ],
)
def test_a_bad_npz_trace_is_a_trace_format_error_naming_it(tmp_path, arrays, complaint):
    path = tmp_path / "bad.npz"
    np.savez(path, **arrays)
    with pytest.raises(TraceFormatError, match=re.escape(complaint)) as info:
        read_ldst(path)
    assert str(path) in str(info.value)


def test_a_corrupt_npz_file_is_a_trace_format_error(tmp_path):
    path = tmp_path / "corrupt.npz"
    path.write_bytes(b"this is not a zip archive")
    with pytest.raises(TraceFormatError, match=re.escape(str(path))):
        read_ldst(path)


def test_a_truncated_npz_file_is_a_trace_format_error(tmp_path):
    whole = tmp_path / "whole.npz"
    np.savez_compressed(whole, addr=np.arange(10_000, dtype=np.uint64), is_write=np.zeros(10_000))
    cut = tmp_path / "cut.npz"
    cut.write_bytes(whole.read_bytes()[: whole.stat().st_size // 2])
    with pytest.raises(TraceFormatError, match=re.escape(f"{cut}: not a readable .npz trace")):
        read_ldst(cut)


def test_a_trace_that_is_not_utf8_is_a_trace_format_error_naming_the_line(tmp_path):
    path = tmp_path / "binary.trace"
    path.write_bytes(b"LD 0x40\nST 0x80\n\xff\xfe\n")
    with pytest.raises(
        TraceFormatError, match=re.escape(f"{path}:3:1: not UTF-8 text (byte 0xff)")
    ):
        read_ldst(path)


# ------------------------------------------------------------------ what int() would take
@pytest.mark.parametrize(
    "bad,complaint",
    [
        ("LD 0x\u0663", "'0x\u0663' is not an address"),  # an Arabic-Indic three
        ("LD \u0663\u0664", "'\u0663\u0664' is not an address"),
        ("LD \uff11", "'\uff11' is not an address"),  # a fullwidth one
        ("LD 0x+10", "'0x+10' is not an address"),
        ("LD 0x-10", "'0x-10' is not an address"),
        ("LD 0x1_0", "'0x1_0' is not an address"),
        ("LD 1_000", "'1_000' is not an address"),
        ("LD +16", "'+16' is not an address"),
        ("LD 0x", "'0x' is not an address"),
        ("LD 0x10\u00a0", "is not an address"),  # a no-break space is not a separator
        ("LD\u20030x10", "expected 'LD <address>'"),  # nor is an em space
        ("LD " + "9" * 5_000, "out of range"),  # int() refuses 4300+ digits
        ("LD 0x" + "f" * 17, "out of range"),
        ("LD -0x10", "out of range"),
    ],
)
def test_only_ascii_hex_or_decimal_addresses_are_accepted(tmp_path, bad, complaint):
    path = tmp_path / "bad.trace"
    path.write_text(f"LD 0x0\n{bad}\n", encoding="utf-8")
    with pytest.raises(TraceFormatError) as info:
        read_ldst(path)
    message = str(info.value)
    assert message.startswith(f"{path}:2: ") and complaint in message
    assert len(message) < len(str(path)) + 120  # a long token is quoted cut short


def test_leading_zeros_and_carriage_returns_are_fine(tmp_path):
    path = tmp_path / "t.trace"
    path.write_text("LD 0x" + "0" * 100 + "40\r\nST 00000000000000000000000128\r\n")
    assert read_ldst(path)[0].tolist() == [0x40, 128]


def test_lines_are_counted_as_editors_count_them(tmp_path):
    path = tmp_path / "t.trace"
    path.write_text("# a comment\u2028with a line separator\x0cand a form feed\nLD zz\n")
    with pytest.raises(TraceFormatError, match=re.escape(f"{path}:2: 'zz' is not an address")):
        read_ldst(path)


def test_a_trace_of_comments_and_blank_lines_has_no_requests(tmp_path):
    path = tmp_path / "comments.trace"
    path.write_text("# only a header\n\n   \n")
    with pytest.raises(TraceFormatError, match=re.escape(f"no requests in {path}")):
        read_ldst(path)


_REFERENCE = re.compile(r"(LD|ST)[ \t\r\f\v]+(?:0[xX]([0-9a-fA-F]+)|([0-9]+))", re.ASCII)
_PIECES = st.sampled_from(
    ["LD", "ST", "ld", " ", "\t", "\r", "\x0c", "\u2003", "\u2028", "\x85", "0x", "0X", "-", "+",
     "_", "#", "1", "9", "f", "A", "g", "\u0663", "\uff11", "0" * 30, "f" * 16, "9" * 20]
)  # fmt: skip
_LINES = st.lists(st.lists(_PIECES, max_size=8).map("".join), max_size=6)


def _expected(lines: list[str]) -> list[tuple[int, bool]] | None:
    """What a reader of Ramulator's grammar makes of ``lines``; None where it must refuse."""
    requests = []
    for line in lines:
        stripped = line.strip(" \t\r\f\v")
        if not stripped or stripped.startswith("#"):
            continue
        match = _REFERENCE.fullmatch(stripped)
        if match is None:
            return None
        op, hex_digits, decimal = match.groups()
        address = int(hex_digits, 16) if hex_digits else int(decimal)
        if address >= 1 << 64:
            return None
        requests.append((address, op == "ST"))
    return requests or None


@settings(max_examples=300, deadline=None)
@given(_LINES)
def test_any_text_is_read_as_ramulator_reads_it_or_is_a_trace_format_error(lines):
    expected = _expected(lines)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "fuzz.trace"
        path.write_text("\n".join(lines), encoding="utf-8")
        try:
            addresses, writes = read_ldst(path)
        except TraceFormatError as error:
            assert expected is None, error
            assert str(path) in str(error)
            return
    assert expected is not None
    assert list(zip(addresses.tolist(), writes.astype(bool).tolist(), strict=True)) == expected


_VALID_LINE = st.one_of(
    st.tuples(st.sampled_from(["LD", "ST"]), st.sampled_from([" ", "\t", "  ", " \t "]),
              st.integers(0, 2**64 - 1), st.sampled_from(["0x{:x}", "0X{:X}", "{:d}", "0x000{:x}"]),
              st.sampled_from(["", " ", "\r"])).map(
        lambda t: f"{t[0]}{t[1]}{t[3].format(t[2])}{t[4]}"),
    st.sampled_from(["", "   ", "# a comment", "  #LD 0x1 ST", "\r"]),
)  # fmt: skip
#: Mostly well-formed traces, now and then with one line of the fuzzer's in them.
_MOSTLY_VALID = st.lists(st.one_of(_VALID_LINE, _VALID_LINE, _VALID_LINE,
                                   st.lists(_PIECES, max_size=4).map("".join)),
                         max_size=12)  # fmt: skip


def _outcome(read, path: Path):
    try:
        addresses, writes = read(path)
    except TraceFormatError as error:
        return str(error)
    return addresses.tolist(), writes.tolist()


@settings(max_examples=300, deadline=None)
@given(st.one_of(_LINES, _MOSTLY_VALID), st.booleans())
def test_the_vectorised_reader_agrees_with_the_line_reader(lines, final_newline):
    """The same requests, or the same error (file, line and what is wrong)."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "trace.ldst"
        path.write_text("\n".join(lines) + ("\n" if final_newline else ""), encoding="utf-8")
        vectorised = ramulator._vectorised(path.read_bytes())
        by_line = _outcome(lambda p: ramulator._read_line_by_line(p.read_bytes(), p), path)
        assert _outcome(read_ldst, path) == by_line
        if vectorised is not None:  # it read them itself: what the line reader reads
            assert (vectorised[0].tolist(), vectorised[1].tolist()) == by_line


def test_the_vectorised_reader_reads_a_written_trace_itself(tmp_path):
    rng = np.random.default_rng(5)
    addresses = rng.integers(0, 2**64 - 1, 1000, dtype=np.uint64, endpoint=True)
    writes = rng.integers(0, 2, 1000).astype(np.uint8)
    path = tmp_path / "t.ldst"
    write_ldst(path, addresses, writes)
    read = ramulator._vectorised(path.read_bytes())
    assert read is not None
    assert np.array_equal(read[0], addresses) and np.array_equal(read[1], writes)


# ----------------------------------------------------------------- .npz files not to trust
def _npy(header: str, data: bytes = b"", version: tuple[int, int] = (1, 0)) -> bytes:
    """A .npy member with a header of our own making."""
    text = header.encode("latin1")
    size = struct.pack("<H" if version == (1, 0) else "<I", len(text))
    return b"\x93NUMPY" + bytes(version) + size + text + data


def _saved(array: np.ndarray) -> bytes:
    out = io.BytesIO()
    np.save(out, array, allow_pickle=True)
    return out.getvalue()


def _zip(path: Path, members: dict[str, bytes | str], method: int = zipfile.ZIP_STORED) -> Path:
    with zipfile.ZipFile(path, "w", method) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return path


_FLAGS = _saved(np.zeros(3, dtype=np.uint8))
_HUGE = "{'descr': '<u8', 'fortran_order': False, 'shape': (1099511627776,), }\n"


@pytest.mark.parametrize(
    "members,method,complaint",
    [
        ({"addr.txt": "1 2 3", "is_write.txt": "0 1 0"}, zipfile.ZIP_STORED,
         "expected arrays 'addr' and 'is_write', found none"),
        ({"addr.npy": "LD 0x40\nST 0x80\n", "is_write.npy": _FLAGS}, zipfile.ZIP_DEFLATED,
         "member 'addr.npy' is not a readable .npy array (the magic string is not correct"),
        ({"addr.npy": _npy("{'descr': '<i8', 'shape': (3,)} junk"), "is_write.npy": _FLAGS},
         zipfile.ZIP_STORED, "member 'addr.npy' is not a readable .npy array (Cannot parse"),
        ({"addr.npy": _npy("-" * 5_000 + "1"), "is_write.npy": _FLAGS}, zipfile.ZIP_STORED,
         "member 'addr.npy' is not a readable .npy array"),
        ({"addr.npy": _npy(" " * 20_000, version=(2, 0)), "is_write.npy": _FLAGS},
         zipfile.ZIP_STORED, "member 'addr.npy' is not a readable .npy array (Header info"),
        ({"addr.npy": _npy("{}", version=(3, 0)), "is_write.npy": _FLAGS}, zipfile.ZIP_STORED,
         "(format version 3.0; expected 1.0 or 2.0)"),
        ({"addr.npy": _npy(_HUGE, b"\0" * 24), "is_write.npy": _FLAGS}, zipfile.ZIP_STORED,
         "member 'addr.npy': its header claims (1099511627776,) elements of uint64 "
         "(8796093022208 B), but the member holds 24 B of data"),
        ({"addr.npy": _npy(_HUGE, b"\0" * 24), "is_write.npy": _FLAGS}, zipfile.ZIP_DEFLATED,
         "its header claims (1099511627776,) elements"),
        ({"addr.npy": _npy("{'descr': '|u1', 'fortran_order': False, 'shape': (-1, -3), }\n",
                           b"\0" * 3), "is_write.npy": _FLAGS}, zipfile.ZIP_STORED,
         "member 'addr.npy': its header claims the shape (-1, -3)"),
        ({"addr.npy": _saved(np.array([1, None, 3], dtype=object)), "is_write.npy": _FLAGS},
         zipfile.ZIP_STORED, "member 'addr.npy' holds Python objects (object)"),
        ({"addr.npy": _saved(np.zeros(3, dtype=[("a", "<u8")])), "is_write.npy": _FLAGS},
         zipfile.ZIP_STORED, "'addr' must hold non-negative integers, not [('a', '<u8')]"),
        ({"addr.npy": _saved(np.arange(3)), "is_write.npy": _saved(np.array(["a", "b", "c"]))},
         zipfile.ZIP_STORED, "'is_write' must hold 0 or 1, not <U1"),
        ({"addr.npy": _saved(np.uint64(5)), "is_write.npy": _saved(np.uint8(1))},
         zipfile.ZIP_STORED, "must be 1-D of equal length; they are () and ()"),
        ({"addr.npy": _saved(np.array([4, -8])), "is_write.npy": _saved(np.zeros(2, "u1"))},
         zipfile.ZIP_STORED, "'addr' must hold non-negative integers; entry 1 is -8"),
        ({"addr.npy": _saved(np.arange(3)), "is_write.npy": _FLAGS}, zipfile.ZIP_BZIP2,
         "member 'addr.npy' is compressed with method 12"),
    ],
)  # fmt: skip
def test_an_npz_numpy_would_trust_is_a_trace_format_error_naming_file_and_member(
    tmp_path, members, method, complaint
):
    path = _zip(tmp_path / "bad.npz", members, method)
    with pytest.raises(TraceFormatError) as info:
        read_ldst(path)
    message = str(info.value)
    assert message.startswith(f"{path}: ") and complaint in message
    assert "\n" not in message and len(message) < len(str(path)) + 200


def test_an_npy_file_named_npz_is_a_trace_format_error(tmp_path):
    np.save(tmp_path / "addr.npy", np.arange(3))
    path = tmp_path / "addr.npz"
    path.write_bytes((tmp_path / "addr.npy").read_bytes())
    with pytest.raises(TraceFormatError, match=re.escape(f"{path}: a single .npy array, not an")):
        read_ldst(path)


def test_an_npz_with_no_requests_is_a_trace_format_error(tmp_path):
    path = tmp_path / "empty.npz"
    np.savez(path, addr=np.zeros(0, dtype=np.uint64), is_write=np.zeros(0, dtype=np.uint8))
    with pytest.raises(TraceFormatError, match=re.escape(f"no requests in {path}")):
        read_ldst(path)


def test_an_npz_member_larger_than_the_free_memory_is_refused_before_loading(tmp_path, monkeypatch):
    path = tmp_path / "big.npz"
    np.savez(path, addr=np.arange(1000, dtype=np.uint64), is_write=np.zeros(1000, np.uint8))
    monkeypatch.setattr("ndpsim.trace.npz.available_bytes", lambda: 4096)
    with pytest.raises(TraceFormatError, match=re.escape(
        f"{path}: member 'addr.npy' needs 7.8 KiB, more than the 4.0 KiB of memory available"
    )):  # fmt: skip
        read_ldst(path)
