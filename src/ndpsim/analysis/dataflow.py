"""Register dataflow: liveness and def-use chains (from reaching definitions).

Both are classic iterative analyses over the CFG, computed per instruction. A guarded (predicated)
instruction may leave its destination unchanged, so its definition neither kills earlier
definitions nor ends a live range. Offload passes use :meth:`Liveness.range_live_in` and
:meth:`Liveness.range_live_out` to size the register context a block needs on entry and returns
on exit.
"""

from __future__ import annotations

from functools import cached_property

from ndpsim.analysis.cfg import ControlFlowGraph


def _kills(cfg: ControlFlowGraph, pc: int) -> tuple[str, ...]:
    inst = cfg.function.instructions[pc]
    return inst.defs if inst.guard is None else ()


class Liveness:
    """Which registers hold a value that may still be read, before and after each instruction."""

    def __init__(self, cfg: ControlFlowGraph):
        self.cfg = cfg
        insts = cfg.function.instructions
        n_blocks = len(cfg)
        use_sets = []
        kill_sets = []
        for block in cfg:
            uses: set[str] = set()
            kills: set[str] = set()
            for pc in block.pcs:
                uses.update(r for r in insts[pc].uses if r not in kills)
                kills.update(_kills(cfg, pc))
            use_sets.append(uses)
            kill_sets.append(kills)
        live_in: list[frozenset[str]] = [frozenset()] * n_blocks
        live_out: list[frozenset[str]] = [frozenset()] * n_blocks
        changed = True
        order = list(reversed(cfg.reverse_postorder)) + [
            b.index for b in cfg if b.index not in set(cfg.reverse_postorder)
        ]
        while changed:
            changed = False
            for b in order:
                out = frozenset().union(*(live_in[s] for s in cfg[b].successors))
                new_in = frozenset(use_sets[b] | (out - kill_sets[b]))
                if out != live_out[b] or new_in != live_in[b]:
                    live_out[b], live_in[b] = out, new_in
                    changed = True
        self.live_in_block: tuple[frozenset[str], ...] = tuple(live_in)
        self.live_out_block: tuple[frozenset[str], ...] = tuple(live_out)

    @cached_property
    def _before(self) -> tuple[frozenset[str], ...]:
        insts = self.cfg.function.instructions
        before: list[frozenset[str]] = [frozenset()] * len(insts)
        for block in self.cfg:
            live = set(self.live_out_block[block.index])
            for pc in reversed(block.pcs):
                live.difference_update(_kills(self.cfg, pc))
                live.update(insts[pc].uses)
                before[pc] = frozenset(live)
        return tuple(before)

    def live_before(self, pc: int) -> frozenset[str]:
        """Registers live on entry to instruction ``pc``."""
        return self._before[pc]

    def live_after(self, pc: int) -> frozenset[str]:
        """Registers live just after instruction ``pc`` (on any outgoing path)."""
        n = self.cfg.num_instructions
        return frozenset().union(*(self._before[s] for s in self.cfg.pc_successors[pc] if s < n))

    def range_live_in(self, start: int, end: int) -> frozenset[str]:
        """Registers whose value on entry to ``[start, end)`` may be read inside the range.

        Liveness restricted to the range (paths leaving it read nothing): exactly the context a
        block must be given when it runs elsewhere, excluding values merely passing through.
        """
        insts = self.cfg.function.instructions
        succs = self.cfg.pc_successors
        live: dict[int, frozenset[str]] = {pc: frozenset() for pc in range(start, end)}
        changed = True
        while changed:
            changed = False
            for pc in range(end - 1, start - 1, -1):
                out = frozenset().union(*(live[s] for s in succs[pc] if start <= s < end))
                new = frozenset(set(insts[pc].uses) | (out - set(_kills(self.cfg, pc))))
                if new != live[pc]:
                    live[pc] = new
                    changed = True
        return live[start] if end > start else frozenset()

    def range_live_out(self, start: int, end: int) -> frozenset[str]:
        """Registers written inside ``[start, end)`` that are live where control leaves it."""
        insts = self.cfg.function.instructions
        n = self.cfg.num_instructions
        written = {r for pc in range(start, end) for r in insts[pc].defs}
        live_at_exits: set[str] = set()
        for pc in range(start, end):
            for s in self.cfg.pc_successors[pc]:
                if not start <= s < end and s < n:
                    live_at_exits |= self._before[s]
        return frozenset(written & live_at_exits)


class DefUse:
    """Def-use and use-def chains from reaching definitions.

    A definition is identified by ``(pc, register)``. ``definitions(pc, reg)`` lists the pcs whose
    write to ``reg`` may reach the read at ``pc``; ``uses(pc, reg)`` lists the pcs that may read
    the value written at ``pc``.
    """

    def __init__(self, cfg: ControlFlowGraph):
        self.cfg = cfg
        insts = cfg.function.instructions
        n_blocks = len(cfg)

        def transfer(
            block_index: int, state: dict[str, frozenset[int]]
        ) -> dict[str, frozenset[int]]:
            cur = dict(state)
            for pc in cfg[block_index].pcs:
                inst = insts[pc]
                for reg in inst.defs:
                    if inst.guard is None:
                        cur[reg] = frozenset((pc,))
                    else:
                        cur[reg] = cur.get(reg, frozenset()) | {pc}
            return cur

        reach_in: list[dict[str, frozenset[int]]] = [{} for _ in range(n_blocks)]
        reach_out: list[dict[str, frozenset[int]]] = [{} for _ in range(n_blocks)]
        order = list(cfg.reverse_postorder)
        changed = True
        while changed:
            changed = False
            for b in order:
                merged: dict[str, frozenset[int]] = {}
                for p in cfg[b].predecessors:
                    for reg, pcs in reach_out[p].items():
                        merged[reg] = merged.get(reg, frozenset()) | pcs
                out = transfer(b, merged)
                if merged != reach_in[b] or out != reach_out[b]:
                    reach_in[b], reach_out[b] = merged, out
                    changed = True
        use_def: dict[tuple[int, str], tuple[int, ...]] = {}
        def_use: dict[tuple[int, str], list[int]] = {}
        for pc, inst in enumerate(insts):
            for reg in inst.defs:
                def_use.setdefault((pc, reg), [])
        for b in order:
            cur = dict(reach_in[b])
            for pc in cfg[b].pcs:
                inst = insts[pc]
                for reg in inst.uses:
                    defs = tuple(sorted(cur.get(reg, ())))
                    use_def[(pc, reg)] = defs
                    for d in defs:
                        def_use[(d, reg)].append(pc)
                for reg in inst.defs:
                    if inst.guard is None:
                        cur[reg] = frozenset((pc,))
                    else:
                        cur[reg] = cur.get(reg, frozenset()) | {pc}
        self._use_def = use_def
        self._def_use = {k: tuple(sorted(set(v))) for k, v in def_use.items()}

    def definitions(self, pc: int, register: str) -> tuple[int, ...]:
        """Pcs whose write of ``register`` may be the value read at ``pc``."""
        return self._use_def.get((pc, register), ())

    def uses(self, pc: int, register: str) -> tuple[int, ...]:
        """Pcs that may read the value of ``register`` written at ``pc``."""
        return self._def_use.get((pc, register), ())

    def definitions_of(self, register: str) -> tuple[int, ...]:
        """Every pc that writes ``register``."""
        return tuple(sorted(pc for (pc, reg) in self._def_use if reg == register))
