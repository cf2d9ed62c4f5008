"""Points where compiled code lets an extension act, the extension chosen by its state's type.

A component that others extend (the SIMT core, which TOM's and SNDP's offload execution and
MPU's hybrid pipeline extend) takes an ``extension`` argument it never reads and calls a
:class:`Hook` at each point an extension may act: ``hook.call(extension, *args)``. What runs is
chosen when numba compiles the caller, by the type of ``extension``: the function registered for
the extension's state (a named tuple, passed by reference: :mod:`ndpsim.engine.reference`) or,
for ``None`` (a system with no extension), the hook's default, which does what the component
does on its own (an extension that does the same at some point registers the default there:
forgetting a point is an error, not a silent default). The choice costs nothing at run time,
and the component's module never imports its extensions.

Which functions a hook holds must not depend on what a process happened to import first: the
caller's compiled code is cached and reused by later processes. So a hook names the packages
whose modules register implementations (its ``provider``, a :class:`~ndpsim.registry.Registry`'s
packages); before the first compilation, or the first stamp, they are imported and the hook
takes no more. The stamp of ``hook.call`` (joined into every caller's,
:mod:`ndpsim.numba_cache`) is the stamps of the default and of every implementation, so an edit
to one recompiles its callers and nothing else.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable

from numba import types
from numba.extending import overload

from ndpsim.errors import ConfigError
from ndpsim.numba_cache import compiled, function_stamp
from ndpsim.registry import Registry


class Hook:
    """One point of a component where an extension may act: ``default`` for no extension (its
    ``extension`` argument is None), else the function registered for the extension's state
    class. The modules of ``provider`` (a package) register implementations."""

    def __init__(self, what: str, default: Callable, provider: str | tuple[str, ...] | None):
        self.what = what
        self.default = compiled(default, inline=True)
        #: by the extension state class's name; the provider's modules are imported (and the
        #: plug-ins) before the first lookup
        self.implementations: Registry[Callable] = Registry(f"implementation of {what}",
                                                            provider)  # fmt: skip
        self.frozen = False  # once compiled code holds the choice
        hook = self

        def call(extension, *args):
            """What the hook does for ``extension`` (Python callers get the same choice)."""
            state = getattr(extension, "state", extension)  # a Reference's named tuple
            owner = None if extension is None else type(state).__name__
            return hook.implementation(owner)(extension, *args)

        @overload(call)
        def _call(extension, *args):
            if isinstance(extension, (types.NoneType, types.Omitted)):
                chosen = hook.implementation(None)
            else:
                owner = getattr(extension, "owner", None)  # a Reference's state class
                if owner is None:
                    raise TypeError(f"{hook.what}: an extension is passed by reference, not as "
                                    f"{extension}")  # fmt: skip
                chosen = hook.implementation(owner)

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
            return self.implementations.register(name)(compiled(function, inline=True))

        return register

    def implementation(self, owner: str | None) -> Callable:
        """What runs for an extension whose state class is ``owner`` (None: no extension)."""
        chosen = self.default if owner is None else self.implementations.get(owner)
        self.frozen = True
        return chosen

    def stamp(self) -> str:
        """The stamps of the default and of every implementation."""
        names = self.implementations.names()
        self.frozen = True
        digest = hashlib.sha256(function_stamp(self.default.py_func).encode())
        for name in names:
            function = self.implementations.get(name)
            digest.update(f"\0{name}:{function_stamp(function.py_func)}".encode())
        return digest.hexdigest()
