"""Register dataflow: liveness and def-use chains (from reaching definitions).

Both are classic analyses over the CFG, computed per instruction. A guarded (predicated)
instruction may leave its destination unchanged, so its definition neither kills earlier
definitions nor ends a live range. :meth:`Liveness.range_live_in` and
:meth:`Liveness.range_live_out` size the register context a pc range needs on entry and returns
on exit.

Each analysis iterates over the blocks with a worklist, revisiting a block only when what flows
into it changed. Reaching definitions are tracked only for the registers live on entry to a
block: a definition can reach a read only through blocks where its register is live, so the work
grows with the live registers, not with every register of the function.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from functools import cached_property

from ndpsim.analysis.cfg import ControlFlowGraph


class Liveness:
    """Which registers hold a value that may still be read, before and after each instruction."""

    def __init__(self, cfg: ControlFlowGraph):
        self.cfg = cfg
        reads, kills_at = cfg.reads, cfg.kills
        n_blocks = len(cfg)
        use_sets = []
        kill_sets = []
        for block in cfg:
            uses: set[str] = set()
            kills: set[str] = set()
            for pc in block.pcs:
                uses.update(r for r in reads[pc] if r not in kills)
                kills.update(kills_at[pc])
            use_sets.append(uses)
            kill_sets.append(kills)
        live_in: list[frozenset[str]] = [frozenset()] * n_blocks
        live_out: list[frozenset[str]] = [frozenset()] * n_blocks
        reachable = set(cfg.reverse_postorder)
        unreachable = (b for b in range(n_blocks) if b not in reachable)
        pending = deque([*reversed(cfg.reverse_postorder), *unreachable])
        queued = [True] * n_blocks
        while pending:
            b = pending.popleft()
            queued[b] = False
            out = frozenset().union(*(live_in[s] for s in cfg[b].successors))
            new_in = frozenset(use_sets[b] | (out - kill_sets[b]))
            live_out[b] = out
            if new_in != live_in[b]:
                live_in[b] = new_in
                for p in cfg[b].predecessors:
                    if not queued[p]:
                        queued[p] = True
                        pending.append(p)
        self.live_in_block: tuple[frozenset[str], ...] = tuple(live_in)
        self.live_out_block: tuple[frozenset[str], ...] = tuple(live_out)

    @cached_property
    def _before(self) -> tuple[frozenset[str], ...]:
        reads, kills = self.cfg.reads, self.cfg.kills
        before: list[frozenset[str]] = [frozenset()] * len(reads)
        for block in self.cfg:
            live = set(self.live_out_block[block.index])
            for pc in reversed(block.pcs):
                live.difference_update(kills[pc])
                live.update(reads[pc])
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
        if end <= start:
            return frozenset()
        return self.region_live_in(frozenset(range(start, end)), [start])

    def range_live_out(self, start: int, end: int) -> frozenset[str]:
        """Registers written inside ``[start, end)`` that are live where control leaves it."""
        return self.region_live_out(frozenset(range(start, end)))

    def region_live_in(self, region: frozenset[int], entries: Iterable[int]) -> frozenset[str]:
        """Registers whose value on entry to ``region`` (a set of pcs, entered at the pcs
        ``entries``) may be read inside it, liveness restricted to the region (paths leaving it
        read nothing)."""
        reads, kills = self.cfg.reads, self.cfg.kills
        succs = self.cfg.pc_successors
        order = sorted(region, reverse=True)
        live: dict[int, frozenset[str]] = {pc: frozenset() for pc in order}
        changed = True
        while changed:
            changed = False
            for pc in order:
                out = frozenset().union(*(live[s] for s in succs[pc] if s in region))
                new = frozenset(set(reads[pc]) | (out - set(kills[pc])))
                if new != live[pc]:
                    live[pc] = new
                    changed = True
        return frozenset().union(*(live[pc] for pc in entries))

    def region_live_out(self, region: frozenset[int]) -> frozenset[str]:
        """Registers written inside ``region`` (a set of pcs) that are live where control
        leaves it."""
        n = self.cfg.num_instructions
        written = {r for pc in region for r in self.cfg.writes[pc]}
        live_at_exits: set[str] = set()
        for pc in region:
            for s in self.cfg.pc_successors[pc]:
                if s not in region and s < n:
                    live_at_exits |= self._before[s]
        return frozenset(written & live_at_exits)


class DefUse:
    """Def-use and use-def chains from reaching definitions.

    A definition is identified by ``(pc, register)``. ``definitions(pc, reg)`` lists the pcs whose
    write to ``reg`` may reach the read at ``pc``; ``uses(pc, reg)`` lists the pcs that may read
    the value written at ``pc``.
    """

    def __init__(self, cfg: ControlFlowGraph, liveness: Liveness):
        self.cfg = cfg
        insts = cfg.function.instructions
        reads, defs_at = cfg.reads, cfg.writes
        guarded = [inst.guard is not None for inst in insts]
        order = cfg.reverse_postorder
        reachable = [False] * len(cfg)
        for b in order:
            reachable[b] = True
        # What each block does to a register it writes: (whether it kills the definitions that
        # reach it, the definitions it adds).
        local: list[dict[str, tuple[bool, frozenset[int]]]] = []
        for block in cfg:
            written: dict[str, tuple[bool, frozenset[int]]] = {}
            for pc in block.pcs:
                for reg in defs_at[pc]:
                    if guarded[pc]:
                        kills, pcs = written.get(reg, (False, frozenset()))
                        written[reg] = (kills, pcs | {pc})
                    else:
                        written[reg] = (True, frozenset((pc,)))
            local.append(written)

        def reaching_out(block: int, reg: str) -> frozenset[int]:
            kills, pcs = local[block].get(reg, (False, frozenset()))
            return pcs if kills else reach_in[block].get(reg, frozenset()) | pcs

        # reach_in[b]: the definitions reaching b of the registers live on entry to b. Any other
        # register is written before it is read on every path from b, so what reaches b does not
        # matter; and a register live out of a block but not into it is written (unguarded) in
        # the block, so only the block's own definitions of it leave the block.
        reach_in: list[dict[str, frozenset[int]]] = [{} for _ in cfg]
        live_in = liveness.live_in_block
        pending = deque(order)
        queued = reachable.copy()
        while pending:
            b = pending.popleft()
            queued[b] = False
            preds = [p for p in cfg[b].predecessors if reachable[p]]
            merged: dict[str, frozenset[int]] = {}
            for reg in live_in[b]:
                pcs = frozenset().union(*(reaching_out(p, reg) for p in preds))
                if pcs:
                    merged[reg] = pcs
            if merged != reach_in[b]:
                reach_in[b] = merged
                for s in cfg[b].successors:
                    if not queued[s]:
                        queued[s] = True
                        pending.append(s)
        use_def: dict[tuple[int, str], tuple[int, ...]] = {}
        def_use: dict[tuple[int, str], list[int]] = {}
        for pc, regs in enumerate(defs_at):
            for reg in regs:
                def_use.setdefault((pc, reg), [])
        for b in order:
            cur = dict(reach_in[b])
            for pc in cfg[b].pcs:
                for reg in reads[pc]:
                    defs = tuple(sorted(cur.get(reg, ())))
                    use_def[(pc, reg)] = defs
                    for d in defs:
                        def_use[(d, reg)].append(pc)
                for reg in defs_at[pc]:
                    if guarded[pc]:
                        cur[reg] = cur.get(reg, frozenset()) | {pc}
                    else:
                        cur[reg] = frozenset((pc,))
        self._use_def = use_def
        self._def_use = {k: tuple(sorted(set(v))) for k, v in def_use.items()}
        writes: dict[str, list[int]] = {}
        for pc, reg in self._def_use:
            writes.setdefault(reg, []).append(pc)
        self._writes = {reg: tuple(sorted(pcs)) for reg, pcs in writes.items()}

    def definitions(self, pc: int, register: str) -> tuple[int, ...]:
        """Pcs whose write of ``register`` may be the value read at ``pc``."""
        return self._use_def.get((pc, register), ())

    def uses(self, pc: int, register: str) -> tuple[int, ...]:
        """Pcs that may read the value of ``register`` written at ``pc``."""
        return self._def_use.get((pc, register), ())

    def definitions_of(self, register: str) -> tuple[int, ...]:
        """Every pc that writes ``register``."""
        return self._writes.get(register, ())
