"""Finding the line that sets a TOML key: headers, dotted and quoted keys, and values whose text
looks like keys (strings, comments, arrays and inline tables over several lines) never taken for
keys. The property test writes random documents, recording each key's line as it goes."""

from __future__ import annotations

import tomllib

from hypothesis import given
from hypothesis import strategies as st

from ndpsim.toml_lines import key_lines

DOCUMENT = """\
# a comment = not a key
title = "x = 1"   # trailing [comment]
path.to.leaf = 3

[sm]
count = 64
"quoted key" = 'it"s'
notes = \"\"\"
fake = 1
[fake]
\"\"\"
list = [
  1,  # two = 2
  "three = 3",
]
inline = { a = 1, b = { c = 2 } }

[[launch]]
grid = 1

[[launch]]
grid = 2

[l2 . "odd.name"]
ways = 16
literal = '''
x = 'y'
'''
after = true
"""


def test_each_key_and_header_is_found_on_its_line():
    keys = key_lines(DOCUMENT)
    tomllib.loads(DOCUMENT)  # the document is valid TOML
    assert keys.find(("title",)) == 2
    assert keys.find(("path", "to", "leaf")) == 3
    assert keys.find(("sm",)) == 5
    assert keys.find(("sm", "count")) == 6
    assert keys.find(("sm", "quoted key")) == 7
    assert keys.find(("sm", "notes")) == 8
    assert keys.find(("sm", "list")) == 12
    assert keys.find(("launch",)) == 18  # an array of tables: its first header
    assert keys.find(("launch", "grid")) == 19
    assert keys.find(("l2", "odd.name", "ways")) == 25
    assert keys.find(("l2", "odd.name", "literal")) == 26
    assert keys.find(("l2", "odd.name", "after")) == 29


def test_text_inside_values_and_comments_is_not_a_key():
    keys = key_lines(DOCUMENT)
    for fake in [("a",), ("fake",), ("sm", "fake"), ("sm", "two"), ("sm", "x"), ("x",)]:
        assert keys.find(fake) is None


def test_a_key_inside_an_inline_value_is_located_at_the_line_of_that_value():
    keys = key_lines(DOCUMENT)
    assert keys.find(("sm", "inline", "b", "c")) == 16
    assert keys.find(("sm", "list", "0")) == 12


def test_a_header_does_not_stand_for_the_keys_its_table_lacks():
    assert key_lines(DOCUMENT).find(("sm", "warps")) is None


# ----------------------------------------------------------------------- property test
_names = st.one_of(
    st.from_regex(r"[A-Za-z_][A-Za-z0-9_-]{0,6}", fullmatch=True),
    st.text(alphabet="abc =.#[]\"'\\", min_size=1, max_size=5),  # needs quoting
)
_tricky = st.sampled_from(
    ["k = 1", "[t]", "# c", "a\nb = 2\n[u]", "'", '"', "\\", "x'''y", 'x"""y', "{a = 1}"]
)
_scalars = st.one_of(st.integers(), st.booleans(), _tricky, st.text(max_size=8))


def _quote(text: str) -> str:
    """A TOML basic string (JSON's escapes would write astral characters as surrogate pairs)."""
    out = []
    for c in text:
        if c in '"\\':
            out.append("\\" + c)
        elif ord(c) < 0x20 or ord(c) == 0x7F:
            out.append(f"\\u{ord(c):04x}")
        else:
            out.append(c)
    return '"' + "".join(out) + '"'


def _key(name: str) -> str:
    bare = name and all(c.isalnum() or c in "_-" for c in name) and name.isascii()
    return name if bare else _quote(name)


def _literal_ok(v: str) -> bool:
    """Whether ``v`` can be written as a multi-line literal string."""
    printable = all(c in "\t\n" or (ord(c) >= 0x20 and ord(c) != 0x7F) for c in v)
    return printable and "'''" not in v and not v.endswith("'")


def _value(v, style: int) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if style == 1 and _literal_ok(v):
        return "'''\n" + v + "'''"  # multi-line literal (the first newline is dropped)
    if style == 2:
        return "[\n  " + _quote(v) + ",  # x = 1\n  [1, 2],\n]"
    if style == 3:
        return "{ inner = " + _quote(v) + " }"
    return _quote(v)


def _value_data(v, style: int):
    return {2: [v, [1, 2]], 3: {"inner": v}}.get(style, v)


@st.composite
def _documents(draw):
    """A TOML text, the data it holds, and the line of each key as written."""
    text, data, where = [], {}, {}

    def emit(path, name, v):
        style = draw(st.integers(0, 3)) if isinstance(v, str) else 0
        where[(*path, name)] = len(text) + 1
        chunk = f"{_key(name)} = {_value(v, style)}"
        text.extend(chunk.split("\n"))
        return _value_data(v, style)

    top = draw(st.dictionaries(_names, _scalars, max_size=4))
    for name, v in top.items():
        data[name] = emit((), name, v)
    tables = draw(st.dictionaries(_names, st.dictionaries(_names, _scalars, max_size=4),
                                  max_size=3))  # fmt: skip
    for table, body in tables.items():
        if table in data:
            continue
        text.append("")
        text.append(f"[{_key(table)}]  # [not.this]")
        where[(table,)] = len(text)
        data[table] = {name: emit((table,), name, v) for name, v in body.items()}
    return "\n".join(text) + "\n", data, where


@given(_documents())
def test_every_key_of_a_written_document_is_found_where_it_was_written(document):
    text, data, where = document
    assert tomllib.loads(text) == data  # the writer wrote what it meant to
    keys = key_lines(text)
    for path, line in where.items():
        assert keys.find(path) == line


def test_the_comment_ending_a_key_or_header_line_is_kept():
    keys = key_lines(DOCUMENT)
    assert keys.comments[("title",)] == "trailing [comment]"
    assert ("sm", "count") not in keys.comments
    assert ("sm", "list") not in keys.comments  # its comment is on a later line of its value
    text = '[l1]   # TOM Table 1\nways = 4 # "quoted" # twice\nname = "a # b"\n'
    keys = key_lines(text)
    assert keys.comments == {("l1",): "TOM Table 1", ("l1", "ways"): '"quoted" # twice'}
