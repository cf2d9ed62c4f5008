"""How ndpsim compiles: numba's ``njit``, cached on disk under a stamp of what each function
reaches.

numba stamps a cached function with its own source file only (its documented limitation: a
change in a function or constant defined in another file is not seen), and a cached function
holds the machine code of every compiled function it calls. So a researcher who edits a
component and runs again could measure the code they replaced. :func:`compiled` stamps each
function instead with a SHA-256 over

* its bytecode and constants, without its docstring or line numbers (an edit to a comment, a
  docstring or another function of the file changes nothing);
* its default arguments and the contents of its closure;
* the value of every global it reads, attribute chains such as ``rq.Q_KIND`` followed through
  modules, classes and named tuples: constants by value (numba compiles them in), compiled
  functions by their own stamps, recursively, so a function's stamp covers everything it calls
  and nothing else;
* its compile options, and the source of this module, which decides how functions are lowered
  and stamped.

An edit therefore recompiles the functions it changed and the functions that call them,
directly or not, and no other: editing an event handler recompiles the handler and the loop
that dispatches to it, while the rest loads from the cache. A value that cannot be stamped (a
plain Python function of the package reached from compiled code, say) is an error, never a
silent guess. An object may give its own stamp as ``__ndpsim_stamp__()`` (the compiled-decision
tables do: :mod:`ndpsim.engine.dispatch`).

The stamp is taken when numba first looks the function up in the cache (by then every module
it reads has been imported), not when it is decorated. The cache lives in one directory per
user (:func:`cache_root`: ``NDPSIM_CACHE_DIR``, else ``NUMBA_CACHE_DIR``, else the platform's
user cache directory), in a folder named after the function's module and files named after its
stamp, never after where the package is installed: every clone and install of the same code
shares one compilation, versions of a function keep a file each (switching branches back and
forth compiles nothing twice), and different code never reads another's. If that directory
cannot be written, a temporary one is used.

Each ``compiled`` function is compiled on its own, never copied into its callers by numba's
IR-level inliner (``inline="always"``, which rebuilt and re-typed the callee's IR at every call
site and was most of the 7 minutes the timing model used to take). Callers link its LLVM code,
and LLVM inlines it where it pays, always for a function marked ``inline=True`` (a small helper
on a hot path). Only an entry point (``entry=True``: a function Python calls, such as a system's
loop; an allocating function counts as one) has its module optimised whole; the others are
optimised function by function and left to the entry's pass over everything it links, which
optimised them again anyway (skipping their own whole-module pass cut the first run's compile by
about a third). A function Python calls that is not marked an entry runs right, only less
optimised. An argument whose numba type has ``decorate_argument(context,
argument)`` adds LLVM attributes to its argument (a component passed by reference says that
nothing writes what it points to: :mod:`ndpsim.engine.reference`). ``compiled`` functions run
without numba's reference-counted runtime (NRT) unless they ask for it (``allocates=True``):
the timing model never allocates, and without the runtime no call pays an atomic
reference-count update per array.
"""

from __future__ import annotations

import builtins
import dis
import enum
import hashlib
import inspect
import os
import sys
import tempfile
import types
import weakref
from collections.abc import Callable
from functools import cache
from pathlib import Path

import numba
import numpy as np
from numba.core import caching, lowering
from numba.core.compiler import CompilerBase, DefaultPassBuilder
from numba.core.compiler_machinery import register_pass
from numba.core.dispatcher import Dispatcher
from numba.core.extending import _Intrinsic
from numba.core.typed_passes import NativeLowering


def _caching_class(name: str) -> type:
    """numba 0.68 made its caching classes public; earlier releases spell some with a leading
    underscore."""
    found = getattr(caching, name, None) or getattr(caching, "_" + name, None)
    if found is None:
        raise ImportError(f"numba {numba.__version__} has no numba.core.caching.{name}")
    return found


class StampError(TypeError):
    """A global that compiled code reads cannot be stamped."""


# ------------------------------------------------------------------------------- stamps
def _sha(text: str | bytes) -> str:
    return hashlib.sha256(text.encode() if isinstance(text, str) else text).hexdigest()


def _constant(value: object) -> str:
    """A code object's constant, written the same in every process (a frozenset's order
    depends on string hashing, which each process seeds anew)."""
    if isinstance(value, frozenset):
        return "frozenset(" + ",".join(sorted(_constant(v) for v in value)) + ")"
    if isinstance(value, tuple):
        return "(" + ",".join(_constant(v) for v in value) + ")"
    return repr(value)


