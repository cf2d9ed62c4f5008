"""Compiled functions chosen at run time by a code, registered by whoever defines them.

A compiled loop must sometimes call a decision that belongs to a policy (TOM's offload control,
SNDP's offload ratio): code the loop's modules do not import. A :class:`CompiledTable` holds
such functions; :meth:`CompiledTable.register` gives each a code, and the loop calls
``table.call(code, *args)``, which numba compiles into a chain of ``if code == k`` over every
function registered by then. One compilation serves them all, and it is cached on disk like
the rest (a function passed as an argument instead would miss numba's cache in every new
process: its type names the function's address).

What the chain holds must not depend on what a process happened to import first: a cached
chain is reused by every later process. So a table names the packages whose modules register
its functions (``providers``); before the chain is compiled or its stamp taken, every module of
the providers and every ``ndpsim.plugins`` entry point is imported, and the table is closed. The
stamp of ``table.call`` (which joins the stamp of every compiled function that calls it,
:mod:`ndpsim.numba_cache`) is the stamps of the functions registered: an edit to one of them
recompiles the chain and its callers, an edit elsewhere in a policy's module does not. A
function's code is a hash of its name, the same in every process. A registration after the
table was closed is refused instead of being silently left out of code already compiled.
"""

from __future__ import annotations

import hashlib
import importlib
import pkgutil
from collections.abc import Callable

from numba import njit
from numba.extending import overload

from ndpsim.errors import ConfigError
from ndpsim.numba_cache import compiled, function_stamp
from ndpsim.registry import load_plugins


class CompiledTable:
    """Functions of one signature, each called by its code; ``default`` answers any other
    code. ``providers`` are the packages whose modules register the functions (plug-ins may
    too)."""

    def __init__(self, what: str, default: Callable, providers: tuple[str, ...]):
        self.what = what
        self.providers = providers
        self.functions: dict[int, Callable] = {}  # by code
        self.names: dict[str, int] = {}
        self.frozen = False
        self.default = compiled(default, allocates=True)
        table = self

        def call(code, *args):
            """``functions[code](*args)`` (``default`` for another code); compiled code gets
            the chain of :func:`_chain` instead."""
            return table.functions.get(code, table.default)(*args)

        @overload(call)
        def _call(code, *args):
            table.close()
            chain = _chain(tuple(sorted(table.functions.items())), 0, table.default)

            def dispatch(code, *args):
                return chain(code, *args)

            return dispatch

        call.__ndpsim_stamp__ = self.stamp
        self.call = call

    def register(self, function: Callable, name: str) -> int:
        """Add ``function`` (plain Python, compiled here, cached on its own) and return its
        code."""
        if self.frozen:
            raise ConfigError(
                f"{self.what} {name!r} registered after the simulator was compiled; import its "
                "module before the first simulation"
            )
        code = int.from_bytes(hashlib.sha256(name.encode()).digest()[:4], "little") >> 1
        if name in self.names or code in self.functions:
            raise ConfigError(f"{self.what} {name!r} is registered twice (or its code clashes)")
        self.functions[code] = compiled(function, allocates=True)
        self.names[name] = code
        return code

    def load(self) -> None:
        """Import every module of the providers and every plug-in: all that may register."""
        load_plugins()
        for package in self.providers:
            for info in pkgutil.iter_modules(importlib.import_module(package).__path__):
                importlib.import_module(f"{package}.{info.name}")

    def close(self) -> None:
        """Load everything that may register, and take no registration afterwards: what is
        registered now is what compiled code holds."""
        if not self.frozen:
            self.load()
            self.frozen = True

    def stamp(self) -> str:
        """The stamps of the default and of every registered function, by code (closes the
        table)."""
        self.close()
        digest = hashlib.sha256(function_stamp(self.default.py_func).encode())
        for code, function in sorted(self.functions.items()):
            digest.update(f"\0{code}:{function_stamp(function.py_func)}".encode())
        return digest.hexdigest()


def _chain(functions: tuple, k: int, fallback):
    """For ``(code, function)`` pairs: ``if code == c: function(*args)``, then the next, then
    ``fallback(*args)``."""
    if k == len(functions):

        def otherwise(code, *args):
            return fallback(*args)

        return njit(otherwise)
    (known, function), rest = functions[k], _chain(functions, k + 1, fallback)

    def step(code, *args):
        if code == known:
            return function(*args)
        return rest(code, *args)

    return njit(step)
