"""Dominators and post-dominators of a control-flow graph.

Both trees come from the iterative algorithm of Cooper, Harvey and Kennedy ("A Simple, Fast
Dominance Algorithm"), run forward from the entry and backward from a virtual exit node that
every returning block reaches. The immediate post-dominator of a divergent branch is where the
SIMT stack reconverges the warp. Each tree is numbered in depth-first order once, so asking whether
one block dominates another takes constant time however deep the tree is.
"""

from __future__ import annotations

from collections.abc import Sequence

from ndpsim.analysis.cfg import ControlFlowGraph

#: The virtual exit node in post-dominator results.
EXIT = -1


def _immediate_dominators(
    num_nodes: int, entry: int, successors: Sequence[Sequence[int]]
) -> list[int | None]:
    predecessors: list[list[int]] = [[] for _ in range(num_nodes)]
    for node, succ in enumerate(successors):
        for s in succ:
            predecessors[s].append(node)
    # Reverse postorder from the entry.
    order: list[int] = []
    seen = {entry}
    stack = [(entry, 0)]
    while stack:
        node, i = stack.pop()
        if i < len(successors[node]):
            stack.append((node, i + 1))
            nxt = successors[node][i]
            if nxt not in seen:
                seen.add(nxt)
                stack.append((nxt, 0))
        else:
            order.append(node)
    order.reverse()
    rank = [0] * num_nodes
    for i, node in enumerate(order):
        rank[node] = i
    idom: list[int | None] = [None] * num_nodes
    idom[entry] = entry

    def intersect(a: int, b: int) -> int:
        while a != b:
            while rank[a] > rank[b]:
                a = idom[a]  # type: ignore[assignment]
            while rank[b] > rank[a]:
                b = idom[b]  # type: ignore[assignment]
        return a

    changed = True
    while changed:
        changed = False
        for node in order[1:]:
            new: int | None = None
            for p in predecessors[node]:
                if idom[p] is None:
                    continue
                new = p if new is None else intersect(p, new)
            if new is not None and idom[node] != new:
                idom[node] = new
                changed = True
    return idom


def _numbering(parents: Sequence[int | None]) -> tuple[list[int], list[int]]:
    """Entry and exit times of a depth-first walk of the forest ``parents`` describes: ``a`` is
    an ancestor of ``b`` (or ``b`` itself) iff ``enter[a] <= enter[b] < leave[a]``."""
    children: list[list[int]] = [[] for _ in parents]
    roots = []
    for node, parent in enumerate(parents):
        (roots if parent is None else children[parent]).append(node)
    enter = [0] * len(parents)
    leave = [0] * len(parents)
    clock = 0
    for root in roots:
        stack = [(root, False)]
        while stack:
            node, done = stack.pop()
            if done:
                leave[node] = clock
                continue
            enter[node] = clock
            clock += 1
            stack.append((node, True))
            stack.extend((child, False) for child in children[node])
    return enter, leave


class Dominance:
    """Dominator and post-dominator trees over the blocks of a CFG."""

    def __init__(self, cfg: ControlFlowGraph):
        self.cfg = cfg
        n = len(cfg)
        self.idom: tuple[int | None, ...] = ()
        self.ipdom: tuple[int | None, ...] = ()
        if n:
            forward = [list(b.successors) for b in cfg]
            idom = _immediate_dominators(n, 0, forward)
            idom[0] = None
            self.idom = tuple(idom)
            # Reverse graph with the virtual exit as node n.
            reverse: list[list[int]] = [list(b.predecessors) for b in cfg]
            reverse.append([b.index for b in cfg if b.exits_function])
            ipdom = _immediate_dominators(n + 1, n, reverse)
            self.ipdom = tuple(EXIT if d == n else d for d in ipdom[:n])
        self._dom_enter, self._dom_leave = _numbering(self.idom)
        self._pdom_enter, self._pdom_leave = _numbering(
            [None if d == EXIT else d for d in self.ipdom]
        )

    def dominates(self, a: int, b: int) -> bool:
        """Whether block ``a`` dominates block ``b`` (every block dominates itself)."""
        return self._dom_enter[a] <= self._dom_enter[b] < self._dom_leave[a]

    def post_dominates(self, a: int, b: int) -> bool:
        """Whether every path from block ``b`` to the exit passes through block ``a``."""
        if EXIT in (a, b):
            return a == EXIT
        return self._pdom_enter[a] <= self._pdom_enter[b] < self._pdom_leave[a]

    def reconvergence_pc(self, block: int) -> int:
        """Where warps that diverge at the end of ``block`` meet again: the start pc of its
        immediate post-dominator, or one past the last instruction if that is the virtual exit
        (or if the block cannot reach the exit at all)."""
        target = self.ipdom[block]
        if target is None or target == EXIT:
            return self.cfg.num_instructions
        return self.cfg[target].start