def _code_fingerprint(code: types.CodeType, docstring: str | None = None) -> str:
    """What of a code object decides what numba compiles: not its file, line numbers or
    docstring."""
    parts = [code.co_code.hex(), repr(code.co_names), repr(code.co_varnames),
             repr(code.co_freevars), repr(code.co_cellvars),
             repr((code.co_argcount, code.co_posonlyargcount, code.co_kwonlyargcount,
                   code.co_flags)),
             getattr(code, "co_exceptiontable", b"").hex()]  # fmt: skip
    for k, const in enumerate(code.co_consts):
        if isinstance(const, types.CodeType):
            parts.append(_code_fingerprint(const))
        elif k == 0 and docstring is not None and const == docstring:
            parts.append("<docstring>")
        else:
            parts.append(_constant(const))
    return _sha("\0".join(parts))


def _references(code: types.CodeType) -> list[tuple[str, tuple[str, ...]]]:
    """The globals a code object reads, each with the attribute chain read off it
    (``rq.Q_KIND`` is ``("rq", ("Q_KIND",))``), its nested code objects' included."""
    found = []
    instructions = list(dis.get_instructions(code))
    for i, instruction in enumerate(instructions):
        if instruction.opname not in ("LOAD_GLOBAL", "LOAD_NAME"):
            continue
        chain = []
        j = i + 1
        while j < len(instructions) and instructions[j].opname in ("LOAD_ATTR", "LOAD_METHOD"):
            chain.append(instructions[j].argval)
            j += 1
        found.append((instruction.argval, tuple(chain)))
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            found.extend(_references(const))
    return found


def _resolve(function: types.FunctionType, name: str, chain: tuple[str, ...]) -> object:
    """The value a global reference reads, following its attribute chain through modules,
    classes and named tuples (what numba freezes at compile time)."""
    namespace = function.__globals__
    if name in namespace:
        value = namespace[name]
    elif hasattr(builtins, name):
        return f"builtin:{name}"
    else:
        return f"undefined:{name}"
    for attribute in chain:
        if not isinstance(value, (types.ModuleType, type, tuple)):
            break
        if not hasattr(value, attribute):
            break
        value = getattr(value, attribute)
    return value


def _is_external(value: object) -> bool:
    module = getattr(value, "__module__", None) or type(value).__module__ or ""
    root = module.split(".")[0]
    return root in ("numba", "numpy", "math", "builtins", "cmath", "operator", "llvmlite")


def stamp_value(value: object) -> str:
    """The stamp of a value compiled code reads (see the module)."""
    if isinstance(value, Dispatcher):
        return "function:" + function_stamp(value.py_func)
    if isinstance(value, _Intrinsic):  # its code generator is Python: stamp its whole module
        return "intrinsic:" + source_stamp(value._defn)
    custom = getattr(value, "__ndpsim_stamp__", None)
    if custom is not None and callable(custom):
        return "custom:" + custom()
    if value is None or isinstance(value, (bool, int, float, complex, str, bytes)):
        return f"{type(value).__name__}:{value!r}"
    if isinstance(value, enum.Enum):
        kind = type(value)
        return f"enum:{kind.__module__}.{kind.__qualname__}.{value.name}={value.value!r}"
    if isinstance(value, np.ndarray):
        return f"array:{value.dtype.str}:{value.shape}:{_sha(np.ascontiguousarray(value).data)}"
    if isinstance(value, np.generic):
        return f"{value.dtype.str}:{value!r}"
    if isinstance(value, tuple):
        return (f"{type(value).__qualname__}("
                + ",".join(stamp_value(item) for item in value) + ")")  # fmt: skip
    if isinstance(value, types.ModuleType):
        return f"module:{value.__name__}"
    if isinstance(value, type):
        stamp = f"class:{value.__module__}.{value.__qualname__}"
        if issubclass(value, enum.Enum):
            stamp += repr([(member.name, member.value) for member in value])
        return stamp
    if _is_external(value):
        name = getattr(value, "__qualname__", None) or getattr(value, "__name__", None)
        return f"external:{getattr(value, '__module__', '')}.{name or type(value).__qualname__}"
    raise StampError(f"compiled code reads {value!r} ({type(value).__qualname__}), which has no "
                     "stamp: compile it (ndpsim.numba_cache.compiled), make it a constant, or "
                     "give it a __ndpsim_stamp__()")  # fmt: skip


