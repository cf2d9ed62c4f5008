"""SNDP's offload blocks: straight-line code split between the GPU and a memory stack's NSU.

SNDP (Kim et al., SC 2017, sec. 3.1, 3.2 and 4.1) offloads short blocks under *partitioned
execution*. The GPU warp still computes, coalesces and translates every address of the block and
turns each load into read-and-forward (RDF) packets and each store into write-address (WTA)
packets. The NSU in the memory stack receives the loaded data, computes on it, and writes the
stored values. Offloading a block saves the data bytes of its loads and stores on the GPU's
links, and costs the registers sent at ``OFLD.BEG`` and returned at ``OFLD.END``. Per thread
(Equation 1)::

    Score = GPUTrafficReduction - OffloadOverhead
          = sum of the access sizes of the loads and stores - 4 B * (live-ins + live-outs)

What a block may hold. A block is a pc range ``[begin, end]`` inside one basic block, so a warp
that enters it runs every instruction once, in order (sec. 3.1: no control divergence on the
NSU). It may hold ALU and SFU instructions (arithmetic, moves, converts, ``setp``/``selp``),
global loads and stores (generic ones are taken as global, as nvcc emits them for pointers it
cannot place), and loads from the parameter and constant spaces (free: the NSU runs the same
kernel and has a constant cache). Anything else ends a block: shared or local memory (sec. 3.1
keeps scratchpad code on the GPU), barriers, fences, atomics, reductions, prefetches, warp
collectives, branches, ``ret``/``exit``/``call``. A block holds at least one global load or
store.

Where each instruction runs (sec. 3.2 and 4.1.1). The pass follows every result through the
block, from the last instruction back to the first, to see who needs it:

* the GPU needs the registers of an address, the guard of a load or store (it generates packets
  only for the lanes the guard keeps), the sources of any instruction the GPU runs, and every
  value used after the block that the GPU can compute itself;
* the NSU needs the data a store writes, the guard of a load or store (it must know which lanes'
  data to wait for and write), and the sources of any instruction the NSU runs.

A load's or store's *role* is ``"load"``/``"store"``. An arithmetic instruction is ``"gpu"`` when
only the GPU needs its result (address generation; also a result only used after the block, or
never used: the GPU has it without waiting for the NSU), ``"nsu"`` when only the NSU needs it
(marked ``@NSU``, a NOP on the GPU), ``"both"`` when both do. An instruction that reads a value
loaded in the block (directly or through other instructions) can only run on the NSU: it is
``"nsu"``, and if it is used after the block its result is a live-out.

Guarded instructions. A guarded instruction leaves its destination alone in the lanes its guard
turns off, so where it runs it also reads its old destination value (when the result is used at
all): ``@%p mov %f1, 0f0`` after ``ld %f1`` runs on the NSU, and ``@%p ld %f1`` with ``%f1`` set
before the block makes ``%f1`` a live-in.

Addresses never wait for the NSU. Because the GPU generates every address before the NSU has
any data, a load or store whose address or guard depends, through the block's instructions, on
a value loaded in the same block cannot share a block with that load: a block ends before it.

Indirect loads (sec. 3.1 and 4.4). A global load whose address is computed, through any chain of
computing instructions and over the whole function (reaching definitions, loop-carried values
included), from data read from global memory by another load or an atomic, is an *indirect
load*, ``x = B[A[i]]``. Each is a block of its own (``indirect=True``), kept whatever its score,
as the paper adds "any single indirect load instruction as an offload block": the NSU gathers
only the words the active lanes touch. No other block contains it. Its live-in is its guard if
it has one, its live-out its destination if that is used afterwards.

Registers. The live-ins are the registers the NSU reads whose values come from before the block.
Special registers (``%tid``, ``%ctaid``, ...) are not live-ins: the offload command names the
warp, so the NSU knows them. The live-outs are the registers whose value after the block the NSU
computed (``"nsu"`` instructions and loads) and that are live at ``end + 1``. Results of ``"gpu"``
and ``"both"`` instructions are already on the GPU. Every register counts 4 B whatever its
width, a predicate too, as TOM's pass counts them (:mod:`ndpsim.analysis.tom`).

Choosing blocks. The paper does not say how candidate blocks that overlap are resolved; ndpsim's
rule: every basic block is cut into *runs* of allowed instructions, also cut around each indirect
load. Every subrange of a run that holds a load or store and obeys the rules is scored. The
blocks are chosen greedily, best first, skipping any subrange that overlaps one already chosen,
and only a score above zero is kept. *Best* is the higher score, then the longer range (so the
address arithmetic around the accesses joins the block at no cost), then the earlier ``begin``.
The indirect loads are added. The result is deterministic.

The choice is computed without scoring every subrange. A range's score is at most the bytes its
loads and stores move, a prefix sum, so each begin waits in a heap under that bound and is
scored (its ends from the highest down, until the bound of the rest falls to the best score
found) only when its bound can still beat every range found so far. Which instructions read a
value loaded since a begin is precomputed for every begin at once: each value carries the last
load it derives from.
"""

