"""A named collection of registered components, filled by the modules of one package.

Each family of pluggable parts (compiler passes, address mappings, offload schemes, epoch
controllers) keeps one :class:`Registry`. Its shipped members are the modules of a package:
every module there registers its member when imported, and the registry imports them all on
first use, so adding a member is one file with one registration line and nothing else to
edit. A member defined
elsewhere (a researcher's own module, a test's temporary one) registers the same way when
imported, and an installed package's modules are imported through the ``ndpsim.plugins``
entry-point group before the first lookup.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import pkgutil
from collections.abc import Callable, Iterator
from typing import Generic, TypeVar

from ndpsim.errors import ConfigError

T = TypeVar("T")

#: The entry-point group through which an installed package makes its members known: each
#: entry point names a module that registers members when imported.
PLUGIN_GROUP = "ndpsim.plugins"
_plugins_loaded = False


def load_plugins() -> None:
    """Import every module of the ``ndpsim.plugins`` entry-point group, once per process. A
    plug-in that fails to import is a ConfigError naming it (a registry missing a member it
    was meant to provide would otherwise say only that the name is unknown)."""
    global _plugins_loaded
    if _plugins_loaded:
        return
    _plugins_loaded = True
    for entry in importlib.metadata.entry_points(group=PLUGIN_GROUP):
        try:
            entry.load()
        except Exception as error:
            raise ConfigError(
                f"ndpsim plug-in {entry.name!r} ({entry.value}) failed to import: "
                f"{type(error).__name__}: {error}"
            ) from error


class Registry(Generic[T]):
    """Members of one family by name. ``what`` names the family in error messages; the modules
    of ``package`` (dotted; or of each of several packages) are imported before the first
    lookup."""

    def __init__(self, what: str, package: str | tuple[str, ...] | None = None):
        self.what = what
        self.packages = (package,) if isinstance(package, str) else tuple(package or ())
        self._members: dict[str, T] = {}
        self._loaded = not self.packages

    def register(self, name: str) -> Callable[[T], T]:
        """A decorator (or call) that registers a member under ``name``; a name another member
        holds is an error."""

        def add(member: T) -> T:
            taken = self._members.get(name, member)
            if taken is not member and taken != member:
                raise ConfigError(f"{self.what} {name!r} is registered twice")
            self._members[name] = member
            return member

        return add

    def unregister(self, name: str) -> None:
        """Forget a member (for tests that register one of their own)."""
        self._members.pop(name, None)

    def load(self) -> None:
        """Import the modules that register members (the package's, and plug-ins)."""
        load_plugins()
        if self._loaded:
            return
        self._loaded = True
        for name in self.packages:
            package = importlib.import_module(name)
            for info in pkgutil.iter_modules(package.__path__):
                importlib.import_module(f"{name}.{info.name}")

    def get(self, name: str) -> T:
        self.load()
        if name not in self._members:
            raise ConfigError(f"unknown {self.what} {name!r}; registered: {', '.join(self)}")
        return self._members[name]

    def names(self) -> list[str]:
        self.load()
        return sorted(self._members)

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())

    def __contains__(self, name: object) -> bool:
        self.load()
        return name in self._members

    def check(self, name: str) -> str:
        """``name`` if it is registered, else a ValueError listing the members (the form a
        pydantic validator raises, so a config file's error names the key and its line)."""
        if name not in self:
            raise ValueError(f"unknown {self.what} {name!r}; registered: {', '.join(self)}")
        return name
