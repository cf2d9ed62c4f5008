"""Compiled functions chosen at run time by a code, registered by whoever defines them.

A compiled loop must sometimes call a decision that belongs to a policy (TOM's offload control,
SNDP's offload ratio): code the loop's modules do not import. A :class:`CompiledTable` holds
such functions; :meth:`CompiledTable.register` gives each a code, and the loop calls
``table.call(code, *args)``, which numba compiles into a chain of ``if code == k`` over every
function registered by then. One compilation serves them all, and it is cached on disk like
the rest (a function passed as an argument instead would miss numba's cache in every new
process: its type names the function's address).

The table's digest (the functions and the source of their modules) joins the cache stamp of
every compiled function whose module imports the table's, so code compiled with other functions
registered is never loaded. Functions register when their modules are imported, before the
first simulation; :meth:`CompiledTable.freeze` marks that point, and a registration after it is
refused instead of being silently left out of code already compiled.
"""

from __future__ import annotations

import hashlib
import inspect
from collections.abc import Callable
from pathlib import Path

from numba import njit
from numba.extending import overload

from ndpsim import numba_cache
from ndpsim.errors import ConfigError


class CompiledTable:
    """Functions of one signature, each called by its code; ``default`` answers any other
    code (a code whose function registered after the table was compiled cannot reach it)."""

    def __init__(self, what: str, default: Callable, module_file: str):
        self.what = what
        self.functions: list[Callable] = []
        self.names: list[str] = []
        self.frozen = False
        fallback = njit(default)
        table = self

        def call(code, *args):
            """``table.functions[code](*args)``, in compiled code."""
            raise NotImplementedError("called from compiled code only")

        @overload(call)
        def _call(code, *args):
            table.frozen = True  # compiled: what registers later is not in the chain
            chain = _chain(tuple(table.functions), 0, fallback)

            def dispatch(code, *args):
                return chain(code, *args)

            return dispatch

        self.call = call
        numba_cache.add_stamp(Path(module_file).resolve(), self.digest)

    def register(self, function: Callable, name: str) -> int:
        """Add ``function`` (plain Python, compiled here) and return its code."""
        if self.frozen:
            raise ConfigError(
                f"{self.what} {name!r} registered after the simulator was compiled; import its "
                "module before the first simulation"
            )
        if name in self.names:
            raise ConfigError(f"{self.what} {name!r} is registered twice")
        self.functions.append(njit(function))
        self.names.append(name)
        return len(self.functions) - 1

    def freeze(self) -> None:
        """No more registrations: the compiled loop is about to be built (or loaded)."""
        self.frozen = True

    def digest(self) -> str:
        """The registered functions, in order, and the source of their modules."""
        digest = hashlib.sha256()
        for name, function in zip(self.names, self.functions, strict=True):
            source = Path(inspect.getfile(function.py_func)).read_bytes()
            digest.update(name.encode() + b"\0" + hashlib.sha256(source).digest())
        return digest.hexdigest()


def _chain(functions: tuple, k: int, fallback):
    """``if code == k: functions[k](*args)``, then the next, then ``fallback(*args)``."""
    if k == len(functions):

        def otherwise(code, *args):
            return fallback(*args)

        return njit(otherwise)
    function, rest = functions[k], _chain(functions, k + 1, fallback)

    def step(code, *args):
        if code == k:
            return function(*args)
        return rest(code, *args)

    return njit(step)