from __future__ import annotations

import math
from bisect import bisect_right
from collections.abc import Iterable
from dataclasses import dataclass
from heapq import heappop, heappush
from itertools import accumulate, count
from typing import Any

from ndpsim.analysis import FunctionAnalysis, analyze
from ndpsim.analysis.classify import Access, Kind
from ndpsim.analysis.ranges import ChosenRanges
from ndpsim.analysis.tom import TAG_RX, TAG_TX
from ndpsim.frontend.ir import Address, Function, Instruction, Space, registers_in

__all__ = [
    "BOTH",
    "GPU",
    "LOAD",
    "NSU",
    "REGISTER_BYTES",
    "ROLES",
    "STORE",
    "SndpBlock",
    "access_bytes",
    "block_score",
    "indirect_loads",
    "sndp_blocks",
]

#: Bytes one register costs per thread on the GPU <-> NSU path, whatever its width.
REGISTER_BYTES = 4

#: Roles of the instructions of a block (see the module docstring).
GPU, NSU, BOTH, LOAD, STORE = "gpu", "nsu", "both", "load", "store"
ROLES = (GPU, NSU, BOTH, LOAD, STORE)


def block_score(
    access_sizes: Iterable[int],
    n_live_in: int,
    n_live_out: int,
    *,
    register_bytes: int = REGISTER_BYTES,
) -> int:
    """SNDP's Equation 1 in bytes per thread: the data bytes of the block's loads and stores
    (``access_sizes``, one per instruction) minus the registers moved in and out."""
    return sum(access_sizes) - register_bytes * (n_live_in + n_live_out)


def access_bytes(inst: Instruction) -> int:
    """Bytes one thread reads or writes with a load or store: element size times vector width."""
    types = inst.types
    element = types[-1].size_bytes if types else 4
    return element * inst.vector_width


@dataclass(frozen=True, slots=True)
class SndpBlock:
    """One offload block: pcs ``begin`` to ``end`` inclusive, inside one basic block.

    ``roles`` has one entry per pc (``"gpu"``, ``"nsu"``, ``"both"``, ``"load"``, ``"store"``).
    ``n_ld``/``n_st`` count its global loads and stores. ``traffic_reduction_bytes`` and
    ``overhead_bytes`` are the two terms of Equation 1, per thread, and ``score`` their
    difference. ``indirect`` marks a single indirect load, kept whatever its score. ``tag``,
    ``threshold`` and ``loop_header_pc`` are what the shared offload plumbing reads from any
    candidate: SNDP blocks may relieve both links, are never conditional and hold no loop.
    """

    begin: int
    end: int
    live_in: tuple[str, ...]
    live_out: tuple[str, ...]
    n_ld: int
    n_st: int
    traffic_reduction_bytes: int
    overhead_bytes: int
    score: int
    indirect: bool
    roles: tuple[str, ...]
    tag: int = TAG_TX | TAG_RX
    threshold: int | None = None
    loop_header_pc: int | None = None

    @property
    def num_instructions(self) -> int:
        return self.end - self.begin + 1

    @property
    def nsu_instructions(self) -> int:
        """Instructions of the NSU's code: everything but the GPU-only address arithmetic (the
        count of the paper's Table 1)."""
        return sum(role != GPU for role in self.roles)

    def role(self, pc: int) -> str:
        """The role of the instruction at ``pc``, which must lie in the block."""
        if not self.begin <= pc <= self.end:
            raise ValueError(f"pc {pc} is outside the block [{self.begin}, {self.end}]")
        return self.roles[pc - self.begin]

    def as_dict(self) -> dict[str, Any]:
        """The block as JSON-ready data."""
        return {
            "begin_pc": self.begin,
            "end_pc": self.end,
            "num_instructions": self.num_instructions,
            "nsu_instructions": self.nsu_instructions,
            "live_in": list(self.live_in),
            "live_out": list(self.live_out),
            "n_ld": self.n_ld,
            "n_st": self.n_st,
            "traffic_reduction_bytes": self.traffic_reduction_bytes,
            "overhead_bytes": self.overhead_bytes,
            "score": self.score,
            "indirect": self.indirect,
            "roles": list(self.roles),
            "tag": self.tag,
        }


