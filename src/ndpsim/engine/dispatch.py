"""Compiled functions chosen at run time by a code, registered by whoever defines them.

A compiled loop must sometimes call a decision that belongs to a policy (TOM's offload control,
SNDP's offload ratio): code the loop's modules do not import. A :class:`CompiledTable` holds
such functions; :meth:`CompiledTable.register` gives each a code, and the loop calls
``table.call(code, *args)``, which numba compiles into a chain of ``if code == k`` over every
function registered by then. One compilation serves them all, and it is cached on disk like
the rest (a function passed as an argument instead would miss numba's cache in every new
process: its type names the function's address).

What the chain holds must not depend on what a process happened to import first: numba reads
a function's cache stamp when the function is decorated, and a cached chain is reused by every
later process. So a table names the packages whose modules register its functions
(``providers``); compiling the chain first imports all of them and every ``ndpsim.plugins``
entry point, and the table's digest (the source of every provider module and plug-in, read
from the files) joins the cache stamp of every compiled function whose module imports the
table's. A function's code is a hash of its name, the same in every process. A registration
after the chain was compiled is refused instead of being silently left out of code already
compiled, and so is one from a module outside the providers and plug-ins, whose source the
stamp does not cover.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.metadata
import importlib.util
import inspect
import pkgutil
from collections.abc import Callable
from functools import cache
from pathlib import Path

from numba import njit
from numba.extending import overload

from ndpsim import numba_cache
from ndpsim.errors import ConfigError
from ndpsim.registry import PLUGIN_GROUP, load_plugins


class CompiledTable:
    """Functions of one signature, each called by its code; ``default`` answers any other
    code. ``providers`` are the packages whose modules register the functions (plug-ins may
    too)."""

    def __init__(self, what: str, default: Callable, module_file: str,
                 providers: tuple[str, ...]):  # fmt: skip
        self.what = what
        self.providers = providers
        self.functions: dict[int, Callable] = {}  # by code
        self.names: dict[str, int] = {}
        self.frozen = False
        self.default = njit(default)
        table = self

        def call(code, *args):
            """``functions[code](*args)`` (``default`` for another code); compiled code gets
            the chain of :func:`_chain` instead."""
            return table.functions.get(code, table.default)(*args)

        @overload(call)
        def _call(code, *args):
            table.load()
            table.frozen = True  # compiled: what registers later is not in the chain
            chain = _chain(tuple(sorted(table.functions.items())), 0, table.default)

            def dispatch(code, *args):
                return chain(code, *args)

            return dispatch

        self.call = call
        numba_cache.add_stamp(Path(module_file).resolve(), self.digest)

    def register(self, function: Callable, name: str) -> int:
        """Add ``function`` (plain Python, compiled here) and return its code. Only a module
        the digest covers may register: a function from anywhere else could be missing from a
        chain loaded from the cache, and its code would silently reach ``default``."""
        if self.frozen:
            raise ConfigError(
                f"{self.what} {name!r} registered after the simulator was compiled; import its "
                "module before the first simulation"
            )
        source = Path(inspect.getfile(function)).resolve()
        if source not in self._sources():
            raise ConfigError(
                f"{self.what} {name!r} is defined in {source}; it must live in a module of "
                f"{', '.join(self.providers)} or of an {PLUGIN_GROUP!r} entry point, whose "
                "source stamps the compiled simulator"
            )
        code = int.from_bytes(hashlib.sha256(name.encode()).digest()[:4], "little") >> 1
        if name in self.names or code in self.functions:
            raise ConfigError(f"{self.what} {name!r} is registered twice (or its code clashes)")
        self.functions[code] = njit(function)
        self.names[name] = code
        return code

    def load(self) -> None:
        """Import every module of the providers and every plug-in: all that may register."""
        load_plugins()
        for package in self.providers:
            for info in pkgutil.iter_modules(importlib.import_module(package).__path__):
                importlib.import_module(f"{package}.{info.name}")

    def _sources(self) -> list[Path]:
        """The files of every module that may register a function."""
        files: list[Path] = []
        for package in self.providers:
            spec = importlib.util.find_spec(package)
            for folder in spec.submodule_search_locations or ():
                files.extend(sorted(Path(folder).resolve().glob("*.py")))
        for entry in importlib.metadata.entry_points(group=PLUGIN_GROUP):
            spec = importlib.util.find_spec(entry.module)
            if spec is not None and spec.origin:
                files.append(Path(spec.origin).resolve())
        return files

    def digest(self) -> str:
        """The source of every module that may register a function, read from the files (each
        file hashed once per version: the stamp is read for every function decorated)."""
        digest = hashlib.sha256()
        for file in self._sources():
            stat = file.stat()
            digest.update(file.name.encode() + b"\0" + _file_sha(file, stat.st_mtime_ns,
                                                                  stat.st_size))  # fmt: skip
        return digest.hexdigest()


@cache
def _file_sha(path: Path, mtime_ns: int, size: int) -> bytes:
    return hashlib.sha256(path.read_bytes()).digest()


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
