"""Compiled functions registered in a table and chosen by code inside compiled code."""

from __future__ import annotations

import sys

import pytest
from numba import njit

from ndpsim.engine.dispatch import CompiledTable
from ndpsim.errors import ConfigError
from ndpsim.numba_cache import function_stamp, stamp_value


def _none(x, y):
    return -1


def _twice(x, y):
    return 2 * x + y


def _shifted(x, y):
    return x + 100 + y


PROVIDERS = ("tests.engine",)  # this package's modules register their own functions


def test_compiled_code_calls_the_function_of_its_code_and_the_default_for_others():
    table = CompiledTable("test decision", _none, PROVIDERS)
    twice, shifted = table.register(_twice, "twice"), table.register(_shifted, "shifted")
    call = table.call

    @njit
    def total(code, n):
        s = 0
        for i in range(n):
            s += call(code, i, 1)
        return s

    assert total(twice, 4) == 2 * 6 + 4
    assert total(shifted, 4) == 6 + 400 + 4
    assert total(7, 4) == -4  # a code nothing registered
    assert table.call(twice, 3, 1) == 7 and table.call(7, 3, 1) == -1  # the same from Python
    with pytest.raises(ConfigError, match="registered after the simulator was compiled"):
        table.register(_none, "late")  # compiled: it could not be reached


def test_a_name_taken_twice_is_refused():
    table = CompiledTable("test decision", _none, PROVIDERS)
    table.register(_twice, "twice")
    with pytest.raises(ConfigError, match="'twice' is registered twice"):
        table.register(_shifted, "twice")


def test_the_stamp_is_the_registered_functions_and_closes_the_table(tmp_path, monkeypatch):
    root = tmp_path / "stamped_pkg"
    root.mkdir()
    (root / "__init__.py").write_text("")
    (root / "one.py").write_text("def first(x, y):\n    return x\n\n\ndef unused():\n"
                                 "    return 0\n")  # fmt: skip
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        from stamped_pkg.one import first

        table = CompiledTable("test decision", _none, ("stamped_pkg",))
        table.register(first, "first")
        call = table.call

        @njit
        def caller(code):
            return call(code, 1, 2)

        stamp = stamp_value(call)
        assert table.frozen  # a stamp taken is a chain promised: nothing registers later
        with pytest.raises(ConfigError, match="registered after"):
            table.register(_twice, "twice")
        assert stamp == stamp_value(call)
        # a caller's stamp covers the chain; another table with an edited decision differs
        caller_stamp = function_stamp(caller.py_func)
        other = CompiledTable("test decision", _none, ("stamped_pkg",))
        other.register(lambda x, y: y, "first")
        assert stamp_value(other.call) != stamp
        assert caller_stamp == function_stamp(caller.py_func)
    finally:
        for name in [m for m in sys.modules if m.split(".")[0] == "stamped_pkg"]:
            del sys.modules[name]
