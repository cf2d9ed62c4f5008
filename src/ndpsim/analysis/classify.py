"""What each instruction is, for the offload passes and the timing model.

``kind`` groups opcodes by the unit that executes them; ``space`` and ``access`` describe memory
instructions. ``role`` tells arithmetic that only computes addresses (SNDP keeps it on the GPU;
MPU places it far from the banks) from arithmetic that computes values: it follows each result
through the def-use chains to the instructions that finally consume it.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from ndpsim.analysis.cfg import ControlFlowGraph
from ndpsim.analysis.dataflow import DefUse
from ndpsim.frontend.ir import Address, Instruction, Register, Space, registers_in


class Kind(StrEnum):
    MEMORY = "memory"
    ALU = "alu"  # integer and floating-point arithmetic, logic, compare, select, move, convert
    SFU = "sfu"  # transcendental and reciprocal approximations
    CONTROL = "control"  # branches, returns
    BARRIER = "barrier"  # CTA-wide synchronization
    FENCE = "fence"  # memory ordering without synchronization
    WARP = "warp"  # warp-wide collectives (shuffle, vote)
    OTHER = "other"


class Access(StrEnum):
    LOAD = "load"
    STORE = "store"
    ATOMIC = "atomic"  # read-modify-write returning the old value
    REDUCTION = "reduction"  # read-modify-write without a result
    PREFETCH = "prefetch"


class Role(StrEnum):
    """Where the value an arithmetic instruction computes ends up."""

    ADDRESS = "address"  # only in memory addresses
    VALUE = "value"  # only in data, predicates, or branches
    BOTH = "both"
    UNUSED = "unused"  # never read


@dataclass(frozen=True, slots=True)
class InstructionClass:
    kind: Kind
    space: Space | None = None
    access: Access | None = None
    role: Role | None = None  # for ALU, SFU and warp instructions

    @property
    def is_global_memory(self) -> bool:
        return self.kind is Kind.MEMORY and self.space in (Space.GLOBAL, Space.GENERIC)

    @property
    def is_shared_memory(self) -> bool:
        return self.kind is Kind.MEMORY and self.space is Space.SHARED

    @property
    def is_synchronizing(self) -> bool:
        """Barriers, fences and atomics: what TOM and SNDP keep out of offload blocks."""
        return self.kind in (Kind.BARRIER, Kind.FENCE) or self.access in (
            Access.ATOMIC,
            Access.REDUCTION,
        )

    def __str__(self) -> str:
        parts = [self.kind.value]
        if self.space is not None:
            parts.append(self.space.value)
        if self.access is not None:
            parts.append(self.access.value)
        if self.role is not None:
            parts.append(self.role.value)
        return ".".join(parts)


_ACCESS = {
    "ld": Access.LOAD, "ldu": Access.LOAD, "st": Access.STORE, "atom": Access.ATOMIC,
    "red": Access.REDUCTION, "prefetch": Access.PREFETCH, "prefetchu": Access.PREFETCH,
}  # fmt: skip
_SFU = frozenset({"rcp", "sqrt", "rsqrt", "sin", "cos", "ex2", "lg2", "tanh"})
_CONTROL = frozenset({"bra", "brx", "ret", "exit", "call", "trap", "brkpt"})
_BARRIER = frozenset({"bar", "barrier"})
_FENCE = frozenset({"membar", "fence"})
_WARP = frozenset({"shfl", "vote", "activemask", "match", "redux", "elect"})


def base_kind(inst: Instruction) -> InstructionClass:
    """The class of an instruction from its opcode alone (``role`` left unset)."""
    op = inst.opcode
    if op in _ACCESS:
        return InstructionClass(Kind.MEMORY, inst.space, _ACCESS[op])
    if op in _CONTROL:
        return InstructionClass(Kind.CONTROL)
    if op in _BARRIER:
        # bar.warp.sync only orders a warp's own lanes: a fence, not a CTA barrier.
        return InstructionClass(Kind.FENCE if inst.has("warp") else Kind.BARRIER)
    if op in _FENCE:
        return InstructionClass(Kind.FENCE)
    if op in _WARP:
        return InstructionClass(Kind.WARP)
    if op in _SFU or (op == "div" and inst.has("approx")):
        return InstructionClass(Kind.SFU)
    if op in ("nanosleep", "pmevent", "griddepcontrol"):
        return InstructionClass(Kind.OTHER)
    return InstructionClass(Kind.ALU)


_ADDRESS, _VALUE = 1, 2  # where a computed value ends up, as bits
_ROLES = {_ADDRESS | _VALUE: Role.BOTH, _ADDRESS: Role.ADDRESS, _VALUE: Role.VALUE, 0: Role.UNUSED}


def _address_registers(inst: Instruction) -> set[str]:
    return {
        op.base.name
        for op in inst.operands
        if isinstance(op, Address) and isinstance(op.base, Register)
    }


def classify(cfg: ControlFlowGraph, defuse: DefUse) -> tuple[InstructionClass, ...]:
    """Class of every instruction of the function, with roles for computing instructions."""
    insts = cfg.function.instructions
    base = [base_kind(i) for i in insts]
    computes = [c.kind in (Kind.ALU, Kind.SFU, Kind.WARP) for c in base]
    # sinks[pc]: the final destinations (_ADDRESS, _VALUE bits) that the result of pc flows into:
    # those its readers consume, plus those of the computing instructions its result feeds
    # (``feeds[user]`` lists the instructions whose sinks grow with the user's).
    sinks = [0] * len(insts)
    feeds: dict[int, list[int]] = {}
    for pc, written in enumerate(cfg.writes):
        if not computes[pc]:
            continue
        for reg in written:
            for use_pc in defuse.uses(pc, reg):
                user = insts[use_pc]
                if computes[use_pc] and not (user.guard and user.guard.name == reg):
                    feeds.setdefault(use_pc, []).append(pc)
                    continue
                if base[use_pc].kind is Kind.MEMORY:
                    if reg in _address_registers(user):
                        sinks[pc] |= _ADDRESS
                    data = {r for op in user.sources if not isinstance(op, Address)
                            for r in registers_in(op)}  # fmt: skip
                    if reg in data or (user.guard and user.guard.name == reg):
                        sinks[pc] |= _VALUE
                else:
                    sinks[pc] |= _VALUE
    pending = [pc for pc, found in enumerate(sinks) if found]
    while pending:  # each pc's sinks grow at most twice
        user = pending.pop()
        for pc in feeds.get(user, ()):
            if sinks[user] & ~sinks[pc]:
                sinks[pc] |= sinks[user]
                pending.append(pc)
    out = []
    for pc, cls in enumerate(base):
        if computes[pc]:
            cls = InstructionClass(cls.kind, cls.space, cls.access, _ROLES[sinks[pc]])
        out.append(cls)
    return tuple(out)
