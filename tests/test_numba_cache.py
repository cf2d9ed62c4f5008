"""numba's cache stamped with what each function reaches: an edit to a function recompiles it
and its callers, and nothing else (numba alone looks at the function's own file only)."""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from ndpsim import numba_cache
from ndpsim.numba_cache import StampError, compiled, function_stamp


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text))


CALLEE = """
    from ndpsim.numba_cache import compiled

    LIMIT = {limit}

    @compiled
    def value(x):
        return x + LIMIT

    @compiled
    def unrelated(x):
        return x * {factor}
"""
CALLER = """
    from ndpsim.numba_cache import compiled
    from pkg import callee as c

    @compiled
    def call(x):
        \"\"\"{doc}\"\"\"
        return c.value(x) * 2

    @compiled
    def alone(x):
        return x - 1
"""


def _package(root: Path, limit: int = 1, factor: int = 3, doc: str = "Twice.") -> None:
    _write(root / "pkg" / "__init__.py", "")
    _write(root / "pkg" / "callee.py", CALLEE.format(limit=limit, factor=factor))
    _write(root / "pkg" / "caller.py", CALLER.format(doc=doc))


def _stamps(root: Path) -> dict[str, str]:
    """The stamps of the package's functions, imported afresh from ``root``."""
    sys.path.insert(0, str(root))
    try:
        for name in [m for m in sys.modules if m.split(".")[0] == "pkg"]:
            del sys.modules[name]
        caller = importlib.import_module("pkg.caller")
        callee = importlib.import_module("pkg.callee")
        return {name: function_stamp(function.py_func) for name, function in (
            ("call", caller.call), ("alone", caller.alone), ("value", callee.value),
            ("unrelated", callee.unrelated))}  # fmt: skip
    finally:
        sys.path.remove(str(root))
        for name in [m for m in sys.modules if m.split(".")[0] == "pkg"]:
            del sys.modules[name]


def test_a_stamp_covers_the_code_the_constants_and_the_callees_a_function_reaches(tmp_path):
    _package(tmp_path / "a")
    _package(tmp_path / "b", limit=2)  # a constant the callee reads
    _package(tmp_path / "c", factor=4)  # another function of the callee's module
    _package(tmp_path / "d", doc="Twice the value.")  # a docstring
    a, b, c, d = (_stamps(tmp_path / x) for x in "abcd")
    assert b["value"] != a["value"] and b["call"] != a["call"]  # the caller follows its callee
    assert b["alone"] == a["alone"] and b["unrelated"] == a["unrelated"]
    assert c["unrelated"] != a["unrelated"]
    assert (c["value"], c["call"], c["alone"]) == (a["value"], a["call"], a["alone"])
    assert d == a  # neither a docstring nor a line number makes different machine code


def test_a_stamp_does_not_depend_on_where_the_code_is_installed(tmp_path):
    _package(tmp_path / "clone1")
    _package(tmp_path / "clone2")
    assert _stamps(tmp_path / "clone1") == _stamps(tmp_path / "clone2")


def _plain_helper():
    return 1


def _reads_plain_function():
    return _plain_helper()


def test_a_global_that_cannot_be_stamped_is_an_error_naming_the_function():
    with pytest.raises(StampError, match="_reads_plain_function reads _plain_helper"):
        function_stamp(_reads_plain_function)


def test_the_compile_options_are_part_of_the_stamp():
    def plain(x):
        return x

    def inlined(x):
        return x

    inlined.__qualname__ = plain.__qualname__  # the same code under the same name
    assert function_stamp(compiled(plain).py_func) != function_stamp(
        compiled(inline=True)(inlined).py_func
    )


def test_only_an_entry_optimises_its_whole_module_and_the_rest_compute_the_same():
    from numba.core.caching import NullCache

    @compiled
    def doubled(x):
        return 2 * x

    @compiled(entry=True)
    def doubled_plus_one(x):
        return doubled(x) + 1

    for dispatcher in (doubled, doubled_plus_one):
        dispatcher._cache = NullCache()  # compile here, whatever the cache holds
    assert doubled_plus_one(3) == 7 and doubled(3) == 6  # the callee runs on its own too

    def whole_module_pass(dispatcher):
        (overload,) = dispatcher.overloads.values()
        return "_optimize_final_module" not in vars(overload.library)  # numba's own pass

    assert whole_module_pass(doubled_plus_one) and not whole_module_pass(doubled)


def test_values_are_stamped_by_what_compiled_code_sees():
    stamp = numba_cache.stamp_value
    assert stamp(3) != stamp(3.0) and stamp((1, 2)) != stamp((2, 1))
    assert stamp(np.arange(3)) == stamp(np.arange(3)) != stamp(np.arange(4))
    assert stamp(np.int64) == "class:numpy.int64" and stamp(np.maximum).startswith("external:")


RUN = """
import json, sys
sys.path.insert(0, sys.argv[1])
from pkg import caller
print(json.dumps([caller.call(1), caller.alone(1), sum(caller.call.stats.cache_hits.values()),
                  sum(caller.alone.stats.cache_hits.values())]))
"""


def test_an_edit_recompiles_the_function_and_its_callers_and_nothing_else(tmp_path):
    """The caller's own file does not change; with numba's stamps it would load the old
    machine code, which holds the old callee, from its cache."""
    _package(tmp_path / "src")
    script = tmp_path / "run.py"
    script.write_text(RUN)

    def run() -> list:
        env = {**os.environ, "NDPSIM_CACHE_DIR": str(tmp_path / "cache")}
        out = subprocess.run([sys.executable, str(script), str(tmp_path / "src")],
                             capture_output=True, text=True, env=env)  # fmt: skip
        assert out.returncode == 0, out.stderr
        return json.loads(out.stdout)

    first = run()
    assert first[:2] == [4, 0]
    assert list((tmp_path / "cache" / "pkg" / "caller").glob("caller.call-*.nbi"))
    assert run()[2] == 1  # loaded from the cache
    _package(tmp_path / "src", limit=5)
    edited = run()
    assert edited[:3] == [12, 0, 0]  # recompiled with the new constant
    assert edited[3] == 1  # the function that reaches nothing edited: loaded


def test_a_directory_that_cannot_be_written_falls_back_to_a_temporary_one(tmp_path, monkeypatch):
    blocked = tmp_path / "blocked"
    blocked.write_text("a file, not a directory")
    monkeypatch.setenv("NDPSIM_CACHE_DIR", str(blocked / "cache"))

    @compiled
    def plus_one(x):
        return x + 1

    assert plus_one(1) == 2
    assert Path(plus_one.stats.cache_path).is_relative_to(numba_cache._fallback_root())


def test_the_cache_root_follows_the_environment(tmp_path, monkeypatch):
    monkeypatch.delenv("NDPSIM_CACHE_DIR", raising=False)
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path / "numba"))
    assert numba_cache.cache_root() == tmp_path / "numba"
    monkeypatch.setenv("NDPSIM_CACHE_DIR", str(tmp_path / "ours"))
    assert numba_cache.cache_root() == tmp_path / "ours"
    monkeypatch.delenv("NDPSIM_CACHE_DIR")
    monkeypatch.delenv("NUMBA_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    if sys.platform not in ("win32", "darwin"):
        assert numba_cache.cache_root() == tmp_path / "xdg" / "ndpsim" / "numba"
