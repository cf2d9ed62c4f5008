"""The contract every kind of processing core implements, and the registry of kinds.

A system's cores come in groups, one per kind: the GPU's SMs, processors in each memory stack's
logic layer (TOM's stack SM, SNDP's NSU), and, with MPU and ALP, near-bank units and CPU cores.
A kind says how many units a system has and where each sits (its :class:`Placement`), its clock,
its warp slots, the compiled model that runs it and the counters that model keeps for every
unit. A unit sits on the host (it takes a launch's CTAs, and its requests reach memory over the
host's links), in a stack's logic layer (any number of units per stack; their requests enter
the stack's vault network there, and they run the blocks offloaded to their stack), or on a
DRAM die beside the banks of one channel or bank group (it reaches those banks without
crossing the logic layer). The system builder places the groups one after the other in its
model's arrays (:func:`place_cores`), refusing a site its memory path does not reach memory
from; the results read each group's counters back under the kind's name, and the labels of
timelines and checks come from the same place.

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

#: Where a unit sits: on the host, in a memory stack's logic layer, or beside DRAM banks.
HOST, LOGIC_LAYER, BANKS = "host", "logic-layer", "banks"
SITES = (HOST, LOGIC_LAYER, BANKS)


@dataclass(frozen=True)
class Placement:
    """Where one unit sits, and so where its memory requests enter the memory system: from the
    host over its links (``HOST``), in ``stack``'s logic layer (``LOGIC_LAYER``), or on a DRAM
    die beside the banks of ``channel`` of ``stack`` (``BANKS``; ``bank_group`` narrows it to
    one bank group of the channel, -1 for all of its banks)."""

    site: str = HOST
    stack: int = -1
    channel: int = -1
    bank_group: int = -1

    def __post_init__(self) -> None:
        if self.site not in SITES:
            raise ConfigError(f"unknown site {self.site!r}; a unit sits at one of "
                              f"{', '.join(SITES)}")  # fmt: skip
        in_memory = self.site != HOST
        if (self.stack >= 0) != in_memory or (self.channel >= 0) != (self.site == BANKS):
            raise ConfigError(f"a unit at site {self.site!r} needs "
                              + {HOST: "no stack or channel",
                                 LOGIC_LAYER: "a stack and no channel",
                                 BANKS: "a stack and a channel"}[self.site]
                              + f", got stack {self.stack}, channel {self.channel}")  # fmt: skip
        if (self.bank_group >= 0 and self.site != BANKS) or self.bank_group < -1:
            raise ConfigError(f"bank group {self.bank_group}: only a unit beside banks has one")

    def reaches(self) -> str:
        """Where its requests enter the memory system, in words (for errors and docs)."""
        if self.site == HOST:
            return "the host's links"
        if self.site == LOGIC_LAYER:
            return f"stack {self.stack}'s logic layer"
        group = f", bank group {self.bank_group}" if self.bank_group >= 0 else ""
        return f"the banks of channel {self.channel} of stack {self.stack}{group}"


class CoreKind(ABC):
    """What a kind of core declares; the defaults are a SIMT core on the host."""

    #: The compiled model that runs its units (a system runs the models it knows, see
    #: :func:`place_cores`).
    model: ClassVar[str] = SIMT
    #: Where its units sit (:data:`SITES`): on the host (they take the CTAs of a launch), in a
    #: stack's logic layer (they run the blocks offloaded to their stack) or beside banks.
    site: ClassVar[str] = HOST
    #: The counters the model keeps for each unit, in the order of its statistics array.
    stat_names: ClassVar[tuple[str, ...]]
    #: Whether its units take a launch's CTAs; None: by its site (a host core does; a unit in
    #: a stack runs what is offloaded to it). A kind beside banks that runs whole kernels
    #: (MPU's) says True.
    takes_ctas: ClassVar[bool | None] = None

    @property
    def takes_launch(self) -> bool:
        """Whether its units take a launch's CTAs (:attr:`takes_ctas`, by default by site)."""
        return self.site == HOST if self.takes_ctas is None else self.takes_ctas

    @property
    def in_stack(self) -> bool:
        """Whether its units sit in a memory stack (its logic layer or its DRAM dies)."""
        return self.site != HOST

    @abstractmethod
    def units(self, config: Any) -> int:
        """How many units of this kind the system has."""

    @abstractmethod
    def warp_slots(self, config: Any) -> int:
        """Warp slots of each unit."""

    def clock(self, config: Any, host: ClockDomain) -> ClockDomain:
        """Each unit's clock; by default the host cores'."""
        return host

    def place(self, unit: int, config: Any) -> Placement:
        """Where unit ``unit`` of the group sits. By default every unit of a host kind on the
        host, and one unit of a logic-layer kind per stack, in stack order; a kind with several
        units per stack, or beside banks, says where each is."""
        if self.site == HOST:
            return Placement()
        if self.site == LOGIC_LAYER:
            return Placement(LOGIC_LAYER, stack=unit)
        raise ConfigError(f"{type(self).__name__} sits beside banks: it must say which channel "
                          "of which stack each unit sits by (define place())")  # fmt: skip


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
    placements: tuple[Placement, ...]  # each unit's

    @property
    def end(self) -> int:
        return self.first + self.count

    @property
    def stacks(self) -> tuple[int, ...]:
        """Each unit's stack, -1 on the host."""
        return tuple(p.stack for p in self.placements)

    def label(self, unit: int) -> str:
        """A unit's name in timelines and invariant checks (``sm3``, ``nsu0``)."""
        return f"{self.name.replace('_', '-')}{unit}"

    def instance_labels(self) -> list[str] | None:
        """The names of the units' counters in results: host units by their index (None),
        others by where they sit: ``stack2`` (the one unit of its kind in stack 2's logic
        layer), ``stack2.1`` (the second of several), ``stack2.ch5`` (beside channel 5's banks),
        ``stack2.ch5.bg1`` (beside one bank group of it)."""
        if not self.kind.in_stack:
            return None
        labels = []
        for p in self.placements:
            if p.site == BANKS:
                group = f".bg{p.bank_group}" if p.bank_group >= 0 else ""
                labels.append(f"stack{p.stack}.ch{p.channel}{group}")
            else:
                labels.append(f"stack{p.stack}")
        if len(set(labels)) < len(labels):  # several in one place: numbered there
            seen: dict[str, int] = {}
            for k, label in enumerate(labels):
                seen[label] = seen.get(label, -1) + 1
                labels[k] = f"{label}.{seen[label]}"
        return labels


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

    def placements(self) -> list[Placement]:
        """Every unit's placement, in unit order."""
        return [p for g in self.groups for p in g.placements]

    def stack(self) -> np.ndarray:
        """int64[units]: the stack each unit sits in, -1 on the host."""
        return np.array([p.stack for p in self.placements()], np.int64)

    def take_ctas(self) -> np.ndarray:
        """int64[units]: 1 for each unit that takes a launch's CTAs, else 0."""
        return np.array([int(g.kind.takes_launch) for g in self.groups for _ in range(g.count)],
                        np.int64)  # fmt: skip

    def programs(self, count: int) -> np.ndarray:
        """int64[units]: the program whose CTAs each unit takes when ``count`` programs share
        the system, the units that take CTAs split among them in contiguous groups whose sizes
        differ by one at most; -1 for the units that take none."""
        takers = np.flatnonzero(self.take_ctas())
        if count < 1 or len(takers) < count:
            raise ConfigError(f"{count} programs need at least as many cores that take a "
                              f"launch's CTAs; the system has {len(takers)}")  # fmt: skip
        out = np.full(self.count, -1, np.int64)
        out[takers] = np.arange(len(takers)) * count // len(takers)
        return out

    def channel(self) -> np.ndarray:
        """int64[units]: the channel whose banks each unit sits beside, -1 for the others."""
        return np.array([p.channel for p in self.placements()], np.int64)

    def logic_layer_units(self, stacks: int) -> np.ndarray:
        """int64[stacks, most]: the units in each stack's logic layer (those that run the
        blocks offloaded to it), in unit order, padded with -1 (at least one column)."""
        units: list[list[int]] = [[] for _ in range(stacks)]
        for u, p in enumerate(self.placements()):
            if p.site == LOGIC_LAYER:
                if p.stack >= stacks:
                    raise ConfigError(f"core {self.label(u)} sits in stack {p.stack}; the "
                                      f"system has {stacks} stacks")  # fmt: skip
                units[p.stack].append(u)
        table = np.full((stacks, max([1, *map(len, units)])), -1, np.int64)
        for k, members in enumerate(units):
            table[k, : len(members)] = members
        return table


