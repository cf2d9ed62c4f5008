"""TOM's programmer-transparent data mapping (Hsieh et al. ISCA 2016, sec. 3.2 and 4.3).

During a short learning phase (the first 0.1% of offload-candidate instances) the GPU runs from
CPU memory over PCIe while a Memory Map Analyzer scores every *consecutive-bit* stack mapping
(the stack index taken from address bits ``b+1:b`` for b = 7 .. 16 with four stacks) by the
fraction of instances whose accesses all fall in one stack. The allocations candidates touched
are then copied to GPU memory with the best mapping; all other data keeps the baseline mapping.

The timing run drives the phase (:class:`LearningPhase`): it reports which instances GPU warps
reached first and when the last of them was done; :func:`learn_mapping` then scores the
mappings on exactly those instances' accesses, taken from the traces.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from ndpsim.hw.dram.mapping import AddressMapping
from ndpsim.simt.memory import DeviceMemory
from ndpsim.trace.work import LINE_BYTES

#: Lowest and highest least-significant bit of the candidate stack mappings (sec. 3.2.1).
FIRST_BIT, LAST_BIT = 7, 16


@dataclass
class LaunchAccesses:
    """The candidate instances of one launch and the physical lines each touches."""

    instances: int
    tx_owner: np.ndarray  # instance of each line transaction
    virtual_lines: np.ndarray
    physical_lines: np.ndarray


@dataclass
class MappingChoice:
    """What the learning phase decided, and how well each mapping co-locates blocks and data."""

    bit: int  # least significant bit of the chosen stack index
    learning_instances: int
    remap_lines: np.ndarray  # int64[ranges, 2]: physical line ranges given the chosen mapping
    remapped_allocations: list[str]
    colocation_baseline: float  # fraction of instances within one stack, baseline mapping
    colocation_best: float  # with the best consecutive-bit mapping over all instances
    best_bit: int
    colocation_learned: float  # with the chosen mapping, over all instances
    scores: dict[int, float] = field(default_factory=dict)  # learning-phase score of each bit

    def as_dict(self) -> dict:
        return {
            "bits": f"{self.bit + 1}:{self.bit}",
            "learning_instances": self.learning_instances,
            "remapped_allocations": self.remapped_allocations,
            "colocation_baseline": self.colocation_baseline,
            "colocation_best": self.colocation_best,
            "best_bits": f"{self.best_bit + 1}:{self.best_bit}",
            "colocation_learned": self.colocation_learned,
            "learning_scores": {f"{b + 1}:{b}": s for b, s in self.scores.items()},
        }


def single_stack_fraction(tx_owner: np.ndarray, stacks: np.ndarray) -> float:
    """Of the instances that touch memory, the fraction whose lines all sit in one stack."""
    single, touching = single_stack_counts(tx_owner, stacks)
    return single / touching if touching else 0.0


def single_stack_counts(tx_owner: np.ndarray, stacks: np.ndarray) -> tuple[int, int]:
    """How many instances touch memory, and how many of those have all their lines in one
    stack (counts, so launches can be added up one at a time)."""
    if not len(tx_owner):
        return 0, 0
    order = np.argsort(tx_owner, kind="stable")
    owner, stack = tx_owner[order], stacks[order]
    first = np.flatnonzero(np.concatenate([[True], owner[1:] != owner[:-1]]))
    lo = np.minimum.reduceat(stack, first)
    hi = np.maximum.reduceat(stack, first)
    return int(np.count_nonzero(lo == hi)), len(first)


def consecutive_stacks(physical_lines: np.ndarray, bit: int, cubes: int) -> np.ndarray:
    return ((physical_lines * LINE_BYTES) >> bit) & (cubes - 1)


_DECODE_SLICE = 1 << 22  # lines decoded at once


def stacks_under(mapping: AddressMapping, physical_lines: np.ndarray) -> np.ndarray:
    """The stack of each line under ``mapping``, decoded a slice at a time: a paper-size
    workload's blocks touch hundreds of millions of lines, and each decoding step makes a
    temporary as long as its input."""
    stacks = np.empty(len(physical_lines), dtype=np.int64)
    for start in range(0, len(physical_lines), _DECODE_SLICE):
        part = physical_lines[start : start + _DECODE_SLICE]
        stacks[start : start + len(part)] = mapping.decode(part * LINE_BYTES, ("cube",))["cube"]
    return stacks


def stacks_of(baseline: AddressMapping, remap: np.ndarray, learned: AddressMapping | None,
              physical_lines: np.ndarray) -> np.ndarray:  # fmt: skip
    """The stack of each line when the line ranges ``remap`` use ``learned`` and everything
    else ``baseline`` (what the timing model's address decoding does)."""
    stacks = stacks_under(baseline, physical_lines)
    if learned is not None:
        inside = np.zeros(len(physical_lines), dtype=bool)
        for lo, hi in remap:
            inside |= (physical_lines >= lo) & (physical_lines < hi)
        stacks[inside] = stacks_under(learned, physical_lines[inside])
    return stacks


@dataclass
class LearningPhase:
    """TOM's learning phase as a run sees it: how many instances the analyzer wants (a fraction
    of the instances that touch memory, at least one), the ones observed so far, numbered over
    all launches in order, and once the phase is over, when it ended and what it chose."""

    accesses: list[LaunchAccesses]
    wanted: int
    observed: list[int] = field(default_factory=list)
    end_ps: int | None = None
    choice: MappingChoice | None = None

    @classmethod
    def of(cls, accesses: list[LaunchAccesses], fraction: float) -> LearningPhase:
        touching = sum(len(np.unique(a.tx_owner)) for a in accesses)
        return cls(accesses, max(1, int(np.ceil(fraction * touching))) if touching else 0)

    @property
    def left(self) -> int:
        """Instances still to observe (0 once the phase is over)."""
        return 0 if self.end_ps is not None else self.wanted - len(self.observed)

    def record(self, launch: int, instances: np.ndarray) -> None:
        """Add instances of launch ``launch`` (numbered within it) to the observed ones."""
        offset = sum(a.instances for a in self.accesses[:launch])
        self.observed.extend(int(i) + offset for i in instances)


def learn_mapping(launches: Sequence[LaunchAccesses], observed: Sequence[int],
                  baseline: AddressMapping, cubes: int, memory: DeviceMemory,
                  line_of_physical) -> MappingChoice:  # fmt: skip
    """Score every consecutive-bit mapping on the ``observed`` instances (numbered over all
    launches in order), pick the best (ties: the lowest bits), and mark the allocations those
    instances touched. ``line_of_physical`` maps a physical address to its line in the device
    memory's physical layout, for the remapped allocations' line ranges."""
    owners, lines, vlines = [], [], []
    offset = 0
    for launch in launches:
        owners.append(launch.tx_owner + offset)
        lines.append(launch.physical_lines)
        vlines.append(launch.virtual_lines)
        offset += launch.instances
    owner = np.concatenate(owners) if owners else np.zeros(0, dtype=np.int64)
    line = np.concatenate(lines) if lines else np.zeros(0, dtype=np.int64)
    vline = np.concatenate(vlines) if vlines else np.zeros(0, dtype=np.int64)
    learning = np.isin(owner, np.asarray(observed, dtype=np.int64))
    bits = range(FIRST_BIT, LAST_BIT + 1)
    scores = {b: single_stack_fraction(owner[learning],
                                       consecutive_stacks(line[learning], b, cubes))
              for b in bits}  # fmt: skip
    chosen = max(bits, key=lambda b: (scores[b], -b))
    overall = {b: single_stack_fraction(owner, consecutive_stacks(line, b, cubes)) for b in bits}
    best = max(bits, key=lambda b: (overall[b], -b))
    touched = np.unique(vline[learning] * LINE_BYTES)
    names, ranges = [], []
    for alloc in memory.allocations:
        at = np.searchsorted(touched, alloc.address)
        if at < len(touched) and touched[at] < alloc.end:
            names.append(alloc.name)
            lo = line_of_physical(alloc.address)
            hi = line_of_physical(alloc.end - 1) + 1
            ranges.append((lo, hi))
    remap = np.array(ranges, dtype=np.int64).reshape(-1, 2)
    stacks = stacks_of(baseline, remap, baseline.with_field_at("cube", chosen), line)
    return MappingChoice(
        bit=chosen,
        learning_instances=len(observed),
        remap_lines=remap,
        remapped_allocations=names,
        colocation_baseline=single_stack_fraction(owner, stacks_under(baseline, line)),
        colocation_best=overall[best],
        best_bit=best,
        colocation_learned=single_stack_fraction(owner, stacks),
        scores=scores,
    )


__all__ = ["LaunchAccesses", "LearningPhase", "MappingChoice", "learn_mapping",
           "single_stack_counts", "single_stack_fraction"]  # fmt: skip
