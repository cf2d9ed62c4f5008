"""ndpsim: near-data processing simulator for GPUs and CPUs with 3D-stacked memory."""

import importlib

__version__ = "0.1.0"


#: The command line's verbs, as functions of :mod:`ndpsim.api`.
_VERBS = ("run", "analyze", "reproduce", "sweep", "results")


def __getattr__(name: str):
    """``ndpsim.run``, ``ndpsim.analyze``, ``ndpsim.reproduce``, ``ndpsim.sweep`` and
    ``ndpsim.results`` (:mod:`ndpsim.api`), imported on first use, so that ``import ndpsim``
    stays light."""
    if name in _VERBS:
        return getattr(importlib.import_module("ndpsim.api"), name)
    raise AttributeError(f"module 'ndpsim' has no attribute {name!r}")
