"""CPU systems: a host of out-of-order or in-order CPU cores with a coherent cache hierarchy in
front of main memory, running the suite's CUDA programs as CPU threads (issue 49)."""

from ndpsim.systems.cpu.config import CpuSystemConfig, check_files, dependencies
from ndpsim.systems.cpu.system import CpuSystem
from ndpsim.systems.kinds import SystemKind, register_system_kind

register_system_kind(SystemKind(
    name="cpu", config=CpuSystemConfig, build=CpuSystem, check=check_files,
    dependencies=dependencies,
))  # fmt: skip

__all__ = ["CpuSystem", "CpuSystemConfig"]
