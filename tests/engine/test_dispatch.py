"""Compiled functions registered in a table and chosen by code inside compiled code."""

from __future__ import annotations

import sys

import pytest
from numba import njit

from ndpsim import numba_cache
from ndpsim.engine.dispatch import CompiledTable
from ndpsim.errors import ConfigError


def _none(x, y):
    return -1


def _twice(x, y):
    return 2 * x + y


def _shifted(x, y):
    return x + 100 + y


PROVIDERS = ("tests.engine",)  # this module registers its own functions


def test_compiled_code_calls_the_function_of_its_code_and_the_default_for_others(tmp_path):
    table = CompiledTable("test decision", _none, str(tmp_path / "owner.py"), PROVIDERS)
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


def test_a_name_taken_twice_or_a_function_outside_the_providers_is_refused(tmp_path):
    table = CompiledTable("test decision", _none, str(tmp_path / "owner.py"), PROVIDERS)
    table.register(_twice, "twice")
    with pytest.raises(ConfigError, match="'twice' is registered twice"):
        table.register(_shifted, "twice")
    elsewhere = CompiledTable("test decision", _none, str(tmp_path / "owner.py"), ("json",))
    with pytest.raises(ConfigError, match="must live in a module of json"):
        elsewhere.register(_twice, "twice")  # the stamp would not cover its source


def test_the_digest_is_the_providers_source_and_joins_the_stamp_of_importing_code(
    tmp_path, monkeypatch
):
    root = tmp_path / "pkg"
    (root / "policies").mkdir(parents=True)
    (root / "__init__.py").write_text("")
    (root / "owner.py").write_text("X = 1\n")
    (root / "user.py").write_text("from pkg import owner\n")
    (root / "other.py").write_text("Y = 2\n")
    (root / "policies" / "__init__.py").write_text("")
    (root / "policies" / "one.py").write_text("def first(x, y):\n    return x\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(numba_cache, "_EXTRA_STAMPS", [])
    table = CompiledTable("test decision", _none, str(root / "owner.py"), ("pkg.policies",))
    before = numba_cache._source_stamp(root / "user.py", "pkg", root, "own")
    assert before[-1] == table.digest()
    from pkg.policies.one import first

    table.register(first, "first")  # what a process registered does not move the stamp
    assert numba_cache._source_stamp(root / "user.py", "pkg", root, "own") == before
    # its source does
    (root / "policies" / "one.py").write_text("def first(x, y):\n    return y + 1\n")
    assert numba_cache._source_stamp(root / "user.py", "pkg", root, "own") != before
    for name in [m for m in sys.modules if m == "pkg" or m.startswith("pkg.")]:
        del sys.modules[name]  # the next test's package of that name is another
    assert numba_cache._source_stamp(root / "other.py", "pkg", root, "own") == (
        "import-closure",
        "own",
    )
