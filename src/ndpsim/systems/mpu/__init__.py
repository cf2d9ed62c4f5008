"""MPU systems: near-bank SIMT processors whose cores issue on the base die and run beside the
banks of the DRAM dies (Xie et al., MICRO 2021)."""

from ndpsim.systems.kinds import SystemKind, register_system_kind
from ndpsim.systems.mpu.config import MpuSystemConfig, check_files, dependencies
from ndpsim.systems.mpu.system import MpuSystem

register_system_kind(SystemKind(
    name="mpu", config=MpuSystemConfig, build=MpuSystem, check=check_files,
    dependencies=dependencies,
))  # fmt: skip

__all__ = ["MpuSystem", "MpuSystemConfig"]
