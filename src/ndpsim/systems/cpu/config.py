"""The preset model of a ``cpu`` system: a host of CPU cores with a coherent cache hierarchy in
front of main memory (ALP's host, Table 1, by default): DDR channels, or 3D stacks behind SerDes
links (a ``links`` section, as the GPU systems have). Each value's source is cited in the preset
files."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from ndpsim.config import Cycles, LatencyNs, OptionalGbps, Strict
from ndpsim.energy import load_energy_table
from ndpsim.hw.core.cpu_config import CpuCoreConfig
from ndpsim.hw.cpu.caches import MAX_CORES
from ndpsim.hw.dram.spec import DramPreset
from ndpsim.systems.skeleton.links import LinkConfig
from ndpsim.systems.skeleton.memory import DramMemory


class CoresConfig(CpuCoreConfig):
    """The host's cores: how many, of which kind (``ndpsim.hw.core``), and their settings."""

    kind: Literal["cpu_ooo", "cpu_inorder"] = "cpu_ooo"
    count: int = Field(8, ge=1, le=MAX_CORES, description="cores, one CPU thread each (ALP: 8)")


class CachesConfig(Strict):
    """Private L1 and L2 per core, a shared inclusive LLC with a directory (ALP Table 1)."""

    l1_bytes: int = Field(32768, ge=64, le=2**24)
    l1_ways: int = Field(8, ge=1, le=64)
    l1_cycles: Cycles = Field(4, ge=1)
    l2_bytes: int = Field(262144, ge=64, le=2**28)
    l2_ways: int = Field(8, ge=1, le=64)
    l2_cycles: Cycles = Field(7, ge=1)
    llc_bytes: int = Field(8388608, ge=64, le=2**32)
    llc_ways: int = Field(16, ge=1, le=64)
    llc_cycles: Cycles = Field(27, ge=1)
    llc_mshrs: int = Field(64, ge=1, le=4096, description="lines the LLC has in flight")
    coherence_cycles: Cycles = Field(20, ge=0, description="a round of invalidations or a "
                                     "downgrade through the directory")  # fmt: skip
    prefetch_streams: int = Field(16, ge=1, le=256, description="stream prefetcher entries per "
                                  "L2 (ALP Table 1: 16)")  # fmt: skip
    prefetch_degree: int = Field(2, ge=0, le=64, description="lines fetched ahead when a stream "
                                 "advances (0: no prefetcher)")  # fmt: skip


class MemoryConfig(DramMemory):
    """Main memory behind the LLC: a DRAM preset (with ``links``: one cube's, ``cubes`` of
    them), where lines and pages go in it, and the fixed latency of the path from the LLC to
    the memory controller (or the links) and back."""

    path_latency_ns: LatencyNs = Field(10.0, description="LLC to the memory controller and back, "
                                       "beyond the DRAM's own timing")  # fmt: skip
    cubes: int = Field(1, ge=1, le=64, description="memory stacks behind the links (with a "
                       "links section)")  # fmt: skip
    xor_cube: bool = Field(False, description="XOR higher address bits into the cube index")
    internal_gbps: OptionalGbps = Field(0, description="bandwidth between a cube's vaults and "
                                        "its logic layer (TSVs), shared by every access to the "
                                        "cube; 0: not modelled")  # fmt: skip


class CpuSystemConfig(Strict):
    kind: Literal["cpu"]
    name: str
    description: str = ""
    seed: int = Field(0, ge=0)
    cores: CoresConfig
    caches: CachesConfig = CachesConfig()
    memory: MemoryConfig
    links: LinkConfig | None = Field(None, description="SerDes links to 3D-stacked memory "
                                     "cubes; none: DDR channels on the host")  # fmt: skip
    energy: str = Field("cpu", description="energy table (ndpsim/presets/energy)")

    @model_validator(mode="after")
    def _cubes_need_links(self) -> CpuSystemConfig:
        m = self.memory
        if self.links is None and (m.cubes != 1 or m.internal_gbps or m.xor_cube):
            raise ValueError("memory.cubes, memory.internal_gbps and memory.xor_cube describe "
                             "3D stacks behind links; add a links section")  # fmt: skip
        return self

    def dram_preset(self) -> DramPreset:
        return self.memory.dram_preset()


def check_files(config: CpuSystemConfig) -> None:
    """Fail at load if the DRAM preset or the energy table does not load."""
    config.dram_preset()
    load_energy_table(config.energy)


def dependencies(config: CpuSystemConfig) -> dict:
    return {
        "dram": config.dram_preset().model_dump(mode="json"),
        "energy": load_energy_table(config.energy).model_dump(mode="json"),
    }
