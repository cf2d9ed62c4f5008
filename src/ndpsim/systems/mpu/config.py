"""The preset model of an ``mpu`` system: MPU's near-bank SIMT processors (Xie et al., MICRO
2021, Table II), each value's source cited in ``presets/systems/mpu.toml``."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import AfterValidator, Field, field_validator, model_validator

from ndpsim.config import Strict
from ndpsim.energy import load_energy_table
from ndpsim.errors import ConfigError
from ndpsim.hw.core.simt_config import SimtConfig
from ndpsim.hw.dram.spec import DramPreset
from ndpsim.policy.location import LOCATION_POLICIES
from ndpsim.policy.mapping import ADDRESS_MAPPINGS
from ndpsim.systems.skeleton.memory import DramMemory


class ProcessorsConfig(Strict):
    """The processors (memory cubes) in a 2D grid, each a 2D grid of cores; every core has
    ``subcores`` subcores on the base die and as many near-bank units (NBUs) on one DRAM die."""

    columns: int = Field(ge=1, le=16, description="processors along x")
    rows: int = Field(ge=1, le=16, description="processors along y")
    core_columns: int = Field(ge=1, le=16, description="cores of a processor along x")
    core_rows: int = Field(ge=1, le=16, description="cores of a processor along y")
    subcores: int = Field(ge=1, le=16, description="subcores per core, and NBUs: one each")

    @property
    def count(self) -> int:
        return self.columns * self.rows

    @property
    def cores_per_processor(self) -> int:
        return self.core_columns * self.core_rows


class PipelineConfig(Strict):
    """The hybrid pipeline (sec. IV-B): where instructions run, and what crosses the TSVs."""

    near_bank: bool = Field(True, description="false: every instruction and register on the base "
                            "die, DRAM data over the TSVs (the paper's PonB)")  # fmt: skip
    locations: str = Field("annotation", description="instruction location policy "
                           "(ndpsim.policy.location)")  # fmt: skip
    shared_memory: Literal["near", "far"] = Field(
        "near", description="near-bank shared memory on the core's DRAM die, or on the base die"
    )
    instruction_bytes: int = Field(ge=1, le=1024, description="an offloaded instruction on "
                                   "the TSVs")  # fmt: skip
    commit_bytes: int = Field(ge=0, le=1024, description="a near-bank instruction's return to "
                              "its subcore for commit")  # fmt: skip
    move_request_bytes: int = Field(ge=0, le=1024, description="a far-bank register move "
                                    "engine's request for a near-bank copy")  # fmt: skip
    tsv_header_bytes: int = Field(ge=0, le=1024, description="of a DRAM transaction on the TSVs")
    remote_cache_bytes: int = Field(
        0, ge=0, le=2**24, multiple_of=128,
        description="per core, a read-only cache of the lines its loads fetched from other "
                    "cores' banks, fully associative, LRU (MPU-Sim's evicts at random), emptied "
                    "at each launch (0: none, as the paper's MPU; MPU-Sim's network interface "
                    "keeps 32768)")  # fmt: skip
    remote_cache_cycles: int = Field(1, ge=0, le=1000, description="a remote-cache hit's "
                                     "latency in core cycles (MPU-Sim: 1)")  # fmt: skip

    @field_validator("locations")
    @classmethod
    def _known_policy(cls, value: str) -> str:
        return LOCATION_POLICIES.check(value)


class InterconnectConfig(Strict):
    """A core's TSV bus to its DRAM die, and the 2D mesh of routers joining every core of every
    processor (links between processors are the off-chip ones)."""

    tsv_gbps: float = Field(gt=0, le=10**5)
    tsv_latency_ps: int = Field(ge=0, le=10**6)
    onchip_gbps: float = Field(gt=0, le=10**5)
    offchip_gbps: float = Field(gt=0, le=10**5)
    hop_latency_ps: int = Field(ge=0, le=10**6, description="a router and its on-chip link")
    offchip_latency_ps: int = Field(ge=0, le=10**6, description="a router and its off-chip link")
    header_bytes: int = Field(ge=1, le=1024, description="a network packet's header flit")
    flit_bytes: int = Field(ge=1, le=1024)


class MemoryConfig(DramMemory):
    """The DRAM of one processor, a channel per NBU, and where lines and pages go in it."""

    dram: str = Field(description="one processor's DRAM preset (ndpsim/presets/dram)")
    mapping: Annotated[str, AfterValidator(ADDRESS_MAPPINGS.check)] = "near-bank"


class MpuSystemConfig(Strict):
    kind: Literal["mpu"]
    name: str
    description: str = ""
    seed: int = Field(0, ge=0)
    processors: ProcessorsConfig
    core: SimtConfig
    pipeline: PipelineConfig
    interconnect: InterconnectConfig
    memory: MemoryConfig
    energy: str = Field("mpu", description="energy table (ndpsim/presets/energy)")

    @model_validator(mode="after")
    def _one_scheduler_per_subcore(self) -> MpuSystemConfig:
        if self.core.schedulers != self.processors.subcores:
            raise ValueError(f"core.schedulers ({self.core.schedulers}) must equal "
                             f"processors.subcores ({self.processors.subcores}): each subcore "
                             "has one warp scheduler")  # fmt: skip
        return self

    def dram_preset(self) -> DramPreset:
        return self.memory.dram_preset()


def check_files(config: MpuSystemConfig) -> None:
    """Fail at load if the DRAM preset does not load or has not one channel per NBU, or the
    energy table does not load."""
    dram = config.dram_preset()
    p = config.processors
    nbus = p.cores_per_processor * p.subcores
    if dram.organization.channels != nbus:
        raise ConfigError(f"memory.dram {config.memory.dram!r} has "
                          f"{dram.organization.channels} channels per processor; MPU needs one "
                          f"per near-bank unit, {nbus} ({p.cores_per_processor} cores x "
                          f"{p.subcores})")  # fmt: skip
    load_energy_table(config.energy)


def dependencies(config: MpuSystemConfig) -> dict:
    return {
        "dram": config.dram_preset().model_dump(mode="json"),
        "energy": load_energy_table(config.energy).model_dump(mode="json"),
    }