# ------------------------------------------------------------------------------ indirect loads
def _is_global(inst: Instruction) -> bool:
    return inst.space in (Space.GLOBAL, Space.GENERIC)


def _address_registers(inst: Instruction) -> tuple[str, ...]:
    return tuple(
        name for op in inst.operands if isinstance(op, Address) for name in registers_in(op)
    )


def _indirect_loads(function: Function, analysis: FunctionAnalysis) -> tuple[int, ...]:
    insts = function.instructions
    classes = analysis.classes
    defuse = analysis.defuse
    writes = analysis.cfg.writes
    # Definitions (pc, register) whose value comes from data read from global memory.
    from_memory: set[tuple[int, str]] = set()
    for pc, (inst, cls) in enumerate(zip(insts, classes, strict=True)):
        reads_memory = cls.kind is Kind.MEMORY and cls.access in (Access.LOAD, Access.ATOMIC)
        if reads_memory and _is_global(inst):
            from_memory.update((pc, reg) for reg in writes[pc])
    computing = [cls.kind in (Kind.ALU, Kind.SFU, Kind.WARP) for cls in classes]
    pending = [pc for pc, _ in from_memory]
    while pending:  # follow each value from memory to the computing instructions that read it
        pc = pending.pop()
        for reg in writes[pc]:
            for user in defuse.uses(pc, reg):
                if computing[user] and not all((user, r) in from_memory for r in writes[user]):
                    from_memory.update((user, r) for r in writes[user])
                    pending.append(user)
    return tuple(
        pc
        for pc, (inst, cls) in enumerate(zip(insts, classes, strict=True))
        if cls.kind is Kind.MEMORY
        and cls.access is Access.LOAD
        and _is_global(inst)
        and any(
            (source, reg) in from_memory
            for reg in _address_registers(inst)
            for source in defuse.definitions(pc, reg)
        )
    )


def indirect_loads(function: Function) -> tuple[int, ...]:
    """Pcs of the global loads whose address is computed from data loaded from global memory
    (``x = B[A[i]]``), in order."""
    return _indirect_loads(function, analyze(function))


# --------------------------------------------------------------------------------- the search
_FORBIDDEN, _COMPUTE, _LOAD, _STORE = range(4)


@dataclass(frozen=True, slots=True)
class _Evaluation:
    begin: int
    end: int
    roles: tuple[str, ...]
    live_in: frozenset[str]
    live_out: frozenset[str]
    traffic: int
    overhead: int

    @property
    def score(self) -> int:
        return self.traffic - self.overhead

    def rank(self) -> tuple[int, int, int]:
        """Sort key, best first (see the module docstring)."""
        return (-self.score, self.begin - self.end, self.begin)


