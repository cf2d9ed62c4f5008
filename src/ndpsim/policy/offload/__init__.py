"""Offload schemes: which blocks of a kernel run near memory, on which stack, and under what
control (``ndp.offload`` names one).

A scheme is an :class:`OffloadScheme` registered in :data:`OFFLOAD_SCHEMES` by its module in
this package. It names the compiler pass that finds its blocks, chooses each instance's
destination from where its data lies, sets the compiled offload controller's parameters, may
bring an epoch controller, and summarizes what it did. It sees configuration, the launch's
plan and counters, never the hardware components.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any, ClassVar

import numpy as np

from ndpsim.registry import Registry


class OffloadScheme(ABC):
    """What every scheme decides, with defaults where schemes may not differ."""

    #: How a stack processor runs a block (``ndpsim.hw.gpu.offload.MODE_*``: whole, as TOM's
    #: stack SM does, or partitioned with the GPU, as SNDP's NSU does).
    execution: ClassVar[int]
    #: The code of the scheme's compiled decision for each instance a warp reaches, from
    #: ``ndpsim.hw.gpu.offload.DECISIONS.register(function, name)`` in the scheme's module.
    decision: ClassVar[int]
    #: What the stack processors are called in counters and labels (``stack_sm``, ``nsu``).
    processor: ClassVar[str]
    #: Whether a stack processor's write sends an invalidation to the GPU's caches.
    stack_writes_invalidate: ClassVar[bool] = False

    def check(self, config: Any) -> None:
        """Refuse, with a ConfigError, settings of the system this scheme cannot honour."""
        return None

    @abstractmethod
    def offload_pass(self, ndp: Any) -> str:
        """The registered compiler pass (:mod:`ndpsim.analysis.passes`) finding the blocks."""

    def note_kernel(self, kernels: dict[str, Any], function: Any, candidates: Any) -> None:
        """Keep what :meth:`summary` reports about a launched kernel's blocks (once per
        kernel)."""
        return None

    @abstractmethod
    def destinations(self, tx_owner: np.ndarray, tx_position: np.ndarray,
                     tx_line: np.ndarray, line_stacks: np.ndarray, stack_of: Any,
                     instances: int, config: Any) -> np.ndarray:  # fmt: skip
        """Each instance's destination stack (-1: it touches no memory), from its line
        transactions in stream order: their owner instance, stream position, physical line and
        that line's stack; ``stack_of(lines)`` maps other lines to stacks."""

    def configure(self, params: np.ndarray, ndp: Any) -> None:
        """Set the scheme's own entries of the compiled offload parameters."""
        return None

    def check_blocks(self, candidates: Any, ndp: Any) -> None:
        """Refuse blocks the hardware could never run (ConfigError)."""
        return None

    def controller(self, ndp: Any, core: Any) -> Any | None:
        """The epoch controller of a run, if the scheme adapts between epochs."""
        return None

    def summary(self, plan: Any, totals: dict[str, int], controller: Any,
                fewest_credits: np.ndarray, time_ps: int, ndp: Any) -> dict[str, Any]:  # fmt: skip
        """The scheme's own figures of a run's offloading."""
        return {}


def credit_capacity(ndp: Any) -> np.ndarray:
    """The entries of each stack processor's buffers that credits reserve (SNDP sec. 4.3), by
    ``ndpsim.hw.gpu.offload.CREDIT_*``; a scheme without credits never reserves them."""
    return np.array([ndp.command_entries, ndp.read_data_entries, ndp.write_address_entries])


OFFLOAD_SCHEMES: Registry[OffloadScheme] = Registry("offload scheme", "ndpsim.policy.offload")
