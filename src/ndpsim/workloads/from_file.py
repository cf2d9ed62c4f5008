"""A workload defined in a Python file outside the package (``ndpsim run --workload path.py``).

The file is imported as a module of its own and must define exactly one concrete subclass of
:class:`~ndpsim.workloads.base.Workload`, written as the suite's are (name, sizes, inputs, run,
reference), with ``ptx`` naming its PTX file (relative to the file's directory). Whether it
also registers itself with ``@register`` does not matter here; a registered name must not be
one the suite already has.
"""

from __future__ import annotations

import hashlib
import importlib.util
import inspect
import sys
import traceback
from functools import cache
from pathlib import Path

from ndpsim.errors import WorkloadError
from ndpsim.workloads.base import SIZES, Workload, workload_names


def load_workload_file(path: str | Path) -> type[Workload]:
    """The workload class the Python file ``path`` defines (imported once per process)."""
    path = Path(path)
    if not path.is_file():
        raise WorkloadError(f"{path}: no such workload file")
    return _load(path.resolve())


@cache
def _load(path: Path) -> type[Workload]:
    workload_names()  # the suite first, so that a clash of names is reported at this file
    name = "ndpsim_workload_file_" + hashlib.sha256(str(path).encode()).hexdigest()[:16]
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise WorkloadError(f"{path}: not a Python file that can be imported")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except Exception as error:
        del sys.modules[name]
        raise WorkloadError(
            f"{path}{_line_of(error, path)}: importing it failed: {type(error).__name__}: {error}"
        ) from error
    defined = [value for value in vars(module).values()
               if isinstance(value, type) and issubclass(value, Workload)
               and value.__module__ == name]  # fmt: skip
    concrete = [cls for cls in defined if not inspect.isabstract(cls)]
    if len(concrete) != 1:
        raise WorkloadError(f"{path}: {_why_not_one(defined, concrete)}")
    cls = concrete[0]
    name_value = getattr(cls, "name", None)
    if not isinstance(name_value, str) or not name_value:
        raise WorkloadError(f"{path}: workload class {cls.__name__} sets no name")
    sizes = getattr(cls, "sizes", None)
    missing = [s for s in SIZES if not isinstance(sizes, dict) or s not in sizes]
    if missing:
        raise WorkloadError(
            f"{path}: workload {name_value!r} does not define sizes {', '.join(missing)} (each "
            "a dict of its parameters)"
        )
    return cls


def _why_not_one(defined: list[type], concrete: list[type]) -> str:
    if len(concrete) > 1:
        names = ", ".join(cls.__name__ for cls in concrete)
        return f"defines {len(concrete)} workloads ({names}); expected one per file"
    if defined:
        cls = defined[0]
        missing = ", ".join(sorted(cls.__abstractmethods__))
        return f"workload class {cls.__name__} does not define {missing}"
    return (
        "defines no workload: expected a subclass of ndpsim.workloads.Workload with name, "
        "sizes, ptx, inputs, run and reference (docs/workloads.md)"
    )


def _line_of(error: BaseException, path: Path) -> str:
    """``:LINE`` of the innermost place in ``path`` where ``error`` arose, if it did there."""
    if isinstance(error, SyntaxError) and error.lineno and Path(error.filename or "") == path:
        return f":{error.lineno}"
    frames = [f for f in traceback.extract_tb(error.__traceback__) if Path(f.filename) == path]
    return f":{frames[-1].lineno}" if frames else ""
