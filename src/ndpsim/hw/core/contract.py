"""The contract every kind of processing core implements, and the registry of kinds.

A system's cores come in groups, one per kind: the GPU's SMs, one processor in each memory
stack's logic layer (TOM's stack SM, SNDP's NSU), and, with MPU and ALP, near-bank units and CPU
cores. A kind says how many units a system has and where each sits (on the host, taking the
launch's CTAs, or in a memory stack, running the blocks offloaded to it), its clock, its warp
slots, the compiled model that runs it and the counters that model keeps for every unit. The
system builder places the groups one after the other in its model's arrays
(:func:`place_cores`); the results read each group's counters back under the kind's name, and
the labels of timelines and checks come from the same place.

A kind is a class registered in :data:`CORES` by its module in this package (one file, one
registration line); it reads the system's configuration, never other components.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from ndpsim.engine.clock import ClockDomain
from ndpsim.errors import ConfigError
from ndpsim.registry import Registry

#: The compiled model every shipped kind runs on: the SIMT SM of :mod:`ndpsim.hw.core.sm`.
SIMT = "simt"


class CoreKind(ABC):
    """What a kind of core declares; the defaults are a SIMT core on the host."""

    #: The compiled model that runs its units (a system runs the models it knows, see
    #: :func:`place_cores`).
    model: ClassVar[str] = SIMT
    #: Where its units sit: in a memory stack (they run the blocks offloaded to their stack) or
    #: on the host (they take the CTAs of a launch).
    in_stack: ClassVar[bool] = False
    #: The counters the model keeps for each unit, in the order of its statistics array.
    stat_names: ClassVar[tuple[str, ...]]

    @abstractmethod
    def units(self, config: Any) -> int:
        """How many units of this kind the system has."""

    @abstractmethod
    def warp_slots(self, config: Any) -> int:
        """Warp slots of each unit."""

    def clock(self, config: Any, host: ClockDomain) -> ClockDomain:
        """Each unit's clock; by default the host cores'."""
        return host

    def stack_of(self, unit: int, config: Any) -> int:
        """The memory stack unit ``unit`` of the group sits in (-1: the host); by default one
        unit per stack, in stack order."""
        return unit if self.in_stack else -1


CORES: Registry[type[CoreKind]] = Registry("core kind", "ndpsim.hw.core")


@dataclass(frozen=True)
class CoreGroup:
    """The units of one kind, ``first .. first + count - 1`` in the model's arrays."""

    name: str  # the registered name: the counter group and the units' label
    kind: CoreKind
    first: int
    count: int
    period_ps: int
    warp_slots: int
    stacks: tuple[int, ...]  # each unit's stack, -1 on the host

    @property
    def end(self) -> int:
        return self.first + self.count

    def label(self, unit: int) -> str:
        """A unit's name in timelines and invariant checks (``sm3``, ``nsu0``)."""
        return f"{self.name.replace('_', '-')}{unit}"

    def instance_labels(self) -> list[str] | None:
        """The names of the units' counters in results: stack units by their stack, host
        units by their index (None)."""
        return [f"stack{k}" for k in self.stacks] if self.kind.in_stack else None


@dataclass(frozen=True)
class Cores:
    """Every core of a system, group by group, numbered as the compiled model numbers them."""

    groups: tuple[CoreGroup, ...]

    @property
    def count(self) -> int:
        return self.groups[-1].end if self.groups else 0

    @property
    def host_units(self) -> int:
        """Units on the host; they come first."""
        return sum(g.count for g in self.groups if not g.kind.in_stack)

    def group_of(self, unit: int) -> CoreGroup:
        for group in self.groups:
            if group.first <= unit < group.end:
                return group
        raise IndexError(f"no core {unit}; the system has {self.count}")

    def label(self, unit: int) -> str:
        group = self.group_of(unit)
        return group.label(unit - group.first)

    def period_ps(self) -> np.ndarray:
        """int64[units]: each unit's clock period."""
        return np.concatenate([np.full(g.count, g.period_ps, np.int64) for g in self.groups])

    def slots(self) -> np.ndarray:
        """int64[units]: each unit's warp slots (the model's arrays hold the most of them)."""
        return np.concatenate([np.full(g.count, g.warp_slots, np.int64) for g in self.groups])

    def stack(self) -> np.ndarray:
        """int64[units]: the stack each unit sits in, -1 on the host."""
        return np.concatenate([np.array(g.stacks, np.int64) for g in self.groups])

    def stack_unit(self, stacks: int) -> np.ndarray:
        """int64[stacks]: the unit that runs the blocks offloaded to each stack, -1 if none."""
        unit = np.full(stacks, -1, np.int64)
        for s, k in enumerate(self.stack()):
            if k >= 0:
                if unit[k] >= 0:
                    raise ConfigError(f"stack {k} has two stack processors, cores "
                                      f"{self.label(int(unit[k]))} and {self.label(s)}; "
                                      "offloaded blocks need one per stack")  # fmt: skip
                unit[k] = s
        return unit


def place_cores(names: Sequence[str], config: Any, host: ClockDomain,
                models: Sequence[str] = (SIMT,)) -> Cores:  # fmt: skip
    """The groups of the registered kinds ``names``, host kinds first (they take a launch's
    CTAs in unit order), for a system whose compiled model runs ``models``."""
    kinds = [(name, CORES.get(name)()) for name in names]
    kinds.sort(key=lambda pair: pair[1].in_stack)
    groups = []
    first = 0
    for name, kind in kinds:
        if kind.model not in models:
            raise ConfigError(f"core kind {name!r} runs on the {kind.model!r} model; this "
                              f"system runs {', '.join(map(repr, models))}")  # fmt: skip
        count = kind.units(config)
        stacks = tuple(kind.stack_of(u, config) for u in range(count))
        groups.append(CoreGroup(name, kind, first, count, kind.clock(config, host).period_ps,
                                kind.warp_slots(config), stacks))  # fmt: skip
        first += count
    return Cores(tuple(groups))
