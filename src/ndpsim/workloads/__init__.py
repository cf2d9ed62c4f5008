"""The kernel suite: CUDA sources, their committed PTX, inputs, host programs, references."""

from ndpsim.workloads.base import (
    SIZES,
    CheckResult,
    Device,
    Workload,
    WorkloadRun,
    execute_workload,
    get_workload,
    kernel_module,
    register,
    run_workload,
    workload_names,
)

__all__ = [
    "SIZES",
    "CheckResult",
    "Device",
    "Workload",
    "WorkloadRun",
    "execute_workload",
    "get_workload",
    "kernel_module",
    "register",
    "run_workload",
    "workload_names",
]
