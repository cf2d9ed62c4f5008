"""MPU's location annotation (Xie et al., MICRO 2021, sec. V-B and Algorithm 1): for every
register and instruction of a kernel, whether it belongs near the banks (N, the near-bank units
on the DRAM die), far from them (F, the subcores on the base die), or both (B).

The idea (sec. V-B): a kernel holds two kinds of dependency chains that rarely meet, values
loaded from DRAM and computed on, and the integer arithmetic of addresses and control. Values
go near the banks, addresses and control stay on the base die, so that the registers crossing
the TSVs are few. Algorithm 1 seeds the registers the hardware fixes and lets every other
register take the location of what it is used to compute:

1. Seeds. A global load's destination is N and its address F; a global store's value is N and
   its address F (the load-store unit on the base die computes addresses, sec. IV-C); a shared
   memory access is N throughout (address and value: near-bank shared memory); a branch's
   sources and every predicate register are F (control runs on the base die's pipeline).
2. Propagation, to a fixed point: an instruction whose destination has a location gives it to
   each of its source operands (not its guard); a register given both N and F is B.
3. An instruction's location is its destination's.

Where the algorithm's text leaves a choice, ndpsim reads it so (docs/offload.md#mpu):

* Seeds join rather than overwrite: a register seeded N by one instruction and F by another
  (the value of one load used as the address of the next, in pointer chasing) is B, as the
  text says of registers "annotated as both N and F from different instructions".
* Propagation runs through the instructions that compute values, not through the memory
  accesses and branches the seeds come from: propagating a global load's N destination into
  its address registers would make every address register B, against the split the paper
  measures (Fig. 14: 63.7% far-bank only).
* An atomic or a reduction on global memory is a load and a store of its address: the address
  F, its values and its result N. Generic-space accesses count as global (what nvcc emits for
  a pointer it cannot prove global).
* An instruction without a destination register is F (branches, barriers, returns), except a
  store, whose location is its address's (a global store F, a shared store N). An instruction
  whose destination no seed reaches (a value never stored, never used as an address) stays U:
  the hardware's register track table decides at run time (sec. IV-B1).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ndpsim.analysis import analyze
from ndpsim.analysis.classify import Access, base_kind
from ndpsim.frontend.ir import Address, Function, Instruction, Space, registers_in

#: Locations, as the paper writes them.
UNKNOWN, NEAR, FAR, BOTH = "U", "N", "F", "B"
NAMES = {UNKNOWN: "unknown", NEAR: "near-bank", FAR: "far-bank", BOTH: "both"}

#: The paper's register split, averaged over its workloads (sec. VI-D, Fig. 14).
PAPER_SPLIT = {NEAR: 0.325, FAR: 0.637, BOTH: 0.038}


def join(a: str, b: str) -> str:
    """Two annotations of one register: unknown yields to either, N and F make B."""
    if a in (UNKNOWN, b):
        return b
    if b == UNKNOWN:
        return a
    return BOTH


@dataclass(frozen=True)
class LocationRun:
    """Pcs ``begin`` to ``end`` inclusive, inside one basic block, all at ``location``."""

    begin: int
    end: int
    location: str
    instructions: tuple[str, ...]  # each instruction's text

    @property
    def num_instructions(self) -> int:
        return self.end - self.begin + 1

    def as_dict(self) -> dict[str, Any]:
        """The run as JSON-ready data."""
        return {
            "begin_pc": self.begin,
            "end_pc": self.end,
            "location": self.location,
            "instructions": list(self.instructions),
        }


@dataclass(frozen=True)
class Locations:
    """The annotation of one kernel: each register's and each instruction's location."""

    registers: dict[str, str]  # every register an instruction names
    instructions: tuple[str, ...]  # per pc

    def split(self) -> dict[str, int]:
        """How many registers have each location."""
        counts = dict.fromkeys((NEAR, FAR, BOTH, UNKNOWN), 0)
        for location in self.registers.values():
            counts[location] += 1
        return counts


def _is_global(inst: Instruction) -> bool:
    return inst.space in (Space.GLOBAL, Space.GENERIC)


def _address_registers(inst: Instruction) -> set[str]:
    return {name for op in inst.operands if isinstance(op, Address)
            for name in registers_in(op)}  # fmt: skip


def _value_sources(inst: Instruction) -> set[str]:
    """The registers a memory instruction reads that are not in its address (a store's or an
    atomic's values)."""
    return {name for op in inst.sources if not isinstance(op, Address)
            for name in registers_in(op)}  # fmt: skip


def _data_sources(inst: Instruction) -> tuple[str, ...]:
    """The registers ``inst`` computes from: its operands', not its guard's (a guard decides
    whether it runs, on the base die, not what it computes)."""
    return tuple(dict.fromkeys(name for op in inst.sources for name in registers_in(op)))


def _seeds(inst: Instruction) -> list[tuple[str, str]]:
    """(register, location) the hardware fixes for ``inst`` (step 1 of the module's list)."""
    kind = base_kind(inst)
    access = kind.access
    if access is not None and access is not Access.PREFETCH:
        address = _address_registers(inst)
        values = _value_sources(inst) | set(inst.defs)
        if inst.space is Space.SHARED:
            return [(r, NEAR) for r in address | values]
        if _is_global(inst):
            return [(r, FAR) for r in address] + [(r, NEAR) for r in values]
        return []
    if inst.is_branch or inst.opcode == "brx":
        return [(r, FAR) for r in inst.uses]
    return []


def _is_anchor(inst: Instruction) -> bool:
    """Whether the seeds fix ``inst``'s operands (propagation does not run through it)."""
    access = base_kind(inst).access
    memory = access is not None and access is not Access.PREFETCH
    return (memory and (inst.space is Space.SHARED or _is_global(inst))) or bool(
        inst.is_branch or inst.opcode == "brx"
    )


def _annotate(function: Function) -> Locations:
    insts = function.instructions
    where: dict[str, str] = {}
    for inst in insts:
        for name in (*inst.uses, *inst.defs):
            where.setdefault(name, UNKNOWN)
    for name in where:
        register_type = function.registers.get(name)
        if register_type is not None and register_type.kind == "pred":
            where[name] = FAR  # control: the base die's pipeline
    for inst in insts:
        for name, location in _seeds(inst):
            where[name] = join(where[name], location)
    computing = [inst for inst in insts if inst.defs and not _is_anchor(inst)]
    changed = True
    while changed:  # each pass can only raise a register's location: U < N, F < B
        changed = False
        for inst in computing:
            target = UNKNOWN
            for name in inst.defs:
                target = join(target, where[name])
            if target == UNKNOWN:
                continue
            for name in _data_sources(inst):
                joined = join(where[name], target)
                if joined != where[name]:
                    where[name], changed = joined, True
    return Locations(where, tuple(_instruction_location(inst, where) for inst in insts))


def _instruction_location(inst: Instruction, where: dict[str, str]) -> str:
    if inst.defs:
        location = UNKNOWN
        for name in inst.defs:
            location = join(location, where[name])
        return location
    if base_kind(inst).access in (Access.STORE, Access.REDUCTION) and (
        inst.space is Space.SHARED or _is_global(inst)
    ):
        return NEAR if inst.space is Space.SHARED else FAR
    return FAR


def mpu_locations(function: Function) -> Locations:
    """The location of every register and instruction of ``function``, computed once."""
    cached = function.derived.get("mpu locations")
    if cached is None:
        cached = function.derived["mpu locations"] = _annotate(function)
    return cached  # type: ignore[return-value]


def location_runs(function: Function) -> tuple[LocationRun, ...]:
    """The kernel's instructions as maximal runs of one location inside each basic block."""
    cached = function.derived.get("mpu location runs")
    if cached is not None:
        return cached  # type: ignore[return-value]
    at = mpu_locations(function).instructions
    runs = []
    for block in analyze(function).cfg:
        begin = block.start
        for pc in range(block.start, block.end):
            if pc + 1 == block.end or at[pc + 1] != at[begin]:
                texts = tuple(function.instructions[p].text for p in range(begin, pc + 1))
                runs.append(LocationRun(begin, pc, at[begin], texts))
                begin = pc + 1
    function.derived["mpu location runs"] = result = tuple(runs)
    return result


def register_split(function: Function) -> dict[str, Any]:
    """The kernel's registers by location (counts, and the shares of the annotated ones next
    to the paper's average)."""
    counts = mpu_locations(function).split()
    annotated = counts[NEAR] + counts[FAR] + counts[BOTH]
    shares = {NAMES[k]: counts[k] / annotated if annotated else 0.0 for k in (NEAR, FAR, BOTH)}
    return {
        "registers": {NAMES[k]: n for k, n in counts.items()},
        "shares": shares,
        "paper_shares": {NAMES[k]: v for k, v in PAPER_SPLIT.items()},
    }


__all__ = [
    "BOTH",
    "FAR",
    "NEAR",
    "UNKNOWN",
    "LocationRun",
    "Locations",
    "location_runs",
    "mpu_locations",
    "register_split",
]
