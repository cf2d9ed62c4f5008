"""Configuration of a GPU attached to memory cubes: the tree of a system preset file.

Every section is strict: an unknown key, a missing one or a value out of range is a
:class:`ConfigError` naming the file and the dotted key, raised when the preset is loaded.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import AfterValidator, Field, model_validator

from ndpsim.config import ClockGHz, Cycles, LatencyNs, OptionalGbps, Strict
from ndpsim.energy import load_energy_table
from ndpsim.hw.core.simt_config import SimtConfig
from ndpsim.hw.dram.spec import DramPreset, load_dram_preset
from ndpsim.policy.mapping import ADDRESS_MAPPINGS
from ndpsim.policy.offload import OFFLOAD_SCHEMES
from ndpsim.systems.skeleton.links import LinkConfig


class SmConfig(SimtConfig):
    count: int = Field(ge=1, le=4096, description="at most 4096 SMs (today's largest GPUs "
                       "have about 150); each has its own L1 and warp state")  # fmt: skip


class CacheConfig(Strict):
    size_bytes: int = Field(ge=1, le=2**30, description="of all slices together (L2); at most "
                            "1 GiB")  # fmt: skip
    ways: int = Field(ge=1, le=1024, description="at most 1024 (a lookup searches its set way "
                      "by way)")  # fmt: skip
    line_bytes: int = Field(128, ge=32, le=4096)
    mshrs: int = Field(ge=1, le=4096, description="per cache (L1) or slice (L2), at most 4096 "
                       "(a miss searches them one by one)")  # fmt: skip
    hit_latency: Cycles = Field(ge=1, description="cycles of the cache's clock")
    enabled: bool = True

    def _parts(self) -> int:
        return 1

    @model_validator(mode="after")
    def _whole_sets(self) -> CacheConfig:
        """A cache holds whole sets (in each slice), so that its capacity is the one asked for
        rather than silently rounded down."""
        per_set = self._parts() * self.ways * self.line_bytes
        if self.size_bytes % per_set:
            slices = f" x {self._parts()} slices" if self._parts() > 1 else ""
            raise ValueError(
                f"size_bytes ({self.size_bytes}) must be a multiple of ways x line_bytes{slices} "
                f"({per_set} B)"
            )
        return self


class L2Config(CacheConfig):
    slices: int = Field(ge=1, le=1024, description="at most 1024")
    clock_ghz: ClockGHz

    def _parts(self) -> int:
        return self.slices


class CrossbarConfig(Strict):
    clock_ghz: ClockGHz
    latency: Cycles = Field(ge=0, description="cycles from an SM to an L2 slice (and back)")
    bytes_per_cycle: int = Field(ge=1, le=2**20, description="per port, at most 1 MiB")


class MemoryConfig(Strict):
    cubes: int = Field(ge=1, le=64, description="memory stacks, at most 64 (the routes "
                       "between every pair of them are tabulated when the system is "
                       "built)")  # fmt: skip
    dram: str = Field(description="DRAM preset of one cube (ndpsim/presets/dram)")
    dram_overrides: dict = Field(default_factory=dict)
    mapping: Annotated[str, AfterValidator(ADDRESS_MAPPINGS.check)] = Field(
        "interleaved", description="address mapping (ndpsim.policy.mapping): 'interleaved' "
        "(lines over cubes, TOM sec. 5.1) or 'random-page' (pages in one cube each, placed at "
        "random, SNDP sec. 5)"
    )  # fmt: skip
    xor_cube: bool = Field(True, description="XOR higher address bits into the cube index")
    page_bytes: int = Field(4096, ge=256, le=2**30, description="at most 1 GiB")
    internal_gbps: OptionalGbps = Field(
        0, description="bandwidth between a cube's vaults and its logic layer (TSVs), "
        "shared by every access to the cube; 0: not modelled (the DRAM's own limit)"
    )  # fmt: skip

    def dram_preset(self) -> DramPreset:
        return load_dram_preset(self.dram, self.dram_overrides)


class NdpConfig(Strict):
    """A processor in each memory stack's logic layer and the offloading of code blocks to it:
    TOM's stack SMs (Hsieh et al. ISCA 2016, sec. 3-4 and Table 1) or SNDP's NSUs with
    partitioned execution (Kim et al. SC 2017, sec. 3-4, 7 and Table 2). The TOM keys
    (blocks, control, warp_limit, busy_*, mapping, learning_*, pcie_*, ideal,
    run_to_first_access, flush_stack_l1) and the SNDP keys (decision, ratio, cache_aware,
    target, nsu_clock_ghz, *_entries, ready_packets, epoch_cycles) apply to their own scheme
    only."""

    offload: Annotated[str, AfterValidator(OFFLOAD_SCHEMES.check)] = Field(
        description="offload scheme (ndpsim.policy.offload): 'tom' or 'sndp'; no default, so "
        "a near-data preset always says which"
    )
    stack_warps: int = Field(48, ge=1, le=1024, description="warp slots of each stack "
                             "processor (TOM Table 1, SNDP Table 2), at most 1024")  # fmt: skip
    stack_units: int = Field(1, ge=1, le=64, description="processors in each stack's logic "
                             "layer (TOM and SNDP have one); an offloaded block runs on the "
                             "first with a free warp slot, at most 64")  # fmt: skip
    offload_latency_cycles: Cycles = Field(10, ge=0, description="offload pipeline (sec. 4.2)")
    blocks: Literal["loops", "maximal"] = Field(
        "loops", description="TOM's candidate blocks (sec. 3.1): 'loops' takes each loop, with "
        "its set-up code, as a block of its own and the loop-free code between loops as others "
        "(Figure 4); 'maximal' the most saving ranges, a loop and the accesses around it "
        "together (see docs/offload.md)"
    )  # fmt: skip
    control: bool = Field(True, description="dynamic offload aggressiveness control (sec. 3.3)")
    warp_limit: bool = Field(
        False, description="bound a stack's pending offloads by its SM's warp slots even "
        "without `control` (the hardware's limit, sec. 3.3): a warp finding no free slot runs "
        "the block itself; `control` always bounds them"
    )  # fmt: skip
    busy_threshold: float = Field(
        0.8, gt=0, le=1, description="Channel Busy Monitor: utilization at which a TX/RX "
        "channel counts as busy (the paper gives no value; see docs/reproductions/tom.md)"
    )  # fmt: skip
    busy_window_cycles: Cycles = Field(1000, ge=1, description="monitor window, core cycles")
    mapping: Literal["baseline", "learned"] = Field(
        "baseline", description="learned: TOM's programmer-transparent data mapping (sec. 3.2)"
    )
    learning_fraction: float = Field(0.001, gt=0, le=1, description="instances in the "
                                      "learning phase (sec. 4.3: 0.1%)")  # fmt: skip
    pcie_latency_ns: LatencyNs = Field(
        1000, description="round trip added to every GPU access during the learning phase, "
        "whose data sits in CPU memory (sec. 4.3, 5.1: the PCIe latency, not its bandwidth)"
    )  # fmt: skip
    ideal: bool = Field(False, description="Figure 2's ideal NDP: offloading costs nothing and "
                        "every block finds its data in its own stack")  # fmt: skip
    run_to_first_access: bool = Field(
        True, description="footnote 4: a warp runs its block on the GPU up to the block's "
        "first memory access, whose stack is the destination; the stack SM then runs the "
        "block from its start (off in the ideal system)"
    )  # fmt: skip
    flush_stack_l1: bool = Field(
        True, description="sec. 4.4.2: a stack SM invalidates its L1 before it starts an "
        "offloaded block (off in the ideal system)"
    )  # fmt: skip
    decision: Literal["always", "ratio", "dynamic"] = Field(
        "always", description="SNDP: offload every instance (naive, sec. 6), a random `ratio` "
        "of them (sec. 7.1), or a ratio Algorithm 1 adapts every epoch (sec. 7.2)"
    )  # fmt: skip
    ratio: float = Field(1.0, ge=0, le=1, description="SNDP: the static offload ratio")
    cache_aware: bool = Field(False, description="SNDP: never offload a block whose measured "
                              "benefit does not beat its register traffic (sec. 7.3)")  # fmt: skip
    target: Literal["first", "optimal"] = Field(
        "first", description="SNDP: the target NSU is the stack its first memory "
        "instruction touches most (sec. 4.1), or the stack holding most of all its accesses "
        "(Figure 5's optimum when every remote access costs the same)"
    )  # fmt: skip
    nsu_clock_ghz: ClockGHz | None = Field(None, description="clock of the stack "
                                        "processors; default: the GPU SMs' clock")  # fmt: skip
    command_entries: int = Field(10, ge=1, le=65536, description="SNDP: NSU offload command "
                                 "buffer, at most 65536")  # fmt: skip
    read_data_entries: int = Field(256, ge=1, le=65536, description="SNDP: NSU read data "
                                   "buffer, at most 65536")  # fmt: skip
    write_address_entries: int = Field(256, ge=1, le=65536, description="SNDP: NSU write "
                                       "address buffer, at most 65536")  # fmt: skip
    ready_packets: int = Field(64, ge=32, le=65536, description="SNDP: GPU SM ready packet "
                               "buffer (at least one warp instruction's 32 lines, at most "
                               "65536)")  # fmt: skip
    epoch_cycles: Cycles = Field(30000, ge=1, description="SNDP: Algorithm 1's epoch, core "
                                 "cycles")  # fmt: skip


class GpuSystemConfig(Strict):
    name: str
    description: str = ""
    kind: Literal["gpu"]
    sm: SmConfig
    l1: CacheConfig
    l2: L2Config
    crossbar: CrossbarConfig
    memory: MemoryConfig
    links: LinkConfig
    ndp: NdpConfig | None = None
    energy: str = Field("default", description="energy table (ndpsim/presets/energy)")
    seed: int = Field(0, ge=0, le=2**63 - 1, description="of random placements and offload "
                      "draws, a 63-bit number")  # fmt: skip


def dependencies(config: GpuSystemConfig) -> dict:
    """The DRAM preset (overrides applied) and the energy table the config names."""
    return {
        "dram": config.memory.dram_preset().model_dump(mode="json"),
        "energy": load_energy_table(config.energy).model_dump(mode="json"),
    }


def check_files(config: GpuSystemConfig) -> None:
    """Fail at load, not when a run starts, if the DRAM preset or the energy table the config
    names does not load."""
    config.memory.dram_preset()
    load_energy_table(config.energy)
