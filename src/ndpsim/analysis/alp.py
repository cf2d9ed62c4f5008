"""ALP's compiler phase (Oliveira et al., sec. 3.1): a kernel's segments, how tightly each pair
of neighbouring segments is connected by the registers one hands the other (Equation 1), and
the clusters of tightly connected segments that should run on the same side, host or NDP.

A segment is a basic block (ALP, sec. 3.1: "segments" are the units code is partitioned into;
SPEC §2.3: basic blocks). A segment's ``reg_in`` are the registers live on entry that it reads,
its ``reg_out`` the registers it writes that are live where control leaves it; both come from
the liveness analysis, restricted to the segment, as ALP takes them from the compiler's. For two
segments, the inter-segment data is ``reg_out1`` ∩ ``reg_in2``, and

    connectivity = max(inter / (reg_in1 + reg_out1), inter / (reg_in2 + reg_out2))

(Equation 1; 0 when a segment has no live registers at all). A cluster of segments has the same
two sets, over the cluster's pcs as one region (entered wherever control comes in from outside
it).

Clusters grow iteratively (sec. 3.1): every segment starts as its own cluster; two clusters that
a control-flow edge joins merge when their connectivity reaches the threshold, again and again
until none does. A conditional branch is handled as Figure 3b says: when any two neighbouring
segments on either side of it, up to where the sides meet again (the branch's immediate
post-dominator), are tightly connected as segments, the branch's segment, the meeting segment
and everything between form one cluster. The threshold belongs to the system (sec. 3.1: calibrated
once, offline, by profiling); this module takes it as a parameter.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ndpsim.analysis import analyze
from ndpsim.analysis.dominance import EXIT
from ndpsim.frontend.ir import Function


@dataclass(frozen=True)
class Segment:
    """A basic block as ALP's segment, with the registers it takes and hands on."""

    block: int
    begin: int  # its first pc
    end: int  # its last pc
    reg_in: frozenset[str]
    reg_out: frozenset[str]
    successors: tuple[int, ...]  # blocks

    def as_dict(self) -> dict[str, Any]:
        """The segment as JSON-ready data."""
        return {"block": self.block, "begin_pc": self.begin, "end_pc": self.end,
                "reg_in": sorted(self.reg_in), "reg_out": sorted(self.reg_out),
                "successors": list(self.successors)}  # fmt: skip


@dataclass(frozen=True)
class Cluster:
    """Tightly connected segments (blocks, ascending), with the registers the cluster as a
    whole takes and hands on."""

    blocks: tuple[int, ...]
    reg_in: frozenset[str]
    reg_out: frozenset[str]


def connectivity(reg_in1: frozenset[str], reg_out1: frozenset[str], reg_in2: frozenset[str],
                 reg_out2: frozenset[str]) -> float:  # fmt: skip
    """Equation 1: how much of what two segments take and hand on is what the first hands the
    second."""
    inter = len(reg_out1 & reg_in2)
    if not inter:
        return 0.0
    return max(inter / (len(reg_in1) + len(reg_out1)), inter / (len(reg_in2) + len(reg_out2)))


def segments(function: Function) -> tuple[Segment, ...]:
    """Every basic block of ``function`` as a segment."""
    a = analyze(function)
    return tuple(
        Segment(b.index, b.start, b.end - 1, a.liveness.range_live_in(b.start, b.end),
                a.liveness.range_live_out(b.start, b.end), b.successors)
        for b in a.cfg
    )  # fmt: skip


def _region_sets(function: Function, blocks: frozenset[int]) -> tuple[frozenset, frozenset]:
    """(reg_in, reg_out) of the blocks together, as one region of pcs."""
    a = analyze(function)
    cfg = a.cfg
    region = frozenset(pc for b in blocks for pc in cfg[b].pcs)
    entries = [cfg[b].start for b in blocks
               if b == 0 or any(p not in blocks for p in cfg[b].predecessors)]  # fmt: skip
    return a.liveness.region_live_in(region, entries), a.liveness.region_live_out(region)


def clusters(function: Function, threshold: float) -> tuple[Cluster, ...]:
    """The clusters of tightly connected segments of ``function`` at ``threshold`` (see the
    module), ordered by their first block."""
    a = analyze(function)
    cfg = a.cfg
    owner = list(range(len(cfg)))  # each block's cluster, named by a block of it
    members: dict[int, frozenset[int]] = {b: frozenset([b]) for b in range(len(cfg))}
    sets: dict[frozenset[int], tuple[frozenset, frozenset]] = {}

    def sets_of(k: int) -> tuple[frozenset, frozenset]:
        key = members[k]
        if key not in sets:
            sets[key] = _region_sets(function, key)
        return sets[key]

    def tight(x: int, y: int) -> bool:
        (in1, out1), (in2, out2) = sets_of(owner[x]), sets_of(owner[y])
        return connectivity(in1, out1, in2, out2) >= threshold

    alone = segments(function)

    def segment_tight(x: int, y: int) -> bool:  # of the segments themselves, not their clusters
        return connectivity(alone[x].reg_in, alone[x].reg_out, alone[y].reg_in,
                            alone[y].reg_out) >= threshold  # fmt: skip

    def merge(blocks) -> bool:
        keys = {owner[b] for b in blocks}
        if len(keys) < 2:
            return False
        into = min(keys)
        joined = frozenset().union(*(members.pop(k) for k in keys))
        members[into] = joined
        for b in joined:
            owner[b] = into
        return True

    changed = True
    while changed:
        changed = False
        for block in cfg:
            for s in block.successors:
                if owner[block.index] != owner[s] and tight(block.index, s):
                    changed = merge([block.index, s]) or changed
        for block in cfg:  # a branch whose sides hold a tightly connected pair (Figure 3b)
            meet = a.dominance.ipdom[block.index]
            if len(block.successors) < 2 or meet is None or meet == EXIT:
                continue
            between = _between(cfg, block.index, meet)
            edges = [(x, y) for x in (block.index, *between) for y in cfg[x].successors
                     if y in between or y == meet]  # fmt: skip
            if any(segment_tight(x, y) for x, y in edges):
                changed = merge([block.index, meet, *between]) or changed
    out = []
    for key in sorted(members):
        reg_in, reg_out = sets_of(key)
        out.append(Cluster(tuple(sorted(members[key])), reg_in, reg_out))
    return tuple(out)


def _between(cfg, branch: int, meet: int) -> set[int]:
    """The blocks on the paths from ``branch`` to ``meet``, neither included."""
    seen: set[int] = set()
    stack = [s for s in cfg[branch].successors if s != meet]
    while stack:
        b = stack.pop()
        if b in seen or b == branch:
            continue
        seen.add(b)
        stack.extend(s for s in cfg[b].successors if s != meet)
    return seen


__all__ = ["Cluster", "Segment", "clusters", "connectivity", "segments"]
