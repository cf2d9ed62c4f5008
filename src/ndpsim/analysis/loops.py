"""Natural loops, their induction variables, and how their trip count can be known.

Loops come from back edges (an edge whose target dominates its source); loops sharing a header are
merged. Following TOM (Hsieh et al., ISCA 2016, sec. 3.1.3 and 5.2), a loop's condition is the
backward conditional branch that closes it when the branch predicate compares a value updated by a
simple add/sub inside the loop. Its trip count is then

* ``static``: start, step and bound are constants, so the count is known at compile time;
* ``entry``: start, step and bound are constants or registers not written in the loop, so the count
  is known when the loop is entered (TOM's *conditional* offload candidate);
* ``dynamic``: anything else (the count is only discovered while iterating).

nvcc emits rotated (do-while) loops: the body runs, then the latch tests. The count formula below
assumes that shape, which holds for every loop it classifies as ``static`` or ``entry`` because
the test sits in the latch.
"""

from __future__ import annotations

import math
from bisect import bisect_left
from dataclasses import dataclass
from enum import StrEnum

from ndpsim.analysis.cfg import ControlFlowGraph
from ndpsim.analysis.dataflow import DefUse
from ndpsim.analysis.dominance import Dominance
from ndpsim.frontend.ir import Immediate, Instruction, Register


class TripCountKind(StrEnum):
    STATIC = "static"
    ENTRY = "entry"
    DYNAMIC = "dynamic"


@dataclass(frozen=True, slots=True)
class LoopValue:
    """A loop's start, step or bound: a constant, or a register read when the loop is entered."""

    constant: int | None = None
    register: str | None = None

    @property
    def is_constant(self) -> bool:
        return self.constant is not None

    def __str__(self) -> str:
        return str(self.constant) if self.constant is not None else str(self.register)

    def resolve(self, registers: dict[str, int]) -> int:
        if self.constant is not None:
            return self.constant
        return int(registers[self.register])  # type: ignore[index]


_COMPARISONS = {
    "lt": lambda a, b: a < b, "lo": lambda a, b: a < b,
    "le": lambda a, b: a <= b, "ls": lambda a, b: a <= b,
    "gt": lambda a, b: a > b, "hi": lambda a, b: a > b,
    "ge": lambda a, b: a >= b, "hs": lambda a, b: a >= b,
    "eq": lambda a, b: a == b, "ne": lambda a, b: a != b,
}  # fmt: skip
_SWAPPED = {"lt": "gt", "lo": "hi", "le": "ge", "ls": "hs", "gt": "lt", "hi": "lo", "ge": "le",
            "hs": "ls", "eq": "eq", "ne": "ne"}  # fmt: skip
_NEGATED = {"lt": "ge", "lo": "hs", "le": "gt", "ls": "hi", "gt": "le", "hi": "ls", "ge": "lt",
            "hs": "lo", "eq": "ne", "ne": "eq"}  # fmt: skip


@dataclass(frozen=True, slots=True)
class InductionVariable:
    """``register`` steps by ``step`` each iteration; the loop continues while
    ``compared <comparison> bound`` holds, where ``compared`` is the register's value after the
    step when ``tested_after_step`` (else before it)."""

    register: str
    start: LoopValue
    step: LoopValue
    bound: LoopValue
    comparison: str  # continue-condition, oriented as (induction value) <comparison> (bound)
    tested_after_step: bool
    update_pc: int
    compare_pc: int

    def trip_count(self, registers: dict[str, int] | None = None) -> int | None:
        """Iterations of the rotated loop for these entry values; None if it never ends."""
        registers = registers or {}
        start = self.start.resolve(registers)
        step = self.step.resolve(registers)
        bound = self.bound.resolve(registers)
        first = start + step if self.tested_after_step else start
        return trip_count_of(first, step, bound, self.comparison)


