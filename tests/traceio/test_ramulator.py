"""Ramulator LD/ST traces: exact write/read round trips (64-bit addresses included), the .npz
form, comments and blank lines, and malformed input reported as TraceFormatError at file:line."""

from __future__ import annotations

import re
import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ndpsim.errors import TraceFormatError
from ndpsim.traceio.ramulator import read_ldst, write_ldst

_REQUESTS = st.lists(st.tuples(st.integers(0, 2**64 - 1), st.booleans()), max_size=50)


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


def test_an_empty_trace_round_trips(tmp_path):
    path = tmp_path / "empty.trace"
    write_ldst(path, np.array([], dtype=np.uint64), np.array([], dtype=bool))
    addresses, writes = read_ldst(path)
    assert addresses.shape == writes.shape == (0,)
    assert addresses.dtype == np.uint64 and writes.dtype == np.uint8


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
