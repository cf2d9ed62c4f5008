"""numba's cache stamped with import closures: an edit to a module a compiled function inlines
must recompile the function (numba alone looks at the function's own file only)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

from ndpsim import numba_cache

# numba 0.68 made these public; earlier releases spell them with a leading underscore
CacheImpl = numba_cache._caching_class("CacheImpl")
InTreeCacheLocator = numba_cache._caching_class("InTreeCacheLocator")


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text))


def _edit(path: Path, text: str) -> None:
    """Rewrite ``path`` and move its modification time on, so that nothing memoized on the
    file's (time, size) can mistake the new content for the old."""
    before = path.stat().st_mtime_ns
    _write(path, text)
    os.utime(path, ns=(before + 10**9, before + 10**9))


def _package(tmp_path: Path) -> Path:
    root = tmp_path / "pkg"
    _write(root / "__init__.py", "")
    _write(root / "a.py", "from pkg import b\n")
    _write(root / "b.py", """
        import numpy as np
        import pkg.c as c
        from pkg.sub import (  # a list over several lines, with aliases and comments
            d,  # d imports e
            f as renamed,
        )
    """)  # fmt: skip
    _write(root / "c.py", "X = 1\n")
    _write(root / "unrelated.py", "from pkg import a\n")
    _write(root / "sub" / "__init__.py", "")
    _write(root / "sub" / "d.py", "from . import e\nfrom ..c import X\n")
    _write(root / "sub" / "e.py", "Y = 2\n")
    _write(root / "sub" / "f.py", "def g():\n    from pkg import lazy  # inside a function\n")
    _write(root / "lazy.py", "W = 0\n")
    return root


def test_the_closure_follows_absolute_and_relative_imports_within_the_package(tmp_path):
    root = _package(tmp_path)
    closure = numba_cache.import_closure(root / "a.py", "pkg", root)
    names = sorted(str(p.relative_to(root)) for p in closure)
    # an import inside a function counts too: it can only widen the stamp
    assert names == ["__init__.py", "a.py", "b.py", "c.py", "lazy.py", "sub/__init__.py",
                     "sub/d.py", "sub/e.py", "sub/f.py"]  # fmt: skip


def test_the_stamp_changes_with_any_file_of_the_closure_and_no_other(tmp_path):
    root = _package(tmp_path)
    stamp = numba_cache.closure_stamp(root / "a.py", "pkg", root)
    _edit(root / "unrelated.py", "from pkg import a\nZ = 3\n")
    assert numba_cache.closure_stamp(root / "a.py", "pkg", root) == stamp
    _edit(root / "sub" / "e.py", "Y = 20\n")
    changed = numba_cache.closure_stamp(root / "a.py", "pkg", root)
    assert changed != stamp
    # sub/ and lazy.py leave the closure
    _edit(root / "b.py", "import numpy as np\nimport pkg.c as c\n")
    assert numba_cache.closure_stamp(root / "a.py", "pkg", root) not in (stamp, changed)


def test_functions_outside_the_package_keep_numbas_own_locators(tmp_path):
    root = _package(tmp_path)
    locator = numba_cache._stamped(InTreeCacheLocator, "pkg", root.resolve())

    def f():
        return 0

    assert locator.from_function(f, str(tmp_path / "elsewhere.py")) is None
    ours = locator.from_function(f, str(root / "a.py"))
    stamp = numba_cache.closure_stamp(root / "a.py", "pkg", root.resolve())
    assert ours.get_source_stamp() == ("import-closure", stamp)


def test_installing_twice_adds_the_locators_once(tmp_path):
    root = _package(tmp_path)
    numba_cache.install("pkg", root)
    numba_cache.install("pkg", root)
    classes = CacheImpl._locator_classes
    try:
        assert sum(getattr(c, "stamps", None) == ("pkg", root.resolve()) for c in classes) == 4
    finally:
        CacheImpl._locator_classes = [
            c for c in classes if getattr(c, "stamps", None) != ("pkg", root.resolve())
        ]


RUN = """
import sys
from pathlib import Path
sys.path.insert(0, sys.argv[1])
from ndpsim import numba_cache
numba_cache.install("inlined", Path(sys.argv[1]) / "inlined")
from inlined.caller import call
print(call())
"""


def test_an_edit_to_an_inlined_module_alone_recompiles_the_caller(tmp_path):
    """The caller's own file does not change; with numba's stamps it would load the old
    machine code, which inlined the old callee, from its cache."""
    root = tmp_path / "inlined"
    _write(root / "__init__.py", "")
    _write(root / "callee.py", """
        from numba import njit

        @njit(cache=True, inline="always")
        def value():
            return 1
    """)  # fmt: skip
    _write(root / "caller.py", """
        from numba import njit

        from inlined.callee import value

        @njit(cache=True)
        def call():
            return value()
    """)  # fmt: skip
    script = tmp_path / "run.py"
    script.write_text(RUN)

    def run() -> str:
        env = {**os.environ, "NDPSIM_CACHE_DIR": str(tmp_path / "cache")}
        out = subprocess.run([sys.executable, str(script), str(tmp_path)], capture_output=True,
                             text=True, env=env)  # fmt: skip
        assert out.returncode == 0, out.stderr
        return out.stdout.strip()

    assert run() == "1"
    cached = list((tmp_path / "cache").rglob("caller.call-*.nbi"))
    assert cached, "the caller was not cached"
    assert not (root / "__pycache__").exists() or not list((root / "__pycache__").glob("*.nbi"))
    _edit(root / "callee.py", """
        from numba import njit

        @njit(cache=True, inline="always")
        def value():
            return 2
    """)  # fmt: skip
    assert run() == "2"


def _locator_for(root: Path, module: str, cache: Path, monkeypatch):
    monkeypatch.setenv("NDPSIM_CACHE_DIR", str(cache))
    locator = numba_cache._shared("pkg", root.resolve())
    source = root / module
    namespace: dict = {}
    exec(compile("def f():\n    return 1\n", str(source), "exec"), namespace)
    return locator.from_function(namespace["f"], str(source))


def test_copies_of_the_same_code_share_one_cache_and_other_code_does_not(tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    first = _locator_for(_package(tmp_path / "clone1"), "a.py", cache, monkeypatch)
    second = _locator_for(_package(tmp_path / "clone2"), "a.py", cache, monkeypatch)
    assert first.get_cache_path() == second.get_cache_path()
    assert Path(first.get_cache_path()).is_relative_to(cache / "pkg" / "a")
    assert first.get_source_stamp() == second.get_source_stamp()
    _edit(tmp_path / "clone2" / "pkg" / "c.py", "X = 2\n")  # in a.py's import closure
    changed = _locator_for(tmp_path / "clone2" / "pkg", "a.py", cache, monkeypatch)
    assert changed.get_cache_path() != first.get_cache_path()


def test_the_cache_root_follows_the_environment(tmp_path, monkeypatch):
    monkeypatch.delenv("NDPSIM_CACHE_DIR", raising=False)
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path / "numba"))
    assert numba_cache.cache_root() == tmp_path / "numba"
    monkeypatch.setenv("NDPSIM_CACHE_DIR", str(tmp_path / "ours"))
    assert numba_cache.cache_root() == tmp_path / "ours"
    monkeypatch.delenv("NDPSIM_CACHE_DIR")
    monkeypatch.delenv("NUMBA_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    if sys.platform not in ("win32", "darwin"):
        assert numba_cache.cache_root() == tmp_path / "xdg" / "ndpsim" / "numba"