class _Search:
    """One function's per-pc tables and the range search."""

    def __init__(self, function: Function, analysis: FunctionAnalysis):
        insts = function.instructions
        self.analysis = analysis
        n = len(insts)
        self.n = n
        self.indirect = frozenset(_indirect_loads(function, analysis))
        self.kind = [_FORBIDDEN] * n
        self.guarded = [inst.guard is not None for inst in insts]
        self.defs = analysis.cfg.writes
        self.reads = [frozenset(reads) for reads in analysis.cfg.reads]  # computing instructions
        self.gpu_reads: list[frozenset[str]] = [frozenset()] * n  # address registers and guard
        self.nsu_reads: list[frozenset[str]] = [frozenset()] * n  # guard, and a store's data
        size = [0] * n
        for pc, (inst, cls) in enumerate(zip(insts, analysis.classes, strict=True)):
            if cls.kind in (Kind.ALU, Kind.SFU):
                self.kind[pc] = _COMPUTE
            elif cls.kind is Kind.MEMORY and cls.access is Access.LOAD:
                if inst.space in (Space.PARAM, Space.CONST):
                    self.kind[pc] = _COMPUTE
                elif _is_global(inst):
                    self.kind[pc] = _LOAD
            elif cls.kind is Kind.MEMORY and cls.access is Access.STORE and _is_global(inst):
                self.kind[pc] = _STORE
            if self.kind[pc] in (_LOAD, _STORE):
                guard = {inst.guard.name} if inst.guard is not None else set()
                self.gpu_reads[pc] = frozenset({*_address_registers(inst), *guard})
                data = {r for op in inst.sources if not isinstance(op, Address)
                        for r in registers_in(op)}  # fmt: skip
                self.nsu_reads[pc] = frozenset(data | guard)
                size[pc] = access_bytes(inst)
        self.traffic_before = list(accumulate(size, initial=0))
        live = analysis.liveness
        self.live_after = [live.live_after(pc) for pc in range(n)]
        self.runs = self._runs()
        # loaded_by[pc]: the last load in its run whose value a computing instruction reads
        # (-1: none); it reads a value loaded in a block from begin on iff loaded_by[pc] >= begin.
        self.loaded_by = [-1] * n
        # stop[begin]: the first pc that cannot join a block from begin: a load or store whose
        # address or guard needs a value loaded since begin.
        self.stop = [0] * n
        for run in self.runs:
            self._trace_loads(run)

    def _runs(self) -> list[range]:
        """Maximal pc ranges of allowed instructions inside one basic block, without the
        indirect loads."""
        found = []
        for block in self.analysis.cfg:
            start = None
            for pc in (*block.pcs, block.end):
                usable = pc < block.end and self.kind[pc] != _FORBIDDEN and pc not in self.indirect
                if usable and start is None:
                    start = pc
                elif not usable and start is not None:
                    found.append(range(start, pc))
                    start = None
        return found

    def _trace_loads(self, run: range) -> None:
        """Fill ``loaded_by`` and ``stop`` for a run: every value carries the last load in the
        run it derives from (a guarded write keeps the old value in some lanes, so it also
        carries the old value's load)."""
        load_of: dict[str, int] = {}
        first_stop = [run.stop] * (len(run) + 1)  # by the last load an access's address needs
        for pc in run:
            if self.kind[pc] == _COMPUTE:
                reads = self.reads[pc].union(self.defs[pc]) if self.guarded[pc] else self.reads[pc]
                loaded = max((load_of.get(r, -1) for r in reads), default=-1)
                self.loaded_by[pc] = loaded
                for r in self.defs[pc]:
                    load_of[r] = loaded
                continue
            needed = max((load_of.get(r, -1) for r in self.gpu_reads[pc]), default=-1)
            if needed >= run.start:
                first_stop[needed - run.start] = min(first_stop[needed - run.start], pc)
            if self.kind[pc] == _LOAD:
                for r in self.defs[pc]:
                    load_of[r] = pc
        for at in range(len(run) - 1, -1, -1):  # a begin at or before the load is stopped
            first_stop[at] = min(first_stop[at], first_stop[at + 1])
            self.stop[run.start + at] = first_stop[at]

    def evaluate(self, begin: int, end: int, tainted_from: float) -> _Evaluation:
        """Roles, registers and the two terms of Equation 1 for ``[begin, end]``; a computing
        instruction reads a loaded value if it derives from a load at ``tainted_from`` or
        later."""
        kinds, writes, guards, loaded_by = self.kind, self.defs, self.guarded, self.loaded_by
        gpu: set[str] = set()  # registers whose current value later instructions need on each
        nsu: set[str] = set()  # side ...
        after = set(self.live_after[end])  # ... or that are used after the block
        roles: list[str] = [GPU] * (end - begin + 1)
        for pc in range(end, begin - 1, -1):
            kind, defs, guarded = kinds[pc], writes[pc], guards[pc]
            # A guarded instruction keeps the old value in the lanes it skips: it reads it.
            keeps = ()
            if guarded and not (gpu.isdisjoint(defs) and nsu.isdisjoint(defs)
                                and after.isdisjoint(defs)):  # fmt: skip
                keeps = defs
            if kind == _COMPUTE:
                tainted = loaded_by[pc] >= tainted_from
                on_nsu = tainted or not nsu.isdisjoint(defs)
                on_gpu = not tainted and (
                    not (gpu.isdisjoint(defs) and after.isdisjoint(defs)) or not on_nsu
                )
                roles[pc - begin] = BOTH if on_gpu and on_nsu else NSU if on_nsu else GPU
                if not guarded:
                    gpu.difference_update(defs)
                    nsu.difference_update(defs)
                    after.difference_update(defs)
                if on_gpu:
                    gpu.update(self.reads[pc], keeps)
                if on_nsu:
                    nsu.update(self.reads[pc], keeps)
                continue
            roles[pc - begin] = LOAD if kind == _LOAD else STORE
            if not guarded:
                gpu.difference_update(defs)
                nsu.difference_update(defs)
                after.difference_update(defs)
            gpu.update(self.gpu_reads[pc])
            nsu.update(self.nsu_reads[pc], keeps)
        made: set[str] = set()  # registers whose current value the NSU computed
        for pc in range(begin, end + 1):
            if roles[pc - begin] in (NSU, LOAD):
                made.update(self.defs[pc])
            elif not self.guarded[pc]:
                made.difference_update(self.defs[pc])
        live_out = frozenset(made.intersection(self.live_after[end]))
        traffic = self.traffic_before[end + 1] - self.traffic_before[begin]
        overhead = REGISTER_BYTES * (len(nsu) + len(live_out))
        return _Evaluation(begin, end, tuple(roles), frozenset(nsu), live_out, traffic, overhead)

    def best(self, begin: int, first: int, last: int) -> _Evaluation | None:
        """The best range from ``begin`` ending in ``[first, last]`` that scores above zero.
        Ends are scored from the highest down until the bytes moved fall to the best score."""
        best, best_score = None, 0
        for end in range(last, first - 1, -1):
            if self.traffic_before[end + 1] - self.traffic_before[begin] <= best_score:
                break  # the score is at most the traffic; a tie goes to the longer range
            evaluation = self.evaluate(begin, end, begin)
            if evaluation.score > best_score:
                best, best_score = evaluation, evaluation.score
        return best

    def choose(self) -> list[_Evaluation]:
        """Disjoint ranges, best first, and every indirect load on its own."""
        heap: list[tuple[tuple[int, int, int], int, int, _Evaluation | None]] = []
        sequence = count()
        first_access = [0] * self.n  # the first load or store at or after each pc in its run
        for run in self.runs:
            access = run.stop
            for pc in reversed(run):
                if self.kind[pc] in (_LOAD, _STORE):
                    access = pc
                first_access[pc] = access
                last = self.stop[pc] - 1
                if access <= last:  # key: what no range from pc can beat
                    traffic = self.traffic_before[last + 1] - self.traffic_before[pc]
                    heappush(heap, ((-traffic, pc - last, pc), next(sequence), pc, None))
        chosen = ChosenRanges()
        found = []
        while heap:
            _, _, begin, evaluation = heappop(heap)
            if evaluation is None or chosen.overlaps(evaluation.begin, evaluation.end):
                if chosen.covers(begin):
                    continue
                last = self.stop[begin] - 1
                at = bisect_right(chosen.begins, begin)
                if at < len(chosen.begins):
                    last = min(last, chosen.begins[at] - 1)
                evaluation = self.best(begin, first_access[begin], last)
                if evaluation is not None:
                    heappush(heap, (evaluation.rank(), next(sequence), begin, evaluation))
                continue
            found.append(evaluation)
            chosen.add(evaluation.begin, evaluation.end)
        found.extend(self.evaluate(pc, pc, math.inf) for pc in sorted(self.indirect))
        return sorted(found, key=lambda e: e.begin)

    def block(self, e: _Evaluation) -> SndpBlock:
        return SndpBlock(
            begin=e.begin,
            end=e.end,
            live_in=tuple(sorted(e.live_in)),
            live_out=tuple(sorted(e.live_out)),
            n_ld=e.roles.count(LOAD),
            n_st=e.roles.count(STORE),
            traffic_reduction_bytes=e.traffic,
            overhead_bytes=e.overhead,
            score=e.score,
            indirect=e.begin in self.indirect,
            roles=e.roles,
        )


def sndp_blocks(function: Function) -> tuple[SndpBlock, ...]:
    """SNDP's offload blocks of ``function``: disjoint, ordered by ``begin``, each inside one
    basic block, and computed once per function."""
    cached = function.derived.get("sndp blocks")
    if cached is None:
        search = _Search(function, analyze(function))
        cached = function.derived["sndp blocks"] = tuple(map(search.block, search.choose()))
    return cached  # type: ignore[return-value]