def trip_count_of(first: int, step: int, bound: int, comparison: str) -> int | None:
    """Body executions of ``do { ... } while (v_k <comparison> bound)`` where the k-th test
    (k = 1, 2, ...) sees ``v_k = first + (k - 1) * step``. None if the loop never terminates."""
    keep_going = _COMPARISONS[comparison]
    if not keep_going(first, bound):
        return 1
    if step == 0:
        return None
    if comparison in ("eq",):
        return 2  # v_2 differs from the bound once the value moves
    if comparison == "ne":
        distance = bound - first
        if distance % step or distance // step < 0:
            return None
        return distance // step + 1
    # Monotone comparisons: find the first k at which the test fails.
    increasing = comparison in ("lt", "lo", "le", "ls")
    if increasing != (step > 0):
        return None
    if comparison in ("lt", "lo"):
        k = math.ceil((bound - first) / step)
    elif comparison in ("le", "ls"):
        k = (bound - first) // step + 1
    elif comparison in ("gt", "hi"):
        k = math.ceil((first - bound) / -step)
    else:
        k = (first - bound) // -step + 1
    return k + 1


@dataclass(frozen=True, slots=True)
class Loop:
    """A natural loop: its header block, member blocks and (if found) its induction variable."""

    index: int
    header: int
    blocks: frozenset[int]
    latches: tuple[int, ...]
    exits: tuple[int, ...]  # blocks outside the loop entered from inside it
    parent: int | None
    depth: int
    start_pc: int  # lowest pc of any member block
    end_pc: int  # one past the highest pc of any member block
    num_instructions: int
    induction: InductionVariable | None
    trip_count_kind: TripCountKind
    static_trip_count: int | None

    @property
    def is_contiguous(self) -> bool:
        """Whether the loop occupies exactly the pc range ``[start_pc, end_pc)``."""
        return self.end_pc - self.start_pc == self.num_instructions


def _immediate_int(op) -> int | None:
    if isinstance(op, Immediate) and not op.is_float:
        return int(op.value)
    return None


_MIXED = object()  # a register written with different constants, or not with a constant


def _join(a, b):
    """What a register's writes give together: None (no write), one constant, or _MIXED."""
    if a is None or a == b:
        return b
    return a if b is None else _MIXED


