"""A component's named tuple handed to compiled code as one pointer."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from typing import NamedTuple

import numpy as np
import pytest
from numba.core.caching import NullCache

from ndpsim.engine.reference import Reference, reference, references
from ndpsim.numba_cache import compiled


class Counters(NamedTuple):
    hits: np.ndarray  # int64[n]
    grid: np.ndarray  # int64[rows, columns]
    seen: np.ndarray  # bool[n]
    rate: np.ndarray  # float64[1]
    width: int


class Outer(NamedTuple):
    counters: Counters
    scratch: np.ndarray
    page: tuple


@compiled
def _count(c, i):
    """Reads and writes through a reference, as a component's compiled code does."""
    c.hits[i] += 1
    c.grid[i % c.grid.shape[0], i % c.width] += c.hits[i]
    c.seen[i] = True
    c.rate[0] += 0.5
    return c.hits.shape[0]


@compiled(inline=True)
def _bump(c, i):
    c.hits[i] += 10


@compiled(entry=True)  # Python calls it: its whole module is optimised
def _calls_inlined(c, i):
    _bump(c, i)
    _bump(c, i + 1)


def _counters(n: int = 4) -> Counters:
    return Counters(np.zeros(n, np.int64), np.zeros((2, 3), np.int64), np.zeros(n, np.bool_),
                    np.zeros(1), 3)  # fmt: skip


def test_compiled_code_reads_and_writes_the_named_tuples_own_arrays():
    state = _counters()
    ref = reference(state)
    assert _count(ref, 1) == 4 and _count(ref, 1) == 4
    assert state.hits.tolist() == [0, 2, 0, 0]
    assert state.grid[1, 1] == 3  # 1 + 2
    assert state.seen.tolist() == [False, True, False, False]
    assert state.rate[0] == 1.0
    assert ref.state is state


def test_references_of_the_same_layout_share_one_compilation():
    _count(reference(_counters()), 0)
    before = len(_count.signatures)
    _count(reference(_counters(9)), 0)  # other sizes, same types
    assert len(_count.signatures) == before
    other = _counters()._replace(hits=np.zeros(4, np.int32))
    _count(reference(other), 0)  # another element type: another type, compiled for it
    assert len(_count.signatures) == before + 1


def test_a_system_state_passes_its_components_by_reference_and_the_rest_as_they_are():
    outer = Outer(_counters(), np.zeros(3), (np.zeros(2, np.int64), 5, 12))
    arguments = references(outer)
    assert isinstance(arguments[0], Reference) and arguments[0].state is outer.counters
    assert arguments[1] is outer.scratch and arguments[2] is outer.page


def test_only_a_named_tuple_has_a_reference():
    with pytest.raises(TypeError, match="named tuple"):
        reference((np.zeros(2), np.zeros(2)))


def _symbol(definition: str) -> str:
    """The name an LLVM ``define`` line gives its function (after its attributes)."""
    return re.search(r"@([^(\s]+)\(", definition).group(1)


def test_an_inlined_helper_is_inlined_into_its_compiled_callers():
    # compiled here: a function loaded from the cache compiles none of its callees
    _bump._cache = _calls_inlined._cache = NullCache()
    state = _counters()
    _calls_inlined(reference(state), 0)
    assert state.hits.tolist() == [10, 10, 0, 0]
    assert "alwaysinline" in _bump.inspect_llvm(_bump.signatures[0])
    module = _calls_inlined.inspect_llvm(_calls_inlined.signatures[0])
    body = next(
        part
        for part in module.split("\ndefine ")[1:]
        if "_calls_inlined" in _symbol(part) and "cpython" not in _symbol(part)
    )
    calls = [line for line in body.split("\n}\n")[0].splitlines() if " call " in line]
    assert not [line for line in calls if "_bump" in line]


ELSEWHERE_MODULE = """
from typing import NamedTuple
import numpy as np

class Elsewhere(NamedTuple):
    values: np.ndarray
"""
STATE_ELSEWHERE = """
import numpy as np
from elsewhere_state import Elsewhere
from ndpsim.engine.reference import reference

reference(Elsewhere(np.zeros(2)))
"""
STATE_HERE = """
from ndpsim.engine.pool import record_pool
from ndpsim.engine.reference import reference

reference(record_pool(4, 2))
print("ok")
"""


def test_a_class_another_process_cannot_import_does_not_break_its_references(tmp_path):
    """Each class's block is written by a compiled function of its own: a cache index naming
    a class only some processes can import (a script's, a test's) would otherwise fail to load
    in all the others."""
    env = {**os.environ, "NDPSIM_CACHE_DIR": str(tmp_path / "cache")}
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    (tmp_path / "a" / "elsewhere_state.py").write_text(ELSEWHERE_MODULE)
    (tmp_path / "a" / "script.py").write_text(STATE_ELSEWHERE)
    (tmp_path / "b" / "script.py").write_text(STATE_HERE)
    for folder in ("a", "b"):
        out = subprocess.run([sys.executable, str(tmp_path / folder / "script.py")],
                             capture_output=True, text=True, env=env)  # fmt: skip
        assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"
