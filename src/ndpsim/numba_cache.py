"""numba's on-disk cache, made to notice a change in any module a compiled function can reach.

numba stamps a cached function with its own source file only (its documented limitation: a
change in a function or constant defined in another file is not seen). The timing model's event
loop (``systems/gpu/model.py``) inlines the SMs, caches, links, DRAM and offload hardware from a
dozen other modules, so an edit to ``hw/core/sm.py`` alone used to load the old event loop from
the cache and simulate the old model without a word: a researcher extending a component would
measure the code they had replaced.

Here a function of the package is stamped instead with a SHA-256 over its module's source and
the source of every package module that module imports, transitively. Compiled code reaches
other code and constants only through its module's imports, so any change to what it can reach
changes the stamp, and numba compiles the function again; an edit elsewhere (the command line,
the reproductions) leaves the cache alone.

The cache lives in one directory per user (:func:`cache_root`: ``NDPSIM_CACHE_DIR``, else
``NUMBA_CACHE_DIR``, else the platform's user cache directory), in a folder named after the
function's module path inside the package and its stamp, never after where the package is
installed: every clone and install of the same code shares one compilation, and different code
never reads another's. A directory that cannot be written falls back to numba's own places
(the ``__pycache__`` next to the source), stamped the same way.
"""

from __future__ import annotations

import hashlib
import os
import re
import sys
from collections.abc import Callable
from functools import cache
from pathlib import Path

import numba
from numba.core import caching


def _caching_class(name: str) -> type:
    """numba 0.68 made its locator classes public; earlier releases spell them with a leading
    underscore."""
    found = getattr(caching, name, None) or getattr(caching, "_" + name, None)
    if found is None:
        raise ImportError(f"numba {numba.__version__} has no numba.core.caching.{name}")
    return found


def _module_file(module: str, package: str, root: Path) -> Path | None:
    """The source file of ``module`` if it is ``package`` (whose directory is ``root``) or one
    of its modules, else None."""
    parts = module.split(".")
    if parts[0] != package:
        return None
    base = root.joinpath(*parts[1:])
    for candidate in (base / "__init__.py", base.with_suffix(".py")):
        if candidate.is_file():
            return candidate
    return None


# an import statement at any indentation; a parenthesized name list may span lines
_IMPORT = re.compile(
    r"^[ \t]*(?:from[ \t]+(?P<dots>\.*)(?P<module>[\w.]*)[ \t]+import[ \t]+"
    r"(?P<names>\([^)]*\)|[^\n]*)|import[ \t]+(?P<modules>[^\n]*))",
    re.MULTILINE,
)


def _names(text: str) -> list[str]:
    """The dotted names of an import's name list, without aliases, comments or parentheses."""
    text = re.sub(r"#[^\n]*", "", text).strip("()")
    return [part.split()[0] for part in text.split(",") if part.split()]


def _imported_modules(source: str, path: Path, package: str, root: Path) -> set[str]:
    """Names of the modules of ``package`` that ``path`` imports, with ``from a import b``
    counting both ``a`` and ``a.b`` (``b`` may be a module or a name defined in ``a``).

    A text scan rather than a parse: it is several times faster (every ``import ndpsim`` stamps
    the package's compiled functions), and what it may take in besides real imports (an
    import inside a function, a docstring line that looks like one) only widens the stamp."""
    names: set[str] = set()
    for match in _IMPORT.finditer(source):
        if match["modules"] is not None:
            names.update(_names(match["modules"]))
            continue
        module = match["module"]
        if match["dots"]:  # relative: counted from this module's package
            here = path.parent.relative_to(root.parent).parts
            anchor = ".".join(here[: len(here) - len(match["dots"]) + 1])
            module = f"{anchor}.{module}" if module else anchor
        names.add(module)
        names.update(f"{module}.{name}" for name in _names(match["names"]))
    return {name for name in names if name.split(".")[0] == package}


@cache
def _file_facts(path: Path, mtime_ns: int, size: int, package: str,
                root: Path) -> tuple[bytes, frozenset[Path]]:  # fmt: skip
    """A source file's SHA-256 and the package files it imports; memoized on the file's
    modification time and size, so a file edited while the process runs is read again."""
    source = path.read_bytes()
    imported = set()
    for name in _imported_modules(source.decode(), path, package, root):
        target = _module_file(name, package, root)
        if target is not None:
            imported.add(target)
    return hashlib.sha256(source).digest(), frozenset(imported)


def _facts(path: Path, package: str, root: Path) -> tuple[bytes, frozenset[Path]]:
    st = os.stat(path)
    return _file_facts(path, st.st_mtime_ns, st.st_size, package, root)