class _LoopAnalyzer:
    """Induction variables of loops. A loop's writes of a register are found among the writes
    in its pc span only, and what the writes outside it give from per-register prefix and
    suffix summaries, so that a register written by many loops costs each loop little."""

    def __init__(self, cfg: ControlFlowGraph, dom: Dominance, defuse: DefUse):
        self.cfg = cfg
        self.dom = dom
        self.defuse = defuse
        self.insts = cfg.function.instructions
        self._spans: dict[frozenset[int], tuple[int, int]] = {}
        self._summaries: dict[str, tuple[list, list]] = {}

    def in_loop(self, pc: int, blocks: frozenset[int]) -> bool:
        return self.cfg.block_of_pc[pc] in blocks

    def span(self, blocks: frozenset[int]) -> tuple[int, int]:
        """The loop's lowest pc and one past its highest."""
        found = self._spans.get(blocks)
        if found is None:
            starts = [self.cfg[b].start for b in blocks]
            found = self._spans[blocks] = (min(starts), max(self.cfg[b].end for b in blocks))
        return found

    def writes_in(self, register: str, blocks: frozenset[int]) -> list[int]:
        """The pcs of the loop that write ``register``, in order."""
        lo, hi = self.span(blocks)
        pcs = self.defuse.definitions_of(register)
        return [pc for pc in pcs[bisect_left(pcs, lo) : bisect_left(pcs, hi)]
                if self.in_loop(pc, blocks)]  # fmt: skip

    def invariant_value(self, op, blocks: frozenset[int]) -> LoopValue | None:
        """A constant, or a register no instruction of the loop writes; else None."""
        imm = _immediate_int(op)
        if imm is not None:
            return LoopValue(constant=imm)
        if isinstance(op, Register) and not op.negated:
            if self.writes_in(op.name, blocks):
                return None
            return self.constant_register(op.name) or LoopValue(register=op.name)
        return None

    def constant_register(self, name: str) -> LoopValue | None:
        """A register whose only definition is ``mov r, imm`` is that constant."""
        defs = self.defuse.definitions_of(name)
        if len(defs) == 1:
            inst = self.insts[defs[0]]
            if inst.opcode == "mov" and inst.guard is None:
                imm = _immediate_int(inst.operands[1])
                if imm is not None:
                    return LoopValue(constant=imm)
        return None

    def step_of(self, inst: Instruction, register: str, blocks) -> LoopValue | None:
        """``register = register +/- s``: the signed step s if it is loop-invariant."""
        if inst.opcode not in ("add", "sub") or inst.guard is not None:
            return None
        a, b = inst.operands[1], inst.operands[2]
        if isinstance(a, Register) and a.name == register:
            other = b
        elif inst.opcode == "add" and isinstance(b, Register) and b.name == register:
            other = a
        else:
            return None
        value = self.invariant_value(other, blocks)
        if value is None:
            return None
        if inst.opcode == "sub":
            if value.constant is None:
                return None  # a subtracted register: keep it simple, classify as dynamic
            value = LoopValue(constant=-value.constant)
        return value

    def induction(self, blocks: frozenset[int], latch: int, header: int):
        block = self.cfg[latch]
        branch = self.insts[block.terminator]
        if not branch.is_branch or branch.guard is None:
            return None
        target = self.cfg.function.labels[branch.branch_target]  # type: ignore[index]
        if target != self.cfg[header].start or target > branch.pc:
            return None  # TOM considers only backward conditional branches
        setp_pcs = self.defuse.definitions(branch.pc, branch.guard.name)
        if len(setp_pcs) != 1:
            return None
        setp = self.insts[setp_pcs[0]]
        if setp.opcode != "setp" or setp.guard is not None or not self.in_loop(setp.pc, blocks):
            return None
        comparison = next((m for m in setp.modifiers if m in _COMPARISONS), None)
        if comparison is None or any(m in ("and", "or", "xor") for m in setp.modifiers):
            return None
        if branch.guard.negated:
            comparison = _NEGATED[comparison]
        operands = setp.operands[1], setp.operands[2]
        for side in (0, 1):
            compared, bound_op = operands[side], operands[1 - side]
            if not isinstance(compared, Register):
                continue
            bound = self.invariant_value(bound_op, blocks)
            if bound is None:
                continue
            found = self.induction_from(compared.name, setp.pc, blocks)
            if found is None:
                continue
            register, step, update_pc, after = found
            cmp = comparison if side == 0 else _SWAPPED[comparison]
            start = self.start_value(register, blocks)
            return InductionVariable(register, start, step, bound, cmp, after, update_pc, setp.pc)
        return None

    def induction_from(self, name: str, compare_pc: int, blocks):
        """The induction register behind the compared value, its step, and whether the compared
        value is the one after the step. Handles ``r = r + s; setp r`` and ``t = r + s; setp t``."""
        defs = self.defuse.definitions(compare_pc, name)
        if len(defs) != 1 or not self.in_loop(defs[0], blocks):
            return None
        inst = self.insts[defs[0]]
        in_loop_defs = self.writes_in(name, blocks)
        step = self.step_of(inst, name, blocks)
        if step is not None and in_loop_defs == [inst.pc]:
            return name, step, inst.pc, True
        # t = r +/- s where r is itself stepped (or copied back from t) in the loop.
        if inst.opcode in ("add", "sub") and isinstance(inst.operands[1], Register):
            source = inst.operands[1].name
            source_defs = self.writes_in(source, blocks)
            step = self.step_of(inst, source, blocks) if source != name else None
            if step is not None and len(source_defs) == 1:
                copy = self.insts[source_defs[0]]
                is_copy_back = (
                    copy.opcode == "mov"
                    and isinstance(copy.operands[1], Register)
                    and copy.operands[1].name == name
                )
                if is_copy_back:
                    return source, step, inst.pc, True
        return None

    def start_value(self, register: str, blocks) -> LoopValue:
        """The induction register's value on entry: a constant if every definition outside the
        loop is the same ``mov r, imm``, else the register itself."""
        before, after = self._summary(register)
        lo, hi = self.span(blocks)
        pcs = self.defuse.definitions_of(register)
        first, last = bisect_left(pcs, lo), bisect_left(pcs, hi)
        given = _join(before[first], after[last])
        for pc in pcs[first:last]:
            if not self.in_loop(pc, blocks):
                given = _join(given, self._constant_written(pc))
        if given is None or given is _MIXED:
            return LoopValue(register=register)
        return LoopValue(constant=given)

    def _constant_written(self, pc: int):
        inst = self.insts[pc]
        imm = _immediate_int(inst.operands[1]) if inst.opcode == "mov" else None
        return _MIXED if imm is None else imm

    def _summary(self, register: str) -> tuple[list, list]:
        """What the first k writes of ``register`` give together, and the writes from the k-th
        on, for every k."""
        found = self._summaries.get(register)
        if found is None:
            given = list(map(self._constant_written, self.defuse.definitions_of(register)))
            before, after = [None], [None]
            for value in given:
                before.append(_join(before[-1], value))
            for value in reversed(given):
                after.append(_join(after[-1], value))
            found = self._summaries[register] = (before, after[::-1])
        return found


