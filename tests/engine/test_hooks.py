"""Extension points chosen at compile time by the extension's type: the default for None, the
registered implementation for a state, an error naming the registered for any other, and no
registration once compiled code holds the choice."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import pytest

from ndpsim.engine.hooks import Hook
from ndpsim.engine.reference import reference
from ndpsim.errors import ConfigError
from ndpsim.numba_cache import compiled, function_stamp


class Bumps(NamedTuple):
    count: np.ndarray


class Stranger(NamedTuple):
    count: np.ndarray


def _on_its_own(ext, values, k):
    return values[k]


HOOK = Hook("the test hook", _on_its_own, None)
_hook = HOOK.call


@HOOK.implement(Bumps)
def _bumping(ext, values, k):
    ext.count[0] += 1
    return values[k] + 100


@compiled(entry=True)
def _total(values, ext):
    total = 0
    for k in range(values.shape[0]):
        total += _hook(ext, values, k)
    return total


def test_none_gets_the_default_and_a_registered_state_its_implementation():
    values = np.arange(5, dtype=np.int64)
    assert _total(values, None) == 10
    bumps = Bumps(np.zeros(1, dtype=np.int64))
    assert _total(values, reference(bumps)) == 510
    assert bumps.count[0] == 5


def test_an_extension_nobody_implemented_is_named_with_the_registered():
    with pytest.raises(ConfigError, match="unknown implementation of the test hook 'Stranger'; "
                       "registered: Bumps"):  # fmt: skip
        HOOK.implementation("Stranger")


def test_python_callers_get_the_same_choice():
    values = np.arange(3, dtype=np.int64)
    assert _hook(None, values, 2) == 2
    bumps = Bumps(np.zeros(1, dtype=np.int64))
    assert _hook(reference(bumps), values, 2) == 102 and bumps.count[0] == 1


def test_the_stamp_covers_the_implementations_and_registration_then_closes():
    assert _hook.__ndpsim_stamp__() == HOOK.stamp()
    assert function_stamp(_total.py_func)  # callers can be stamped
    with pytest.raises(ConfigError, match="registered after the simulator was compiled"):
        HOOK.implement(Stranger)(_on_its_own)
