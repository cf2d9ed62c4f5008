"""Points where compiled code lets an extension act, the extension chosen by its state's type.

A component that others extend (the SIMT core, which TOM's and SNDP's offload execution extends)
takes an ``extension`` argument it never reads and calls a :class:`Hook` at each point an
extension may act: ``hook.call(extension, *args)``. What runs is chosen when numba compiles the
caller, by the type of ``extension``: the function registered for the extension's state (a named
tuple, passed by reference: :mod:`ndpsim.engine.reference`) or, for ``None`` (a system with no
extension), the hook's default, which does what the component does on its own. The choice costs
nothing at run time, and the component's module never imports its extensions.

Which functions a hook holds must not depend on what a process happened to import first: the
caller's compiled code is cached and reused by later processes. So a hook names the packages
whose modules register implementations (``providers``); before the first compilation, or the
first stamp, they are imported and the hook is closed. The stamp of ``hook.call`` (joined into
every caller's, :mod:`ndpsim.numba_cache`) is the stamps of the default and of every
implementation, so an edit to one recompiles its callers and nothing else.
"""

from __future__ import annotations

import hashlib
import importlib
import pkgutil
from collections.abc import Callable

from numba import types
from numba.extending import overload

from ndpsim.errors import ConfigError
from ndpsim.numba_cache import compiled, function_stamp
from ndpsim.registry import load_plugins


class Hook:
    """One point of a component where an extension may act: ``default`` for no extension (its
    ``extension`` argument is None), else the function registered for the extension's state
    class. ``providers`` are the packages whose modules register implementations."""

    def __init__(self, what: str, default: Callable, providers: tuple[str, ...]):
        self.what = what
        self.providers = providers
        self.default = compiled(default, inline=True)
        self.implementations: dict[str, Callable] = {}  # by the state class's name
        self.frozen = False
        self._closing = False
        hook = self

        def call(extension, *args):
            """What the hook does for ``extension`` (Python callers get the same choice)."""
            return hook.implementation(type(extension).__name__, extension is None)(
                extension, *args
            )

        @overload(call)
        def _call(extension, *args):
            if isinstance(extension, (types.NoneType, types.Omitted)):
                chosen = hook.implementation("", True)
            else:
                owner = getattr(extension, "owner", None)  # a Reference's state class
                if owner is None:
                    raise TypeError(f"{hook.what}: an extension is passed by reference, not as "
                                    f"{extension}")  # fmt: skip
                chosen = hook.implementation(owner, False)

            def choose(extension, *args):
                return chosen(extension, *args)

            return choose

        call.__ndpsim_stamp__ = self.stamp
        self.call = call

    def implement(self, state_class: type) -> Callable[[Callable], Callable]:
        """Register the decorated function (plain Python, compiled here) as what the hook does
        for extensions whose state is a ``state_class``."""

        def register(function: Callable) -> Callable:
            name = state_class.__name__
            if self.frozen:
                raise ConfigError(f"{self.what}: an implementation for {name} registered "
                                  "after the simulator was compiled; import its module "
                                  "first")  # fmt: skip
            if name in self.implementations:
                raise ConfigError(f"{self.what} has two implementations for {name}")
            self.implementations[name] = compiled(function, inline=True)
            return self.implementations[name]

        return register

    def implementation(self, owner: str, none: bool) -> Callable:
        self.close()
        if none:
            return self.default
        if owner not in self.implementations:
            known = ", ".join(sorted(self.implementations))
            raise ConfigError(f"{self.what} has no implementation for an extension of state "
                              f"{owner}; registered: {known}")  # fmt: skip
        return self.implementations[owner]

    def close(self) -> None:
        """Import every module that may register (the providers' and the plug-ins'), and take
        no registration afterwards."""
        if self.frozen or self._closing:  # closing: a provider being imported looks it up
            return
        self._closing = True
        load_plugins()
        for package in self.providers:
            for info in pkgutil.iter_modules(importlib.import_module(package).__path__):
                importlib.import_module(f"{package}.{info.name}")
        self.frozen = True

    def stamp(self) -> str:
        """The stamps of the default and of every implementation (closes the hook)."""
        self.close()
        digest = hashlib.sha256(function_stamp(self.default.py_func).encode())
        for name, function in sorted(self.implementations.items()):
            digest.update(f"\0{name}:{function_stamp(function.py_func)}".encode())
        return digest.hexdigest()