def _closure(path: Path, package: str, root: Path) -> dict[Path, bytes]:
    """The SHA-256 of ``path`` and of every file of ``package`` it imports, directly or not."""
    digests: dict[Path, bytes] = {}
    todo = [path]
    while todo:
        file = todo.pop()
        if file not in digests:
            digests[file], imported = _facts(file, package, root)
            todo.extend(imported)
    return digests


def import_closure(path: Path, package: str, root: Path) -> list[Path]:
    """``path`` and every file of ``package`` it imports, directly or not, sorted."""
    return sorted(_closure(path, package, root))


def closure_stamp(path: Path, package: str, root: Path) -> str:
    """SHA-256 over the source of ``path`` and of everything in its import closure."""
    stamp = hashlib.sha256()
    for file, digest in sorted(_closure(path, package, root).items()):
        stamp.update(str(file.relative_to(root)).encode() + b"\0")
        stamp.update(digest)
    return stamp.hexdigest()


#: Stamps of run-time state a module's compiled code depends on besides source: (the module's
#: file, a function giving the stamp). See :mod:`ndpsim.engine.dispatch`.
_EXTRA_STAMPS: list[tuple[Path, Callable[[], str]]] = []


def add_stamp(module_file: Path, stamp: Callable[[], str]) -> None:
    """Fold ``stamp()`` into the cache stamp of every compiled function whose import closure
    holds ``module_file``, read when the function is loaded or saved."""
    _EXTRA_STAMPS.append((module_file, stamp))


def _source_stamp(path: Path, package: str, root: Path, own: str) -> tuple:
    closure = _closure(path, package, root)
    return ("import-closure", own, *(stamp() for file, stamp in _EXTRA_STAMPS if file in closure))


def cache_root() -> Path:
    """Where compiled code is kept: ``NDPSIM_CACHE_DIR``, else ``NUMBA_CACHE_DIR``, else
    ``ndpsim/numba`` in the platform's user cache directory."""
    for variable in ("NDPSIM_CACHE_DIR", "NUMBA_CACHE_DIR"):
        if os.environ.get(variable):
            return Path(os.environ[variable]).expanduser()
    if sys.platform == "win32":
        base = Path(os.environ.get("LOCALAPPDATA") or Path.home() / "AppData" / "Local")
    elif sys.platform == "darwin":
        base = Path.home() / "Library" / "Caches"
    else:
        base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "ndpsim" / "numba"


def _only_under(root: Path) -> type:
    """A locator mixin that takes the functions defined under ``root`` only."""

    class OnlyUnder:
        @classmethod
        def from_function(cls, py_func, py_file):
            if not Path(py_file).resolve().is_relative_to(root):
                return None  # not ours: numba's own locators take it
            return super().from_function(py_func, py_file)

    return OnlyUnder


def _shared(package: str, root: Path) -> type:
    """A locator for the functions of ``package`` that keeps them under :func:`cache_root`, by
    module path and stamp, so that every copy of the same code finds them."""
    mixin = _caching_class("SourceFileBackedLocatorMixin")
    locator = _caching_class("CacheLocator")

    class SharedCacheLocator(_only_under(root), mixin, locator):
        stamps = (package, root)

        def __init__(self, py_func, py_file):
            self._py_file = py_file
            self._lineno = py_func.__code__.co_firstlineno
            source = self._source = Path(py_file).resolve()
            self._stamp = closure_stamp(source, package, root)
            module = source.relative_to(root.parent).with_suffix("")
            self._cache_path = str(cache_root().joinpath(*module.parts, self._stamp[:16]))

        def get_cache_path(self):
            return self._cache_path

        def get_source_stamp(self):
            return _source_stamp(self._source, package, root, self._stamp)

    return SharedCacheLocator


def _stamped(base: type, package: str, root: Path) -> type:
    """``base`` (one of numba's file-backed locators) for the functions of ``package`` only,
    with the import-closure stamp in place of the function's own file's."""

    class ClosureStampedLocator(_only_under(root), base):
        stamps = (package, root)

        def get_source_stamp(self):
            source = Path(self._py_file).resolve()
            return _source_stamp(source, package, root, closure_stamp(source, package, root))

    return ClosureStampedLocator


def install(package: str, root: Path) -> None:
    """Stamp the cached functions of ``package`` (its directory ``root``) with their import
    closures. Must run before the package's first ``@njit(cache=True)`` decorator: numba picks
    a function's locator when it is decorated. Installing twice changes nothing."""
    root = root.resolve()
    impl = _caching_class("CacheImpl")
    if any(getattr(cls, "stamps", None) == (package, root) for cls in impl._locator_classes):
        return
    ours = [
        _shared(package, root),
        *(_stamped(_caching_class(name), package, root)
          for name in ("UserProvidedCacheLocator", "InTreeCacheLocator", "UserWideCacheLocator")),
    ]  # fmt: skip
    impl._locator_classes = ours + list(impl._locator_classes)