def find_loops(cfg: ControlFlowGraph, dom: Dominance, defuse: DefUse) -> tuple[Loop, ...]:
    """Natural loops, outermost first, each with its induction variable and trip-count kind."""
    bodies: dict[int, set[int]] = {}
    latches: dict[int, list[int]] = {}
    for block in cfg:
        if dom.idom[block.index] is None and block.index != 0:
            continue  # unreachable
        for succ in block.successors:
            if dom.dominates(succ, block.index):
                body = bodies.setdefault(succ, {succ})
                latches.setdefault(succ, []).append(block.index)
                stack = [block.index]
                while stack:
                    node = stack.pop()
                    if node not in body:
                        body.add(node)
                        stack.extend(cfg[node].predecessors)
    headers = sorted(bodies, key=lambda h: (-len(bodies[h]), cfg[h].start))
    analyzer = _LoopAnalyzer(cfg, dom, defuse)
    loops: list[Loop] = []
    # Natural loops with different headers are nested or disjoint, and a loop comes after every
    # loop holding it (it is smaller): the last loop so far to hold a block is its innermost.
    innermost: list[int | None] = [None] * len(cfg)
    for index, header in enumerate(headers):
        blocks = frozenset(bodies[header])
        parent = innermost[header]
        for b in blocks:
            innermost[b] = index
        exits = sorted({s for b in blocks for s in cfg[b].successors if s not in blocks})
        induction = None
        for latch in sorted(latches[header]):
            induction = analyzer.induction(blocks, latch, header)
            if induction is not None:
                break
        kind = TripCountKind.DYNAMIC
        static = None
        if induction is not None and len(latches[header]) == 1:
            if (
                induction.start.is_constant
                and induction.step.is_constant
                and (induction.bound.is_constant)
            ):
                static = induction.trip_count()
                kind = TripCountKind.STATIC if static is not None else TripCountKind.DYNAMIC
            else:
                kind = TripCountKind.ENTRY
        loops.append(
            Loop(
                index=index,
                header=header,
                blocks=blocks,
                latches=tuple(sorted(latches[header])),
                exits=tuple(exits),
                parent=parent,
                depth=(loops[parent].depth + 1) if parent is not None else 1,
                start_pc=min(cfg[b].start for b in blocks),
                end_pc=max(cfg[b].end for b in blocks),
                num_instructions=sum(len(cfg[b]) for b in blocks),
                induction=induction,
                trip_count_kind=kind,
                static_trip_count=static,
            )
        )
    return tuple(loops)