def source_stamp(function: Callable) -> str:
    """A digest of the whole source file that defines ``function``: the stamp of Python code
    that generates compiled code (an intrinsic's code generator, a numba type's lowering)."""
    path = Path(inspect.getfile(function)).resolve()
    stat = path.stat()
    return _file_sha(path, stat.st_mtime_ns, stat.st_size)


@cache
def _file_sha(path: Path, mtime_ns: int, size: int) -> str:
    return _sha(path.read_bytes())


_stamps: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_in_progress: set[int] = set()


def function_stamp(function: types.FunctionType) -> str:
    """The stamp of a Python function numba compiles: its code and everything it reads,
    compiled callees included (see the module). Memoized per function object."""
    known = _stamps.get(function)
    if known is not None:
        return known
    if id(function) in _in_progress:  # a call cycle (numba compiles none): code only
        return "cycle:" + _code_fingerprint(function.__code__, function.__doc__)
    _in_progress.add(id(function))
    try:
        # this module's own source joins every stamp: it decides how code is lowered and stamped
        parts = [source_stamp(function_stamp), function.__module__, function.__qualname__,
                 getattr(function, "__ndpsim_compile_options__", ""),
                 _code_fingerprint(function.__code__, function.__doc__),
                 stamp_value(function.__defaults__),
                 stamp_value(tuple(sorted((function.__kwdefaults__ or {}).items())))]  # fmt: skip
        for cell in function.__closure__ or ():
            parts.append(stamp_value(cell.cell_contents))
        for name, chain in sorted(set(_references(function.__code__))):
            try:
                parts.append(f"{name}.{'.'.join(chain)}=" +
                             stamp_value(_resolve(function, name, chain)))  # fmt: skip
            except StampError as error:
                raise StampError(f"{function.__module__}.{function.__qualname__} reads "
                                 f"{'.'.join((name, *chain))}: {error}") from None  # fmt: skip
        stamp = _sha("\0".join(parts))
    finally:
        _in_progress.discard(id(function))
    _stamps[function] = stamp
    return stamp


# -------------------------------------------------------------------------------- cache
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


def _fallback_root() -> Path:
    """A directory of this user's in the system's temporary directory."""
    user = os.getuid() if hasattr(os, "getuid") else os.getlogin()
    return Path(tempfile.gettempdir()) / f"ndpsim-numba-{user}"


class StampedLocator(_caching_class("CacheLocator")):
    """Keeps a function's compilations under the cache root, in its module's folder, in files
    named after its stamp."""

    def __init__(self, py_func, py_file, root: Path | None = None):
        self._stamp = function_stamp(py_func)
        parts = py_func.__module__.split(".")
        self._cache_path = str((root or cache_root()).joinpath(*parts))

    @classmethod
    def from_function(cls, py_func, py_file):
        for root in (cache_root(), _fallback_root()):
            locator = cls(py_func, py_file, root)
            try:
                locator.ensure_cache_path()
            except OSError:
                continue
            return locator
        return None

    def get_cache_path(self):
        return self._cache_path

    def get_source_stamp(self):
        return self._stamp

    def get_disambiguator(self):
        return self._stamp[:20]


class _StampedImpl(_caching_class("CompileResultCacheImpl")):
    _locator_classes = [StampedLocator]


class StampedFunctionCache(caching.FunctionCache):
    """numba's cache of compiled functions, located and stamped by :class:`StampedLocator`."""

    _impl_class = _StampedImpl


class _DeferredCache(caching.NullCache):
    """A :class:`StampedFunctionCache` made when numba first asks for it: the stamp needs every
    global the function reads to exist, which they do by the time it is compiled (or loaded),
    and not yet when it is decorated. If no directory can be written it caches nothing."""

    def __init__(self, py_func):
        self._py_func = py_func
        self._cache: caching._Cache | None = None

    def _real(self) -> caching._Cache:
        if self._cache is None:
            try:
                self._cache = StampedFunctionCache(self._py_func)
            except RuntimeError:  # no locator: no writable cache directory
                self._cache = caching.NullCache()
        return self._cache

    @property
    def cache_path(self):
        return self._real().cache_path

    def load_overload(self, sig, target_context):
        return self._real().load_overload(sig, target_context)

    def save_overload(self, sig, data):
        self._real().save_overload(sig, data)

    def flush(self):
        self._real().flush()


