"""Where each key of a TOML file is set: its line, so a config error can point at it.

``tomllib`` returns plain dicts and forgets positions. Config errors are found later, by
pydantic, on the merged data of a preset and its bases; to say *which file and line* set the
offending key we scan the text again. The scanner tracks strings (basic, literal, multi-line),
comments and nested values (arrays and inline tables over several lines), so text inside them is
never taken for a key. It only runs on files ``tomllib`` has already accepted.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from ndpsim.errors import ConfigError
from ndpsim.textfile import read_text

_BARE = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")


@dataclass(frozen=True, slots=True)
class KeyLines:
    """The 1-based line of every table header and every ``key = value`` of one file, by dotted
    path (array-of-tables headers by their first occurrence), and the comment that ends that
    line, where there is one (presets cite their sources there)."""

    lines: dict[tuple[str, ...], int]
    headers: frozenset[tuple[str, ...]]
    comments: dict[tuple[str, ...], str]

    def find(self, path: tuple[str, ...]) -> int | None:
        """The line that sets ``path``: the key itself, or else the ``key = {...}`` or
        ``key = [...]`` line of an inline value that contains it (keys inside inline values are
        not indexed). A table header does not stand for keys it lacks."""
        if path in self.lines:
            return self.lines[path]
        for n in range(len(path) - 1, 0, -1):
            prefix = path[:n]
            if prefix in self.lines and prefix not in self.headers:
                return self.lines[prefix]
        return None


def key_lines(text: str) -> KeyLines:
    """Index the keys of a TOML document (see :class:`KeyLines`)."""
    lines: dict[tuple[str, ...], int] = {}
    headers: set[tuple[str, ...]] = set()
    comments: dict[tuple[str, ...], str] = {}
    last: tuple[str, ...] = ()  # the key or header most recently found
    table: tuple[str, ...] = ()
    line = 1
    depth = 0  # open brackets and braces of the current value
    at_line_start = True
    i, n = 0, len(text)
    while i < n:
        if at_line_start and depth == 0:
            at_line_start = False
            i = _skip_blanks(text, i)
            if i >= n:
                break
            if text[i] == "[":
                double = text.startswith("[[", i)
                path, i = _key_path(text, i + (2 if double else 1))
                i += 2 if double else 1  # the closing bracket(s)
                table = last = path
                lines.setdefault(path, line)
                headers.add(path)
                continue
            if text[i] in _BARE or text[i] in "\"'":
                path, i = _key_path(text, i)
                i += 1  # the '='
                last = table + path
                lines.setdefault(last, line)
                continue
        c = text[i]
        if c == "#":
            end = text.find("\n", i)
            end = n if end < 0 else end
            if last and lines[last] == line:
                comments.setdefault(last, text[i + 1 : end].strip())
            i = end
            continue
        if c in "\"'":
            end = _string_end(text, i)
            line += text.count("\n", i, end)
            i = end
            continue
        if c in "[{":
            depth += 1
        elif c in "]}":
            depth -= 1
        elif c == "\n":
            line += 1
            at_line_start = True
        i += 1
    return KeyLines(lines, frozenset(headers), comments)


def file_key_lines(path: Path | str) -> KeyLines:
    return key_lines(read_text(Path(path), ConfigError))


def _skip_blanks(text: str, i: int) -> int:
    while i < len(text) and text[i] in " \t":
        i += 1
    return i


def _key_path(text: str, i: int) -> tuple[tuple[str, ...], int]:
    """Read a dotted key starting at ``i``; returns its parts and the index of the character
    that ends it (``=`` or ``]``)."""
    parts = []
    while True:
        i = _skip_blanks(text, i)
        if i < len(text) and text[i] in "\"'":
            end = _string_end(text, i)
            parts.append(_quoted_key(text[i:end]))
            i = end
        else:
            start = i
            while i < len(text) and text[i] in _BARE:
                i += 1
            parts.append(text[start:i])
        i = _skip_blanks(text, i)
        if i < len(text) and text[i] == ".":
            i += 1
            continue
        return tuple(parts), i


def _string_end(text: str, i: int) -> int:
    """The index just past the string (basic, literal, or multi-line of either) opening at
    ``i``; the end of the text if the string is not closed."""
    quote, n = text[i], len(text)
    escapes = quote == '"'
    if text.startswith(quote * 3, i):
        j = i + 3
        while j < n and not text.startswith(quote * 3, j):
            j += 2 if escapes and text[j] == "\\" else 1
        end = min(j + 3, n)
        while end < j + 5 and text.startswith(quote, end):  # the content may end in two quotes
            end += 1
        return end
    j = i + 1
    while j < n and text[j] != quote:
        j += 2 if escapes and text[j] == "\\" else 1
    return min(j + 1, n)


def _quoted_key(raw: str) -> str:
    """A quoted key's name: a literal key as written, a basic one with its escapes decoded
    (JSON's escapes are TOML's but for ``\\e`` and ``\\U``, kept as written)."""
    if raw[0] == "'":
        return raw[1:-1]
    try:
        return json.loads(raw)
    except ValueError:
        return raw[1:-1]
