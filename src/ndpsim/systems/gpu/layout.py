"""Where each component of a GPU system sits in the compiled model's flat arrays, and what it is
called: the links (the memory network's first, then the SMs' crossbar ports, the L2 slices'
ports, the cubes' TSVs), the SMs (the GPU's, then one per stack) and the DRAM channels. The
invariant checks and the results name components through it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ndpsim.engine.clock import ClockDomain
from ndpsim.hw.dram.spec import DramPreset
from ndpsim.hw.network import Network
from ndpsim.systems.gpu.config import GpuSystemConfig


@dataclass(frozen=True)
class GpuLayout:
    config: GpuSystemConfig
    network: Network
    core: ClockDomain  # the GPU SMs' clock
    dram_preset: DramPreset  # one cube's
    channels_per_cube: int
    gpu_sms: int
    sms: int  # the GPU's and the stacks'
    scheme: Any  # the offload scheme (an ndpsim.policy.offload.OffloadScheme), or None

    def host_links(self) -> tuple[np.ndarray, np.ndarray]:
        """Per cube, the GPU's link towards it and the link back (TX and RX channels): its own
        in a star, else its port's (shared with the other cubes of that port)."""
        net = self.network
        to_cube = np.array([net.link_id(net.host, net.port[k]) for k in range(net.cubes)],
                           np.int64)  # fmt: skip
        from_cube = np.array([net.link_id(net.port[k], net.host) for k in range(net.cubes)],
                             np.int64)  # fmt: skip
        return to_cube, from_cube

    def ports(self) -> np.ndarray:
        """Per cube, the cube whose link to the GPU its traffic takes (itself in a star)."""
        return np.array(self.network.port, dtype=np.int64)

    def link_label(self, i: int) -> str:
        net = self.network
        if i < len(net.links):
            a, b = net.links[i]
            name = lambda n: "gpu" if n == net.host else f"cube{n}"  # noqa: E731
            return f"{name(a)}->{name(b)}"
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
        if s < self.gpu_sms:
            return f"sm{s}"
        return f"{self.scheme.processor.replace('_', '-')}{s - self.gpu_sms}"
