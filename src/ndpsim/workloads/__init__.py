"""The kernel suite: CUDA sources, their committed PTX, inputs, host programs, references.

The names below are imported from :mod:`ndpsim.workloads.base` on first use, so that a module
that needs only the sizes or the parameters (:mod:`ndpsim.workloads.params`), such as the
command line's options, imports neither NumPy nor the interpreter.
"""

import importlib

__all__ = [
    "SIZES",
    "CheckResult",
    "Device",
    "Workload",
    "WorkloadRun",
    "execute_workload",
    "get_workload",
    "kernel_module",
    "mix_parts",
    "register",
    "run_workload",
    "workload_names",
]


def __getattr__(name: str):
    if name in __all__:
        return getattr(importlib.import_module("ndpsim.workloads.base"), name)
    raise AttributeError(f"module 'ndpsim.workloads' has no attribute {name!r}")
