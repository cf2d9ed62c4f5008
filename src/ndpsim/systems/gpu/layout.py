"""Where each component of a GPU system sits in the compiled model's flat arrays, and what it is
called: the links (the memory network's first, then the SMs' crossbar ports, the L2 slices'
ports, the cubes' TSVs), the cores (the GPU's SMs, then the stack processors, see
:mod:`ndpsim.hw.core.contract`) and the DRAM channels. The invariant checks and the results name
components through it."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np

from ndpsim.engine.clock import ClockDomain
from ndpsim.hw.core.contract import HOST, LOGIC_LAYER, Cores, place_cores
from ndpsim.hw.dram.spec import DramPreset
from ndpsim.hw.hops import Hops, build_hops
from ndpsim.hw.host_interface import HostInterface, build_host_interface
from ndpsim.hw.network import Network
from ndpsim.policy.offload import OFFLOAD_SCHEMES
from ndpsim.systems.gpu.config import GpuSystemConfig


def gpu_cores(config: GpuSystemConfig) -> Cores:
    """The GPU's SMs and, with near-data processing, the processor its offload scheme names in
    every stack, on the SMs' clock."""
    kinds = ["sm"]
    if config.ndp:
        kinds.append(OFFLOAD_SCHEMES.get(config.ndp.offload).processor)
    # the GPU's memory path takes requests from the host's crossbar and the stacks' logic
    # layers; units beside the banks need a system whose path reaches them (MPU's)
    return place_cores(kinds, config, ClockDomain.from_ghz("sm", config.sm.clock_ghz),
                       sites=(HOST, LOGIC_LAYER))  # fmt: skip


@dataclass(frozen=True)
class GpuLayout:
    config: GpuSystemConfig
    network: Network
    core: ClockDomain  # the GPU SMs' clock
    dram_preset: DramPreset  # one cube's
    channels_per_cube: int
    cores: Cores
    scheme: Any  # the offload scheme (an ndpsim.policy.offload.OffloadScheme), or None

    @property
    def gpu_sms(self) -> int:
        return self.cores.host_units

    @property
    def stack_slots(self) -> int:
        """Warp slots of a stack's processors together: the offloads one stack takes at once
        (the most of any stack)."""
        units = self.cores.logic_layer_units(self.config.memory.cubes)
        slots = np.where(units >= 0, self.cores.slots()[units], 0)
        return int(slots.sum(axis=1).max(initial=0))

    @property
    def sms(self) -> int:
        """The GPU's and the stacks'."""
        return self.cores.count

    @cached_property
    def host(self) -> HostInterface:
        """Per cube, the GPU's link towards it and the link back (TX and RX channels): its own
        in a star, else its port's (shared with the other cubes of that port)."""
        return build_host_interface(self.network)

    @cached_property
    def hops(self) -> Hops:
        """The cube network's next-hop table, for packets between cubes."""
        return build_hops(self.network)

    def link_label(self, i: int) -> str:
        net = self.network
        if i < len(net.links):
            return net.link_label(i, "gpu")
        i -= len(net.links)
        if i < self.config.sm.count:
            return f"sm{i}->xbar"
        i -= self.config.sm.count
        if i < self.config.l2.slices:
            return f"l2slice{i}->xbar"
        return f"cube{i - self.config.l2.slices}-tsv"

    def channel_label(self, ch: int) -> str:
        return f"cube{ch // self.channels_per_cube}-vault{ch % self.channels_per_cube}"

    def processor_label(self, s: int) -> str:
        return self.cores.label(s)
