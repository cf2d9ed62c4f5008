"""GPU systems: a GPU with SMs, caches and a crossbar, attached to memory cubes over links."""

from ndpsim.systems.gpu.config import (
    GpuSystemConfig,
    load_system_config,
    system_preset_names,
    system_settings,
)
from ndpsim.systems.gpu.system import GpuRunResult, GpuSystem

__all__ = [
    "GpuRunResult",
    "GpuSystem",
    "GpuSystemConfig",
    "load_system_config",
    "system_preset_names",
    "system_settings",
]
