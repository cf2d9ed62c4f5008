"""Reading users' text files: what cannot be read or decoded is the caller's own error, naming
the file and, for bad bytes, the line and column of the first one."""

from __future__ import annotations

import re

import pytest

from ndpsim.errors import ConfigError, PTXSyntaxError
from ndpsim.frontend.parser import parse_ptx_file
from ndpsim.textfile import read_text


def test_utf8_text_is_returned_whole(tmp_path):
    path = tmp_path / "ok.txt"
    path.write_text("ünïcode\nlines\n", encoding="utf-8")
    assert read_text(path, ConfigError) == "ünïcode\nlines\n"


@pytest.mark.parametrize(
    "data,where",
    [(b"\xff", "1:1"), (b"abc\ndef\xc3(", "2:4"), (b"one\ntwo\n\tthree \x80", "3:8")],
)
def test_the_first_undecodable_byte_is_located_by_line_and_column(tmp_path, data, where):
    path = tmp_path / "bad.txt"
    path.write_bytes(data)
    with pytest.raises(ConfigError, match=re.escape(f"{path}:{where}: not UTF-8 text")):
        read_text(path, ConfigError)


def test_an_unreadable_path_is_the_callers_error_naming_it(tmp_path):
    with pytest.raises(ConfigError, match=re.escape(f"{tmp_path}: cannot read")):
        read_text(tmp_path, ConfigError)  # a directory


def test_a_ptx_file_that_is_not_utf8_is_a_ptx_syntax_error(tmp_path):
    path = tmp_path / "kernel.ptx"
    path.write_bytes(b".version 7.0\n// caf\xe9\n")
    with pytest.raises(PTXSyntaxError, match=re.escape(f"{path}:2:7: not UTF-8 text (byte 0xe9)")):
        parse_ptx_file(path)
