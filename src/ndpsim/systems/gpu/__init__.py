"""GPU systems: a GPU with SMs, caches and a crossbar, attached to memory cubes over links."""

from ndpsim.systems.gpu.config import GpuSystemConfig, check_files, dependencies
from ndpsim.systems.gpu.results import GpuRunResult
from ndpsim.systems.gpu.system import GpuSystem
from ndpsim.systems.kinds import SystemKind, register_system_kind

register_system_kind(SystemKind(
    name="gpu", config=GpuSystemConfig, build=GpuSystem, check=check_files,
    dependencies=dependencies,
))  # fmt: skip

__all__ = ["GpuRunResult", "GpuSystem", "GpuSystemConfig"]
