"""Basic blocks and the control-flow graph of a PTX function.

A block starts at pc 0, at every branch target and after every branch or return; it ends at the
next such point. Edges follow PTX semantics: an unguarded ``bra`` has one successor, a guarded one
two (target and fall-through); ``ret``/``exit`` lead to a virtual exit node. ``bar.sync`` does not
end a block here (the interpreter pauses at barriers on its own).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

from ndpsim.frontend.ir import Function, Instruction


@dataclass(frozen=True, slots=True)
class BasicBlock:
    """Instructions ``start .. end-1`` of a function, entered only at ``start``."""

    index: int
    start: int
    end: int
    label: str | None
    successors: tuple[int, ...]
    predecessors: tuple[int, ...]
    exits_function: bool  # has an edge to the virtual exit (a ret/exit, or falls off the end)

    @property
    def pcs(self) -> range:
        return range(self.start, self.end)

    @property
    def terminator(self) -> int:
        return self.end - 1

    def __len__(self) -> int:
        return self.end - self.start


def _ends_block(inst: Instruction) -> bool:
    return inst.is_branch or inst.is_exit or inst.opcode == "brx"


class ControlFlowGraph:
    """Blocks and edges of one function. Block 0 is the entry."""

    def __init__(self, function: Function):
        self.function = function
        insts = function.instructions
        n = len(insts)
        leaders = {0} if n else set()
        leaders.update(pc for pc in function.labels.values() if pc < n)
        leaders.update(i.pc + 1 for i in insts if _ends_block(i) and i.pc + 1 < n)
        starts = sorted(leaders)
        ends = [*starts[1:], n] if starts else []
        block_of_pc = [0] * n
        for b, (s, e) in enumerate(zip(starts, ends, strict=True)):
            for pc in range(s, e):
                block_of_pc[pc] = b
        succs: list[list[int]] = []
        exits: list[bool] = []
        for b, (_s, e) in enumerate(zip(starts, ends, strict=True)):
            last = insts[e - 1]
            out: list[int] = []
            leaves = False
            falls_through = True
            if last.is_branch:
                target = function.labels[last.branch_target]  # type: ignore[index]
                if target < n:
                    out.append(block_of_pc[target])
                else:
                    leaves = True
                falls_through = last.guard is not None
            elif last.is_exit:
                leaves = True
                falls_through = last.guard is not None
            if falls_through:
                if e < n:
                    if b + 1 not in out:
                        out.append(b + 1)
                else:
                    leaves = True
            succs.append(out)
            exits.append(leaves)
        preds: list[list[int]] = [[] for _ in starts]
        for b, out in enumerate(succs):
            for s in out:
                preds[s].append(b)
        label_at = function.label_at
        self.blocks: tuple[BasicBlock, ...] = tuple(
            BasicBlock(b, s, e, label_at.get(s), tuple(succs[b]), tuple(preds[b]), exits[b])
            for b, (s, e) in enumerate(zip(starts, ends, strict=True))
        )
        self.block_of_pc: tuple[int, ...] = tuple(block_of_pc)

    @property
    def num_instructions(self) -> int:
        return len(self.function.instructions)

    def __len__(self) -> int:
        return len(self.blocks)

    def __iter__(self):
        return iter(self.blocks)

    def __getitem__(self, index: int) -> BasicBlock:
        return self.blocks[index]

    def block_at(self, pc: int) -> BasicBlock:
        return self.blocks[self.block_of_pc[pc]]

    @cached_property
    def reads(self) -> tuple[tuple[str, ...], ...]:
        """The registers each instruction reads, its guard included (``Instruction.uses``, built
        once here for every analysis: the property builds them anew on each call)."""
        return tuple(inst.uses for inst in self.function.instructions)

    @cached_property
    def writes(self) -> tuple[tuple[str, ...], ...]:
        """The registers each instruction writes (``Instruction.defs``, built once)."""
        return tuple(inst.defs for inst in self.function.instructions)

    @cached_property
    def kills(self) -> tuple[tuple[str, ...], ...]:
        """The registers each instruction surely overwrites: a guarded one may leave its
        destination unchanged."""
        insts = self.function.instructions
        return tuple(
            () if inst.guard is not None else w for inst, w in zip(insts, self.writes, strict=True)
        )

    @cached_property
    def pc_successors(self) -> tuple[tuple[int, ...], ...]:
        """Successor pcs of every instruction; the function's end is pc ``num_instructions``."""
        n = self.num_instructions
        out: list[tuple[int, ...]] = []
        for pc in range(n):
            block = self.blocks[self.block_of_pc[pc]]
            if pc < block.terminator:
                out.append((pc + 1,))
                continue
            nxt = [self.blocks[s].start for s in block.successors]
            if block.exits_function:
                nxt.append(n)
            out.append(tuple(nxt))
        return tuple(out)

    @cached_property
    def reverse_postorder(self) -> tuple[int, ...]:
        """Blocks reachable from the entry, each before its successors (except on back edges)."""
        if not self.blocks:
            return ()
        seen = {0}
        order: list[int] = []
        stack: list[tuple[int, int]] = [(0, 0)]
        while stack:
            block, i = stack.pop()
            succ = self.blocks[block].successors
            if i < len(succ):
                stack.append((block, i + 1))
                nxt = succ[i]
                if nxt not in seen:
                    seen.add(nxt)
                    stack.append((nxt, 0))
            else:
                order.append(block)
        return tuple(reversed(order))
