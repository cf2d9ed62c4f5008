"""ndpsim: near-data processing simulator for GPUs and CPUs with 3D-stacked memory."""

import importlib
from pathlib import Path

from ndpsim import numba_cache

__version__ = "0.1.0"

# before any module of the package compiles: numba picks a function's cache locator when the
# function is decorated (see ndpsim.numba_cache)
numba_cache.install(__name__, Path(__file__).parent)


#: The command line's verbs, as functions of :mod:`ndpsim.api`.
_VERBS = ("run", "analyze", "reproduce", "sweep", "results")


def __getattr__(name: str):
    """``ndpsim.run``, ``ndpsim.analyze``, ``ndpsim.reproduce``, ``ndpsim.sweep`` and
    ``ndpsim.results`` (:mod:`ndpsim.api`), imported on first use: by name rather than by an
    import statement, which would add the whole API to the import closure that stamps the
    compiled timing model's cache."""
    if name in _VERBS:
        return getattr(importlib.import_module("ndpsim.api"), name)
    raise AttributeError(f"module 'ndpsim' has no attribute {name!r}")