class _Lower(lowering.Lower):
    """numba's lowering, letting each argument's type add LLVM attributes to its argument (a
    type with ``decorate_argument(context, argument)``, as :mod:`ndpsim.engine.reference`'s),
    and marking the function for LLVM to inline into every caller if ``always_inline``."""

    always_inline = False

    def pre_lower(self):
        super().pre_lower()
        function = self.builder.function
        if self.always_inline:
            function.attributes.add("alwaysinline")
        arguments = iter(self.call_conv.get_arguments(function))
        for numba_type in self.fndesc.argtypes:
            llvm_type = self.context.data_model_manager[numba_type].get_argument_type()
            mine = [next(arguments) for _ in range(_leaves(llvm_type))]
            decorate = getattr(numba_type, "decorate_argument", None)
            if decorate is not None:
                decorate(self.context, *mine)


def _leaves(llvm_type) -> int:
    """How many LLVM arguments a numba argument of (nested) argument type ``llvm_type`` is."""
    if isinstance(llvm_type, tuple | list):
        return sum(_leaves(t) for t in llvm_type)
    return 1


class _InlinedLower(_Lower):
    always_inline = True


def _compiler(lower: type, name: str) -> type:
    """numba's nopython compiler with its lowering done by ``lower``, in a pass called
    ``name``."""

    @register_pass(mutates_CFG=True, analysis_only=False)
    class Lowering(NativeLowering):
        _name = name

        @property
        def lowering_class(self):
            return lower

        def run_pass(self, state):
            if state.library is None and not getattr(state.func_id.func, "__ndpsim_entry__", True):
                # numba's own library, without the whole-module pass: the entry runs it
                library = state.targetctx.codegen().create_library(state.func_id.func_qualname)
                library.enable_object_caching()
                library._optimize_final_module = lambda: None
                state.library = library
            return super().run_pass(state)

    class Compiler(CompilerBase):
        def define_pipelines(self):
            pipeline = DefaultPassBuilder.define_nopython_pipeline(self.state)
            pipeline.passes = [(Lowering, description) if pass_class is NativeLowering
                               else (pass_class, description)
                               for pass_class, description in pipeline.passes]  # fmt: skip
            pipeline.finalize()
            return [pipeline]

    Compiler.__qualname__ = Compiler.__name__ = f"Compiler[{name}]"
    return Compiler


_COMPILER = _compiler(_Lower, "ndpsim_lowering")
_INLINED_COMPILER = _compiler(_InlinedLower, "ndpsim_inlined_lowering")


def compiled(function: Callable | None = None, *, allocates: bool = False, inline: bool = False,
             entry: bool = False, **options) -> Callable:  # fmt: skip
    """``@compiled`` (or ``@compiled(allocates=True, inline=True)``): compile with numba's
    ``njit`` and cache under the function's stamp (see the module). Without ``allocates`` the
    function runs without numba's runtime: it may not create arrays, and no call pays reference
    counts. With ``inline``, LLVM inlines it into every compiled caller (the function is still
    compiled and cached once, on its own, and its callers take its optimised code): for small
    helpers on hot paths, where a call would cost more than the work. ``entry`` marks a function
    Python calls (a system's loop): its module, with everything it links, is optimised whole.
    Other keyword arguments go to ``njit``."""
    options.setdefault("pipeline_class", _INLINED_COMPILER if inline else _COMPILER)
    options.setdefault("no_cfunc_wrapper", True)  # none is a first-class value: 4% less to compile

    def decorate(python: Callable) -> Dispatcher:
        python.__ndpsim_entry__ = entry or allocates
        python.__ndpsim_compile_options__ = (
            f"allocates={allocates} inline={inline} entry={entry} "
            f"{sorted((k, str(v)) for k, v in options.items())}"
        )
        dispatcher = numba.njit(_nrt=allocates, **options)(python)
        dispatcher._cache = _DeferredCache(dispatcher.py_func)  # numba's cache=True slot
        return dispatcher

    return decorate if function is None else decorate(function)


__all__ = ["StampError", "cache_root", "compiled", "function_stamp",
           "source_stamp", "stamp_value"]  # fmt: skip