def place_cores(names: Sequence[str], config: Any, host: ClockDomain,
                models: Sequence[str] = (SIMT,),
                sites: Sequence[str] = SITES) -> Cores:  # fmt: skip
    """The groups of the registered kinds ``names``, host kinds first (they take a launch's
    CTAs in unit order), for a system whose compiled model runs ``models`` and whose memory
    path takes requests from the units at ``sites``."""
    kinds = [(name, CORES.get(name)()) for name in names]
    kinds.sort(key=lambda pair: pair[1].in_stack)
    groups = []
    first = 0
    for name, kind in kinds:
        if kind.model not in models:
            raise ConfigError(f"core kind {name!r} runs on the {kind.model!r} model; this "
                              f"system runs {', '.join(map(repr, models))}")  # fmt: skip
        count = kind.units(config)
        placements = tuple(kind.place(u, config) for u in range(count))
        for p in placements:
            if p.site not in sites:
                raise ConfigError(f"core kind {name!r} has a unit at {p.reaches()}; this "
                                  "system's memory path takes requests only from units at "
                                  f"{', '.join(sites)}")  # fmt: skip
        groups.append(CoreGroup(name, kind, first, count, kind.clock(config, host).period_ps,
                                kind.warp_slots(config), placements))  # fmt: skip
        first += count
    return Cores(tuple(groups))
