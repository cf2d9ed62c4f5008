"""Simulated systems, each assembled from hardware components and policies, found by kind in a
registry (:mod:`ndpsim.systems.kinds`)."""

from ndpsim.systems.kinds import (
    SYSTEM_KINDS,
    RunResult,
    System,
    SystemKind,
    build_system,
    check_records_timeline,
    load_system,
    load_system_config,
    register_system_kind,
    resolved_config,
    run_programs_on,
    run_system,
    start_system,
    system_kinds,
    system_preset_names,
    system_settings,
)

__all__ = [
    "SYSTEM_KINDS",
    "RunResult",
    "System",
    "SystemKind",
    "build_system",
    "check_records_timeline",
    "load_system",
    "load_system_config",
    "register_system_kind",
    "resolved_config",
    "run_programs_on",
    "run_system",
    "start_system",
    "system_kinds",
    "system_preset_names",
    "system_settings",
]
