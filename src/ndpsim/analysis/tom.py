"""TOM's offload candidates: code blocks worth running on a memory stack's logic-layer SM.

TOM (Hsieh et al., ISCA 2016, sec. 3.1 and 5.2) picks at compile time the blocks whose offloading
should save off-chip bandwidth. Its estimate counts 4-byte words per warp on the GPU -> memory (TX)
and memory -> GPU (RX) links (Equations 3 and 4). Offloading costs the live-in registers sent and
the live-out registers returned. It saves the traffic that the block's own loads and stores would
have caused. A block is a candidate when ``BW_TX + BW_RX < 0``.

What a block may be (sec. 3.1.4). A block is a contiguous pc range ``[begin, end]`` in which

* no instruction touches shared memory or is a barrier, fence, ``membar``, atomic or reduction
  (the stack SM cannot synchronise with the GPU), or a ``ret``/``exit``/``call``/``trap``/``brx``;
* control enters only at ``begin`` (no branch from elsewhere targets ``begin+1 .. end``) and every
  branch inside targets a pc in ``[begin, end + 1]``, so a diverged warp reconverges at ``end + 1``;
* at least one global, local or generic load or store sits (the accesses the equations count;
  generic accesses are taken to be global, as nvcc emits them for pointers it cannot place);
* at most one outermost natural loop is wholly inside (with any loops nested in it), so one trip
  count scales the block's benefit and one condition guards it, as sec. 3.1.3 describes.

Block rules. The paper does not say how far a block may extend, but its text bounds it. Its one
example (Figure 4, LIBOR) makes each of two loops a candidate of its own, with five live-ins
apiece, although the code between them is straight-line and one range holding both would share
those registers and save more. Its statistics describe blocks much smaller than threads: at most
26 live registers in an offloaded block against 49 for a whole thread (sec. 6.4), and up to
about 20 candidates in a workload (sec. 6.6 sizes the metadata table at 40 entries, twice the
most it saw). Two rules are implemented (``blocks``):

* ``"loops"`` (the default): a block is one natural loop (with the loops nested in it), from a
  pc of its set-up code (the end of its preheader after any load or store: the counter's start,
  as ``n = 0`` in ``for (n = 0; ...)``, its pointers) to the loop's last pc, or loop-free code:
  a range containing no whole loop, outside every loop or inside one loop's body. A loop is
  never merged with other code's accesses, before or after it, as in Figure 4.
* ``"maximal"``: any range obeying the rules above, so a loop and the code around it (often a
  whole thread, parameter loads included, which cost nothing to repeat) can be one block: the
  reading of sec. 1's "maximum potential memory bandwidth savings" that ignores Figure 4.

Guarded instructions are fine. Loads from the parameter and constant spaces are allowed and cost
nothing, because the stack SM runs the same kernel and reads those banks itself. Prefetches are
allowed and not counted. Special registers (``%tid``, ``%ctaid``, ...) are not live-ins: the
offload request names the warp, so the stack SM knows them.

Registers. The live-ins (REG_TX) are the registers live on entry to ``begin`` that the block reads
or writes. A register the block writes on some paths only must still be sent, so that lanes which
skip the write get their old value back. The live-outs (REG_RX) are the registers the block may
write that are live at ``end + 1``. Every register counts as one, whatever its width, like the
register-sized words of the paper. A predicate register also counts as one. It holds only one bit
per lane, but counting it fully is the conservative choice: it never creates a candidate that the
paper's rule would reject.

Loops (sec. 3.1.3). A natural loop wholly inside a block multiplies the loads and stores of its
body by its trip count when that count is static. When the count is known at loop entry, the block
is a *conditional* candidate. It is offloaded only if the count, computed from registers the block
receives, reaches the break-even trip count (``threshold``). If it saves bandwidth even at one
iteration, it is unconditional. Loops whose counts are the same expression of the same registers
share the multiplier. A loop whose count is only discovered while it runs counts once. A block
inside a loop body, without the loop's back edge, is one instance per iteration. A count can be
used at ``begin`` only if no instruction of the block outside the loop writes its registers. The
one exception is a single ``mov`` from a constant, or from a register the block leaves untouched,
that dominates the loop: ``mov %r50, %r5`` before a loop counting from ``%r50`` reads ``%r5``.

Choosing blocks. The profitable ranges overlap and nest heavily, and the hardware needs disjoint
blocks (an offloaded block runs to its end pc), so they are chosen greedily, best first. A range
that overlaps one already chosen is skipped. *Best* means, in this order:

1. unconditional before conditional, because an unconditional saving is certain;
2. the larger saving per instance, ``-(BW_TX + BW_RX)``; for conditional candidates, the lower
   threshold, then the larger saving per extra iteration;
3. the longer range, then the earlier ``begin``.

One exception: a range inside a loop body waits while some other free profitable range holds the
whole loop. Offloading the loop pays its registers once rather than on every iteration. This also
stops a cheap one-store block inside a loop from breaking up that loop's conditional candidate.

The choice is made without evaluating all ``O(n^2)`` ranges. A range saves at most what its loads
and stores would move, each repeated as often as its loops could run (a prefix sum), so the
begins wait in a heap under that bound, and a begin's ends are evaluated (from the highest down,
until the bound falls to the best saving found) only when its bound can still beat every range
found so far. Where ranges may end (branches, forbidden pcs, whole loops) is precomputed for
every begin with sweeps and range-maximum tables, and REG_TX/REG_RX come from the pcs where each
live register is next read or last written, so evaluating a range costs about its live registers.
The result is the one the exhaustive greedy choice gives.
"""

from __future__ import annotations

import math
from bisect import bisect_left, bisect_right
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from heapq import heappop, heappush
from itertools import accumulate, chain, count
from typing import Any

from ndpsim.analysis import FunctionAnalysis, analyze
from ndpsim.analysis.classify import Access, Kind
from ndpsim.analysis.loops import Loop, LoopValue, TripCountKind, trip_count_of
from ndpsim.analysis.ranges import ChosenRanges, IntervalIndex, RangeMax
from ndpsim.frontend.ir import Function, Immediate, Register, Space

__all__ = [
    "BLOCK_RULES",
    "COALESCING",
    "LINE_WORDS",
    "LOAD_MISS_RATE",
    "TAG_RX",
    "TAG_TX",
    "WARP_SIZE",
    "TomCandidate",
    "TripCondition",
    "bandwidth_change",
    "break_even_trips",
    "thread_live_registers",
    "tom_candidates",
]

#: How far a candidate block may extend (see the module docstring).
BLOCK_RULES = ("loops", "maximal")

#: S_W: threads per warp (TOM Table 1).
WARP_SIZE = 32
#: S_C: cache-line size over address size, 128 B / 4 B (TOM sec. 3.1.1).
LINE_WORDS = 32
#: Coal_LD and Coal_ST: perfect coalescing, TOM's conservative estimate (sec. 3.1.1).
COALESCING = 1.0
#: Miss_LD: TOM's estimate of the GPU cache miss rate of loads (sec. 3.1.1).
LOAD_MISS_RATE = 0.5

#: Tag bits (sec. 3.1.2): offloading saves GPU -> memory (TX) and/or memory -> GPU (RX) traffic.
TAG_TX = 1
TAG_RX = 2


def bandwidth_change(
    reg_tx: float,
    reg_rx: float,
    n_ld: float,
    n_st: float,
    *,
    warp_size: int = WARP_SIZE,
    line_words: int = LINE_WORDS,
    coal_ld: float = COALESCING,
    coal_st: float = COALESCING,
    miss_ld: float = LOAD_MISS_RATE,
) -> tuple[float, float]:
    """``(BW_TX, BW_RX)`` in 4-byte words per warp: how offloading a block changes the traffic
    on each link (TOM Equations 3 and 4). Negative means offloading saves bandwidth.

    ``reg_tx``/``reg_rx`` are the live-in/live-out register counts, and ``n_ld``/``n_st`` the
    load and store executions.
    """
    bw_tx = reg_tx * warp_size - (n_ld * coal_ld * miss_ld + n_st * (warp_size + coal_st))
    bw_rx = reg_rx * warp_size - (n_ld * coal_ld * line_words * miss_ld + 0.25 * n_st * coal_st)
    return bw_tx, bw_rx


def break_even_trips(
    reg_tx: float,
    reg_rx: float,
    n_ld_per_iter: float,
    n_st_per_iter: float,
    *,
    n_ld_once: float = 0.0,
    n_st_once: float = 0.0,
    **constants: Any,
) -> int | None:
    """The smallest trip count ``n >= 1`` with ``BW_TX + BW_RX < 0``, or None if there is none.

    The loads and stores are ``n * per_iter + once``. ``constants`` are passed on to
    :func:`bandwidth_change`.
    """

    def total(trips: int) -> float:
        tx, rx = bandwidth_change(
            reg_tx,
            reg_rx,
            n_ld_once + trips * n_ld_per_iter,
            n_st_once + trips * n_st_per_iter,
            **constants,
        )
        return tx + rx

    if total(1) < 0:
        return 1
    saved_per_trip = total(0) - total(1)  # the total is linear in the trip count
    if saved_per_trip <= 0:
        return None
    trips = max(1, math.floor(total(0) / saved_per_trip) + 1)
    while trips > 1 and total(trips - 1) < 0:  # correct float rounding either way
        trips -= 1
    while total(trips) >= 0:
        trips += 1
    return trips


def _tag(bw_tx: float, bw_rx: float) -> int:
    return (TAG_TX if bw_tx < 0 else 0) | (TAG_RX if bw_rx < 0 else 0)


# ------------------------------------------------------------------------------ the candidates
@dataclass(frozen=True, slots=True)
class TripCondition:
    """How a conditional candidate's loop count follows from the registers read at ``begin``.

    The loop is ``do { ... } while (v <comparison> bound)``, where ``v`` starts at ``start`` and
    changes by ``step`` each iteration. The test sees ``v`` after the step when
    ``tested_after_step``.
    """

    start: LoopValue
    step: LoopValue
    bound: LoopValue
    comparison: str
    tested_after_step: bool

    @property
    def registers(self) -> tuple[str, ...]:
        """The registers the count depends on, bound first."""
        values = (self.bound, self.start, self.step)
        return tuple(dict.fromkeys(v.register for v in values if v.register is not None))

    def trip_count(self, registers: Mapping[str, int]) -> int | None:
        """Body executions for these register values; None if the loop would never end."""
        values = dict(registers)
        start = self.start.resolve(values)
        step = self.step.resolve(values)
        bound = self.bound.resolve(values)
        first = start + step if self.tested_after_step else start
        return trip_count_of(first, step, bound, self.comparison)

    def text(self, threshold: int) -> str:
        """``trip count >= threshold`` written over the registers, e.g. ``%r5 >= 4``."""
        linear = self._linear(threshold)
        if linear is None:
            return (
                f"trips(from {self.start} step {self.step} while {self.comparison} "
                f"{self.bound}) >= {threshold}"
            )
        plus, minus, least = linear  # the condition is plus - minus >= least
        if isinstance(plus, str) and isinstance(minus, int):
            return f"{plus} >= {least + minus}"
        if isinstance(plus, int) and isinstance(minus, str):
            return f"{minus} <= {plus - least}"
        return f"{plus} - {minus} >= {least}"

    def _linear(self, threshold: int) -> tuple[int | str, int | str, int] | None:
        """``(plus, minus, least)`` with ``trips >= threshold`` iff ``plus - minus >= least``
        (for thresholds of 2 or more), when the count is linear in the registers."""
        step = self.step.constant
        if not step:
            return None
        cmp = self.comparison
        if cmp in ("lt", "lo", "le", "ls") or (cmp == "ne" and step > 0):
            if step < 0:
                return None
            plus, minus = self.bound, self.start
        elif cmp in ("gt", "hi", "ge", "hs") or (cmp == "ne" and step < 0):
            if step > 0:
                return None
            plus, minus = self.start, self.bound
        else:
            return None
        distance = abs(step)
        after = self.tested_after_step
        if cmp in ("lt", "lo", "gt", "hi"):  # trips = ceil(span / distance) + offset
            least = distance * (threshold - (0 if after else 1) - 1) + 1
        elif cmp == "ne":  # trips = span / distance + offset
            least = distance * (threshold - (0 if after else 1))
        else:  # le/ge: trips = floor(span / distance) + offset
            least = distance * (threshold - (1 if after else 2))

        def term(value: LoopValue) -> int | str:
            return value.constant if value.constant is not None else str(value.register)

        return term(plus), term(minus), least


@dataclass(frozen=True, slots=True)
class TomCandidate:
    """One offload candidate block: pcs ``begin`` to ``end`` inclusive (TOM sec. 3.1 and 4.2).

    ``n_ld``/``n_st`` count the block's global/local load and store instructions.
    ``ld_executions``/``st_executions`` say how often those run per offload instance, with static
    trip counts applied and a conditional loop counted once. ``bw_tx``/``bw_rx`` follow from them
    (Equations 3 and 4): for a conditional candidate, they are the values for one iteration.
    ``tag`` is taken at the ``threshold``, the fewest iterations the block is offloaded with.
    ``loop_kind`` and ``trips`` describe the block's outermost loop, or its conditional loop.
    ``trips`` is that loop's static count, or 1. ``condition_register`` is the first register of
    the condition (the loop bound when it is a register), and ``trip_condition`` lists every
    register the condition uses and evaluates it. ``loop_ld``/``loop_st`` are the loads and
    stores that each extra iteration of a conditional loop adds. ``live_registers`` is the most
    32-bit registers (a 64-bit one counts twice, predicates not at all) of the block's own that
    are live at once: what a stack SM must hold per thread to run it (sec. 6.4's statistic).
    """

    begin: int
    end: int
    live_in: tuple[str, ...]
    live_out: tuple[str, ...]
    n_ld: int
    n_st: int
    ld_executions: float
    st_executions: float
    loop_kind: str  # "none" | "static" | "entry" | "dynamic"
    trips: int
    loop_header_pc: int | None
    condition_register: str | None
    threshold: int | None
    bw_tx: float
    bw_rx: float
    tag: int
    loop_ld: float = 0.0
    loop_st: float = 0.0
    live_registers: int = 0
    trip_condition: TripCondition | None = field(default=None, compare=False)

    @property
    def conditional(self) -> bool:
        return self.threshold is not None

    @property
    def saving(self) -> float:
        """Words per warp saved by one offload instance (one iteration if conditional)."""
        return -(self.bw_tx + self.bw_rx)

    @property
    def num_instructions(self) -> int:
        return self.end - self.begin + 1

    @property
    def saves_tx(self) -> bool:
        return bool(self.tag & TAG_TX)

    @property
    def saves_rx(self) -> bool:
        return bool(self.tag & TAG_RX)

    @property
    def tag_text(self) -> str:
        """``TX+RX``, ``TX``, ``RX`` or ``-``."""
        names = [name for name, bit in (("TX", TAG_TX), ("RX", TAG_RX)) if self.tag & bit]
        return "+".join(names) or "-"

    @property
    def condition(self) -> str:
        """When to offload: ``-`` (always) or a comparison such as ``%r56 >= 4``."""
        if self.trip_condition is None or self.threshold is None:
            return "-"
        return self.trip_condition.text(self.threshold)

    def bandwidth_at(self, trips: int) -> tuple[float, float]:
        """``(BW_TX, BW_RX)`` when the conditional loop runs ``trips`` times."""
        extra = max(trips, 1) - 1 if self.conditional else 0
        return bandwidth_change(
            len(self.live_in),
            len(self.live_out),
            self.ld_executions + extra * self.loop_ld,
            self.st_executions + extra * self.loop_st,
        )

    def should_offload(self, registers: Mapping[str, int]) -> bool:
        """The run-time check of a conditional candidate, given its registers at ``begin``."""
        if self.trip_condition is None or self.threshold is None:
            return True
        trips = self.trip_condition.trip_count(registers)
        return trips is None or trips >= self.threshold

    def as_dict(self) -> dict[str, Any]:
        """The candidate as JSON-ready data."""
        return {
            "begin_pc": self.begin,
            "end_pc": self.end,
            "live_in": list(self.live_in),
            "live_out": list(self.live_out),
            "n_ld": self.n_ld,
            "n_st": self.n_st,
            "ld_executions": self.ld_executions,
            "st_executions": self.st_executions,
            "loop_kind": self.loop_kind,
            "trips": self.trips,
            "loop_header_pc": self.loop_header_pc,
            "conditional": self.conditional,
            "condition": self.condition,
            "condition_register": self.condition_register,
            "condition_registers": list(self.trip_condition.registers)
            if self.trip_condition is not None
            else [],
            "threshold": self.threshold,
            "loop_ld": self.loop_ld,
            "loop_st": self.loop_st,
            "live_registers": self.live_registers,
            "bw_tx": self.bw_tx,
            "bw_rx": self.bw_rx,
            "saving": self.saving,
            "tag": self.tag,
            "tag_text": self.tag_text,
        }


# --------------------------------------------------------------------------------- the search
_VARIABLE = -1  # the factor of the loops whose count is a conditional candidate's multiplier
_LOAD_WORDS = COALESCING * LOAD_MISS_RATE * (1 + LINE_WORDS)  # TX + RX words one load saves
_STORE_WORDS = WARP_SIZE + COALESCING + 0.25 * COALESCING  # TX + RX words one store saves

_COUNTED_SPACES = (Space.GLOBAL, Space.LOCAL, Space.GENERIC)  # the off-chip loads and stores

Factors = tuple[tuple[int, int], ...]  # (loop index, trip-count factor) of a block's whole loops

_MARGIN = 1e-9  # relative slack against rounding when a bound stops the search


@dataclass(frozen=True, slots=True)
class _LoopCounts:
    """Load/store executions of the memory instructions inside a block's whole loops."""

    inside_ld: int  # instructions, which the block's plain count already holds once each
    inside_st: int
    fixed_ld: float  # executions per instance, outside the conditional loop
    fixed_st: float
    loop_ld: float  # executions per iteration of the conditional loop
    loop_st: float


@dataclass(frozen=True, slots=True)
class _Evaluation:
    """A profitable range, as the search found it."""

    begin: int
    end: int
    reg_tx: int
    reg_rx: int
    ld: float  # executions per instance (a conditional loop once)
    st: float
    loop_ld: float
    loop_st: float
    threshold: int | None
    factors: Factors
    condition: TripCondition | None

    def rank(self) -> tuple:
        """Sort key, best first (see the module docstring)."""
        size = self.end - self.begin
        if self.threshold is None:
            total = (self.reg_tx + self.reg_rx) * WARP_SIZE
            total -= self.ld * _LOAD_WORDS + self.st * _STORE_WORDS
            return (0, total, -size, self.begin)
        per_trip = self.loop_ld * _LOAD_WORDS + self.loop_st * _STORE_WORDS
        return (1, self.threshold, -per_trip, -size, self.begin)


class _Search:
    """One function's per-pc tables, and the evaluation of a range over them."""

    def __init__(self, function: Function, analysis: FunctionAnalysis):
        self.function = function
        self.analysis = analysis
        insts = function.instructions
        cfg = analysis.cfg
        n = len(insts)
        self.n = n
        self.forbidden = [False] * n
        self.is_ld = [0] * n
        self.is_st = [0] * n
        for pc, (inst, cls) in enumerate(zip(insts, analysis.classes, strict=True)):
            if (
                cls.is_shared_memory
                or cls.is_synchronizing
                or cls.kind is Kind.OTHER
                or (cls.kind is Kind.CONTROL and (not inst.is_branch or not inst.branch_target))
            ):
                self.forbidden[pc] = True
            elif cls.kind is Kind.MEMORY and cls.space in _COUNTED_SPACES:
                self.is_ld[pc] = int(cls.access is Access.LOAD)
                self.is_st[pc] = int(cls.access is Access.STORE)
        self.ld_before = list(accumulate(self.is_ld, initial=0))
        self.st_before = list(accumulate(self.is_st, initial=0))
        # Control flow between pcs; the function's end is pc n.
        succs = cfg.pc_successors
        lowest_pred, highest_pred = [n] * (n + 1), [-1] * (n + 1)
        for pc in range(n):
            for s in succs[pc]:
                lowest_pred[s] = min(lowest_pred[s], pc)
                highest_pred[s] = max(highest_pred[s], pc)
        lowest_succ = [min(s, default=n) for s in succs]
        self.last_end = self._last_ends(lowest_pred, lowest_succ)
        self.highest_pred = RangeMax(highest_pred[:n])
        self.highest_succ = RangeMax([max(s, default=-1) - 1 for s in succs])
        # Registers: which are live before each pc, and where each is read or written.
        live = analysis.liveness
        self.live_before = [live.live_before(pc) for pc in range(n)] + [frozenset()]
        self.touches: dict[str, list[int]] = {}
        for pc, (reads, writes) in enumerate(zip(cfg.reads, cfg.writes, strict=True)):
            for name in {*reads, *writes}:
                self.touches.setdefault(name, []).append(pc)
        self.writes_of = {r: analysis.defuse.definitions_of(r) for r in self.touches}
        self.slots = {
            name: 0 if function.registers[name].name == "pred"
            else max(1, function.registers[name].size_bytes // 4)
            for name in self.touches
        }  # fmt: skip
        self._next_touches: dict[int, list[int]] = {}
        self._last_writes: dict[int, list[int]] = {}
        # Loops, outermost first.
        self.loops = analysis.loops
        self.loop_starts = sorted((loop.start_pc, loop.index) for loop in self.loops)
        # "loops": the last pc of the outermost loop a block starting at each pc may hold, or -1
        self.loop_end_from = [-1] * n
        for loop in self.loops:
            for at in range(self._loop_entry(loop), loop.start_pc + 1):
                self.loop_end_from[at] = max(self.loop_end_from[at], loop.end_pc - 1)
        loops_of_pc: dict[int, list[int]] = {}  # the pcs in loops only
        for loop in self.loops:
            for b in loop.blocks:
                for pc in cfg[b].pcs:
                    loops_of_pc.setdefault(pc, []).append(loop.index)
        self.loops_of_pc = {pc: tuple(indices) for pc, indices in loops_of_pc.items()}
        self.memory_in_loop = [
            sorted(pc for b in loop.blocks for pc in cfg[b].pcs if self.is_ld[pc] or self.is_st[pc])
            for loop in self.loops
        ]
        # The first end at which a range from each pc holds a whole loop (n if none does).
        self.first_whole_end = [n] * (n + 1)
        for loop in self.loops:
            at = loop.start_pc
            self.first_whole_end[at] = min(self.first_whole_end[at], loop.end_pc - 1)
        for pc in range(n - 1, -1, -1):
            self.first_whole_end[pc] = min(self.first_whole_end[pc], self.first_whole_end[pc + 1])
        self.second_root_end = self._second_root_ends()
        # The words the loads and stores of each pc save, plainly and at most (trip counts).
        words = [
            ld * _LOAD_WORDS + st * _STORE_WORDS
            for ld, st in zip(self.is_ld, self.is_st, strict=True)
        ]
        self.words_before = list(accumulate(words, initial=0.0))
        factor = [self._largest_factor(loop) for loop in self.loops]
        for pc, indices in loops_of_pc.items():
            words[pc] *= math.prod(factor[i] for i in indices)
        self.most_words_before = list(accumulate(words, initial=0.0))
        self._loop_counts: dict[Factors, _LoopCounts] = {}

    def _last_ends(self, lowest_pred: list[int], lowest_succ: list[int]) -> list[int]:
        """The last end a range beginning at each pc may reach before it meets a forbidden pc,
        a branch back before its begin, or a branch into it from before its begin.

        Pc ``j`` stops the ranges beginning in ``(lowest_succ[j], j]`` (all up to ``j`` if it is
        forbidden) and in ``(lowest_pred[j], j - 1]``; one sweep with a heap finds, for each
        begin, the nearest pc that stops it.
        """
        n = self.n
        stopping: dict[int, list[tuple[int, int]]] = {}  # first begin -> (pc, last begin)
        for j in range(n):
            low = -1 if self.forbidden[j] else lowest_succ[j]
            if low < j:
                stopping.setdefault(low + 1, []).append((j, j))
            if lowest_pred[j] < j - 1:
                stopping.setdefault(lowest_pred[j] + 1, []).append((j, j - 1))
        heap: list[tuple[int, int]] = []
        last = [0] * n
        for begin in range(n):
            for item in stopping.get(begin, ()):
                heappush(heap, item)
            while heap and heap[0][1] < begin:
                heappop(heap)
            last[begin] = (heap[0][0] if heap else n) - 1
        return last

    def _second_root_ends(self) -> list[int]:
        """For each begin, the end from which a range holds two outermost loops for good: two
        loops starting at or after the begin whose parents start before it (or have none)."""
        n = self.n
        starting: dict[int, list[Loop]] = {}
        for loop in self.loops:
            starting.setdefault(loop.start_pc, []).append(loop)
        heap: list[tuple[int, int, int]] = []  # (last pc, index, the begin it is a root above)

        def drop_stale(begin: int) -> None:
            while heap and heap[0][2] >= begin:
                heappop(heap)

        out = [n] * n
        for begin in range(n - 1, -1, -1):
            for loop in starting.get(begin, ()):
                parent = self.loops[loop.parent].start_pc if loop.parent is not None else -1
                heappush(heap, (loop.end_pc - 1, loop.index, parent))
            drop_stale(begin)
            if heap:
                first = heappop(heap)
                drop_stale(begin)
                if heap:
                    out[begin] = heap[0][0]
                heappush(heap, first)
        return out

    def _largest_factor(self, loop: Loop) -> int:
        """The largest trip-count factor a block holding ``loop`` can give it without a
        condition (see ``_factor_options``): its static count, or the count its start, step and
        bound give when each is a constant at the block's begin."""
        if loop.trip_count_kind is TripCountKind.STATIC:
            return loop.static_trip_count or 1
        iv = loop.induction
        if loop.trip_count_kind is not TripCountKind.ENTRY or iv is None:
            return 1
        start, step, bound = (
            self._constant_at_begin(v, loop) for v in (iv.start, iv.step, iv.bound)
        )
        if start is None or step is None or bound is None:
            return 1
        first = start + step if iv.tested_after_step else start
        return trip_count_of(first, step, bound, iv.comparison) or 1

    def _constant_at_begin(self, value: LoopValue, loop: Loop) -> int | None:
        """The constant ``value`` can be at a block's begin (see ``_value_at_begin``): its own,
        or the one moved into its register by the last write before the loop, the only write
        that can be a block's one write of the register outside the loop."""
        if value.register is None:
            return value.constant
        pcs = self.writes_of.get(value.register, ())
        at = bisect_left(pcs, loop.start_pc)
        if not at:
            return None
        inst = self.function.instructions[pcs[at - 1]]
        source = inst.operands[1] if inst.opcode == "mov" else None
        cfg, dom = self.analysis.cfg, self.analysis.dominance
        if (
            isinstance(source, Immediate)
            and not source.is_float
            and inst.guard is None
            and dom.dominates(cfg.block_of_pc[inst.pc], loop.header)
        ):
            return int(source.value)
        return None

    def _loop_entry(self, loop: Loop) -> int:
        """The first pc a "loops" block holding ``loop`` may start at: in its preheader, the
        straight-line block just before the loop's span that leads only into the loop, the
        first pc after the preheader's last load or store. What follows it sets the loop up
        (the counter's start, as ``n = 0`` in ``for (n = 0; ...)``, pointers, the jump to a
        header placed mid-span); an access before it belongs to other code. Without such a
        preheader, the span's own start."""
        cfg = self.analysis.cfg
        if loop.start_pc == 0:
            return 0
        before = cfg.block_of_pc[loop.start_pc - 1]
        enclosing = {lp.index for lp in self.analysis.loops_holding(before)}
        inside = {lp.index for lp in self.analysis.loops_holding(loop.header)} - {loop.index}
        if before in loop.blocks or enclosing - inside:
            return loop.start_pc  # part of the loop, or of another loop the loop is not in
        if not all(succ in loop.blocks for succ in cfg[before].successors):
            return loop.start_pc  # a guard that may skip the loop: code around it
        entry = loop.start_pc
        while entry > cfg[before].start and not (self.is_ld[entry - 1] or self.is_st[entry - 1]):
            entry -= 1
        return entry

    # ------------------------------------------------------------------ loop trip counts
    def _writes_outside(self, register: str, loop: Loop, begin: int, end: int) -> list[int]:
        """Pcs in ``[begin, end]`` but outside ``loop`` that write ``register``."""
        pcs = self.writes_of.get(register, ())
        block_of = self.analysis.cfg.block_of_pc
        out = []
        for pc in pcs[bisect_left(pcs, begin) :]:
            if pc > end:
                break
            if block_of[pc] not in loop.blocks:
                out.append(pc)
        return out

    def _value_at_begin(
        self, value: LoopValue, loop: Loop, begin: int, end: int
    ) -> LoopValue | None:
        """``value`` (read at loop entry) as read at ``begin`` instead; None if it cannot be."""
        if value.register is None:
            return value
        writes = self._writes_outside(value.register, loop, begin, end)
        if not writes:
            return value
        if len(writes) > 1:
            return None
        inst = self.function.instructions[writes[0]]
        cfg, dom = self.analysis.cfg, self.analysis.dominance
        if (
            inst.opcode != "mov"
            or inst.guard is not None
            or inst.pc >= loop.start_pc
            or not dom.dominates(cfg.block_of_pc[inst.pc], loop.header)
        ):
            return None
        source = inst.operands[1]
        if isinstance(source, Immediate) and not source.is_float:
            return LoopValue(constant=int(source.value))
        if (
            isinstance(source, Register)
            and not source.negated
            and not self._writes_outside(source.name, loop, begin, end)
        ):
            return LoopValue(register=source.name)
        return None

    def _trip_condition(self, loop: Loop, begin: int, end: int) -> TripCondition | None:
        """The count of an ``entry`` loop as known at ``begin``; None if it is not."""
        iv = loop.induction
        if iv is None:
            return None
        start = self._value_at_begin(iv.start, loop, begin, end)
        step = self._value_at_begin(iv.step, loop, begin, end)
        bound = self._value_at_begin(iv.bound, loop, begin, end)
        if start is None or step is None or bound is None:
            return None
        return TripCondition(start, step, bound, iv.comparison, iv.tested_after_step)

    def _factor_options(
        self, whole: list[Loop], begin: int, end: int
    ) -> tuple[Factors, list[tuple[Factors, TripCondition]]]:
        """The trip-count factors of the block's whole loops with no conditional loop, and the
        alternatives making each group of entry loops that share a count conditional."""
        base: dict[int, int] = {}
        groups: dict[TripCondition, list[int]] = {}
        for loop in whole:
            base[loop.index] = 1
            if loop.trip_count_kind is TripCountKind.STATIC:
                base[loop.index] = loop.static_trip_count or 1
                continue
            if loop.trip_count_kind is not TripCountKind.ENTRY:
                continue
            condition = self._trip_condition(loop, begin, end)
            if condition is None:
                continue
            if not condition.registers:  # constants once read at begin: a static count
                base[loop.index] = condition.trip_count({}) or 1
                continue
            groups.setdefault(condition, []).append(loop.index)
        alternatives = []
        for condition, members in groups.items():
            varied = dict(base)
            varied.update((index, _VARIABLE) for index in members)
            alternatives.append((tuple(sorted(varied.items())), condition))
        return tuple(sorted(base.items())), alternatives

    def _counts(self, factors: Factors) -> _LoopCounts:
        cached = self._loop_counts.get(factors)
        if cached is not None:
            return cached
        factor_of = dict(factors)
        inside_ld = inside_st = 0
        fixed_ld = fixed_st = loop_ld = loop_st = 0.0
        for pc in sorted({pc for index in factor_of for pc in self.memory_in_loop[index]}):
            weight = 1.0
            variable = False
            for index in self.loops_of_pc[pc]:
                factor = factor_of.get(index, 1)
                if factor == _VARIABLE:
                    variable = True  # a nested loop of the same count still counts once
                else:
                    weight *= factor
            ld, st = self.is_ld[pc], self.is_st[pc]
            inside_ld += ld
            inside_st += st
            if variable:
                loop_ld += weight * ld
                loop_st += weight * st
            else:
                fixed_ld += weight * ld
                fixed_st += weight * st
        counts = _LoopCounts(inside_ld, inside_st, fixed_ld, fixed_st, loop_ld, loop_st)
        self._loop_counts[factors] = counts
        return counts

    # ----------------------------------------------------------------------- the ranges
    def _live_in_count(self, begin: int, end: int) -> int:
        """REG_TX: the registers live at ``begin`` that ``[begin, end]`` reads or writes."""
        touches = self._next_touches.get(begin)
        if touches is None:  # the first pc at or after begin that touches each live register
            touches = []
            for name in self.live_before[begin]:
                pcs = self.touches[name]
                at = bisect_left(pcs, begin)
                if at < len(pcs):
                    touches.append(pcs[at])
            touches.sort()
            self._next_touches[begin] = touches
        return bisect_right(touches, end)

    def _live_out_count(self, begin: int, end: int) -> int:
        """REG_RX: the registers live at ``end + 1`` that ``[begin, end]`` may write."""
        writes = self._last_writes.get(end)
        if writes is None:  # the last pc at or before end that writes each live register
            writes = []
            for name in self.live_before[end + 1]:
                pcs = self.writes_of[name]
                at = bisect_right(pcs, end)
                if at:
                    writes.append(pcs[at - 1])
            writes.sort()
            self._last_writes[end] = writes
        return len(writes) - bisect_left(writes, begin)

    def _whole_loops(self, begin: int, end: int) -> list[Loop]:
        """The loops wholly inside ``[begin, end]``, by last pc (then outermost first)."""
        lo = bisect_left(self.loop_starts, (begin,))
        hi = bisect_right(self.loop_starts, (end, math.inf))
        whole = [self.loops[i] for _, i in self.loop_starts[lo:hi]]
        whole = [loop for loop in whole if loop.end_pc - 1 <= end]
        whole.sort(key=lambda loop: (loop.end_pc, loop.index))
        return whole

    def saving_bound(self, begin: int, end: int) -> float:
        """No range ``[begin, e]`` with ``e <= end`` saves more words unconditionally: its loads
        and stores, each counted as often as its loops could at most repeat it."""
        if end < self.first_whole_end[begin]:  # no whole loop: the plain count
            return self.words_before[end + 1] - self.words_before[begin]
        return self.most_words_before[end + 1] - self.most_words_before[begin]

    def evaluate(self, begin: int, end: int) -> _Evaluation | None:
        """``[begin, end]`` if it obeys the rules (all but the block rule) and saves bandwidth."""
        needs_end_at = self.highest_succ.max(begin, end)
        if end > begin:
            needs_end_at = max(needs_end_at, self.highest_pred.max(begin + 1, end))
        n_ld = self.ld_before[end + 1] - self.ld_before[begin]
        n_st = self.st_before[end + 1] - self.st_before[begin]
        if needs_end_at > end or not (n_ld or n_st):
            return None
        whole = self._whole_loops(begin, end)
        held = {loop.index for loop in whole}
        if sum(loop.parent not in held for loop in whole) > 1:
            return None
        reg_tx = self._live_in_count(begin, end)
        reg_rx = self._live_out_count(begin, end)
        return self._evaluate(begin, end, reg_tx, reg_rx, n_ld, n_st, whole)

    def _evaluate(
        self, begin: int, end: int, reg_tx: int, reg_rx: int, n_ld: int, n_st: int, whole
    ) -> _Evaluation | None:
        factors, alternatives = self._factor_options(whole, begin, end) if whole else ((), [])
        counts = self._counts(factors)
        ld = n_ld - counts.inside_ld + counts.fixed_ld
        st = n_st - counts.inside_st + counts.fixed_st
        cost = (reg_tx + reg_rx) * WARP_SIZE
        if cost - ld * _LOAD_WORDS - st * _STORE_WORDS < 0:
            return _Evaluation(begin, end, reg_tx, reg_rx, ld, st, 0.0, 0.0, None, factors, None)
        best: _Evaluation | None = None
        for varied, condition in alternatives:
            counts = self._counts(varied)
            once_ld = n_ld - counts.inside_ld + counts.fixed_ld
            once_st = n_st - counts.inside_st + counts.fixed_st
            threshold = break_even_trips(
                reg_tx, reg_rx, counts.loop_ld, counts.loop_st,
                n_ld_once=once_ld, n_st_once=once_st,
            )  # fmt: skip
            if threshold is None or threshold == 1:
                continue
            evaluation = _Evaluation(
                begin, end, reg_tx, reg_rx,
                once_ld + counts.loop_ld, once_st + counts.loop_st,
                counts.loop_ld, counts.loop_st, threshold, varied, condition,
            )  # fmt: skip
            if best is None or evaluation.rank() < best.rank():
                best = evaluation
        return best

    # -------------------------------------------------------------------- the candidates
    def candidate(self, e: _Evaluation) -> TomCandidate:
        factor_of = dict(e.factors)
        kind, trips, header = "none", 1, None
        if factor_of:
            variable = [i for i, f in e.factors if f == _VARIABLE]
            loop = self.loops[min(variable or factor_of)]  # the conditional or outermost loop
            factor = factor_of[loop.index]
            if factor == _VARIABLE:
                kind = "entry"
            elif factor > 1 or loop.trip_count_kind is TripCountKind.STATIC:
                kind, trips = "static", factor
            else:
                kind = loop.trip_count_kind.value
            header = self.analysis.cfg[loop.header].start
        bw_tx, bw_rx = bandwidth_change(e.reg_tx, e.reg_rx, e.ld, e.st)
        tag = _tag(bw_tx, bw_rx)
        if e.threshold is not None:
            extra = e.threshold - 1
            at_threshold = bandwidth_change(
                e.reg_tx, e.reg_rx, e.ld + extra * e.loop_ld, e.st + extra * e.loop_st
            )
            tag = _tag(*at_threshold)
        begin, end = e.begin, e.end
        cfg = self.analysis.cfg
        touched = {r for pc in range(begin, end + 1) for r in (*cfg.reads[pc], *cfg.writes[pc])}
        written = {r for pc in range(begin, end + 1) for r in cfg.writes[pc]}
        live_registers = max(
            sum(self.slots[r] for r in self.live_before[pc] if r in touched)
            for pc in range(begin, end + 2)
        )
        return TomCandidate(
            begin=begin,
            end=end,
            live_in=tuple(sorted(touched.intersection(self.live_before[begin]))),
            live_out=tuple(sorted(written.intersection(self.live_before[end + 1]))),
            n_ld=self.ld_before[end + 1] - self.ld_before[begin],
            n_st=self.st_before[end + 1] - self.st_before[begin],
            ld_executions=e.ld,
            st_executions=e.st,
            loop_kind=kind,
            trips=trips,
            loop_header_pc=header,
            condition_register=e.condition.registers[0] if e.condition else None,
            threshold=e.threshold,
            bw_tx=bw_tx,
            bw_rx=bw_rx,
            tag=tag,
            loop_ld=e.loop_ld,
            loop_st=e.loop_st,
            live_registers=live_registers,
            trip_condition=e.condition,
        )

    def thread_live_registers(self) -> int:
        """The most 32-bit register slots live at once anywhere in the function."""
        return max(sum(self.slots[r] for r in live) for live in self.live_before)


class _Choice:
    """The greedy choice of disjoint ranges under one block rule, best first.

    Every begin gets one entry in a heap, keyed first by a bound no range from it can beat and,
    once looked at, by its best range: only begins whose bound competes with the best range so
    far are ever evaluated, and only their ends whose bound does. A range whose begin lies in a
    loop body, and that waits while a free range holds the whole loop (see the module
    docstring), is parked with that loop; one free range that holds the loop (its witness)
    stands for all of them, and the parked begins come back when no free range holds it.
    """

    def __init__(self, search: _Search, rule: str):
        self.search = search
        self.rule = rule
        n = search.n
        self.top = [self._top(begin) for begin in range(n)]
        self.top_max = RangeMax(self.top)
        self.chosen = ChosenRanges()
        self.heap: list[tuple[tuple, int, int, int, _Evaluation | None]] = []
        self.sequence = count()
        self.todo: list[tuple[int, int]] = []  # (begin, least end) to look at again
        self.witness: dict[int, tuple[int, int] | None] = {}  # None: no free range holds it
        self.parked: dict[int, list[tuple[int, int]]] = {}  # loop -> (begin, least end)
        self.watched = IntervalIndex()  # the witnesses of the loops with parked begins

    def _top(self, begin: int) -> int:
        """The last end a range from ``begin`` may have under the rule (below begin if none)."""
        s = self.search
        if self.rule == "maximal":
            return min(s.last_end[begin], s.second_root_end[begin] - 1)
        loop_end = s.loop_end_from[begin]
        if s.first_whole_end[begin] <= loop_end <= s.last_end[begin]:
            return loop_end
        return min(s.last_end[begin], s.first_whole_end[begin] - 1)

    def _ends(self, begin: int, least: int, most: int, *, rising: bool = False) -> Iterable[int]:
        """The ends in ``[least, most]`` that the rule allows a range from ``begin``, highest
        first (or lowest first if ``rising``). "loops": before the first whole loop, or exactly
        the end of the loop set up at ``begin``; "maximal": before two outermost loops are
        whole."""
        s = self.search
        least = max(least, begin)
        loop_free = self.top[begin]
        loop_end = ()
        if self.rule == "loops":
            loop_free = min(s.last_end[begin], s.first_whole_end[begin] - 1)
            if loop_free < self.top[begin] and least <= self.top[begin] <= most:
                loop_end = (self.top[begin],)
        most = min(most, loop_free)
        if rising:
            return chain(range(least, most + 1), loop_end)
        return chain(loop_end, range(most, least - 1, -1))

    def best(self, begin: int, least: int, most: int) -> _Evaluation | None:
        """The best profitable range from ``begin`` ending in ``[least, most]``. Ends are tried
        from the highest down, and the search stops when no lower end can save as much as the
        best unconditional range found (conditional ranges rank after every unconditional)."""
        s = self.search
        best: _Evaluation | None = None
        total = None  # the best unconditional range's BW_TX + BW_RX
        for end in self._ends(begin, least, most):
            if total is not None:
                bound = s.saving_bound(begin, end)
                if -bound >= total + _MARGIN * (bound - total):
                    break
            elif s.ld_before[end + 1] == s.ld_before[begin] and (
                s.st_before[end + 1] == s.st_before[begin]
            ):
                break  # no load or store left
            evaluation = s.evaluate(begin, end)
            if evaluation is None:
                continue
            rank = evaluation.rank()
            if best is None or rank < best.rank():
                best = evaluation
            if evaluation.threshold is None and (total is None or rank[1] < total):
                total = rank[1]
        return best

    def _first_profitable(self, begin: int, least: int, most: int) -> _Evaluation | None:
        for end in self._ends(begin, least, most, rising=True):
            evaluation = self.search.evaluate(begin, end)
            if evaluation is not None:
                return evaluation
        return None

    # ---------------------------------------------------------------- loops held whole
    def _held(self, loop: Loop) -> bool:
        """Whether a free profitable range holds ``loop`` whole."""
        witness = self.witness.get(loop.index, ())
        if witness is None:
            return False  # ranges only stop being free
        if witness and not self.chosen.overlaps(*witness):
            return True
        s = self.search
        window = self.chosen.free_around(loop.start_pc, loop.end_pc - 1, s.n - 1)
        witness = None
        if window is not None:
            low, high = window
            need = loop.end_pc - 1
            last = loop.start_pc
            while witness is None:
                begin = self.top_max.last_at_least(low, last, need)
                if begin is None:
                    break
                found = self._first_profitable(begin, need, min(high, self.top[begin]))
                if found is not None:
                    witness = (found.begin, found.end)
                last = begin - 1
        self.witness[loop.index] = witness
        if witness is None:
            self.todo.extend(self.parked.pop(loop.index, ()))
        elif loop.index in self.parked:
            self.watched.add(*witness, loop.index)
        return witness is not None

    def _park(self, loop: Loop, begin: int, least: int) -> None:
        if loop.index not in self.parked:
            self.parked[loop.index] = []
            self.watched.add(*self.witness[loop.index], loop.index)  # type: ignore[misc]
        self.parked[loop.index].append((begin, least))

    # ----------------------------------------------------------------------- the choice
    def _look_at(self, begin: int, least: int) -> None:
        """Queue the best range from ``begin`` ending at ``least`` or later that may be chosen
        now, parking the better ones that wait for a loop."""
        s = self.search
        while not self.chosen.covers(begin):
            at = bisect_right(self.chosen.begins, begin)
            most = self.chosen.begins[at] - 1 if at < len(self.chosen.begins) else s.n - 1
            best = self.best(begin, least, most)
            if best is None:
                return
            block = s.analysis.cfg.block_of_pc[begin]
            waits = [
                loop
                for loop in s.analysis.loops_holding(block)
                if not (loop.start_pc == begin and loop.end_pc - 1 <= best.end) and self._held(loop)
            ]
            if not waits:
                heappush(self.heap, (best.rank(), next(self.sequence), begin, least, best))
                return
            never_whole = [loop for loop in waits if loop.start_pc < begin]
            if never_whole:  # no range from begin holds it: all of them wait
                self._park(never_whole[0], begin, least)
                return
            # the ranges ending before the widest waiting loop's end wait for it; the others
            # hold every waiting loop
            widest = max(waits, key=lambda loop: loop.end_pc)
            self._park(widest, begin, least)
            least = widest.end_pc - 1

    def run(self) -> list[_Evaluation]:
        s = self.search
        for begin in range(s.n):
            top = self.top[begin]
            if top >= begin:
                saving = s.saving_bound(begin, top) * (1 + _MARGIN)
                bound = (0, -saving, begin - top, begin)
                heappush(self.heap, (bound, next(self.sequence), begin, begin, None))
        chosen: list[_Evaluation] = []
        while True:
            while self.todo:
                self._look_at(*self.todo.pop())
            if not self.heap:
                break
            _, _, begin, least, best = heappop(self.heap)
            if best is None or self.chosen.overlaps(best.begin, best.end):
                self.todo.append((begin, least))
                continue
            chosen.append(best)
            self.chosen.add(best.begin, best.end)
            for index in self.watched.pop_overlapping(best.begin, best.end):
                if index in self.parked:
                    self._held(s.loops[index])
        return sorted(chosen, key=lambda e: e.begin)


def _search(function: Function) -> _Search:
    search = function.derived.get("tom search")
    if search is None:
        search = function.derived["tom search"] = _Search(function, analyze(function))
    return search  # type: ignore[return-value]


def tom_candidates(function: Function, blocks: str = "loops") -> tuple[TomCandidate, ...]:
    """TOM's offload candidate blocks of ``function`` under the block rule ``blocks`` (see
    :data:`BLOCK_RULES`): disjoint, ordered by ``begin``, and computed once per function and
    rule."""
    if blocks not in BLOCK_RULES:
        raise ValueError(f"unknown TOM block rule {blocks!r}; expected one of {BLOCK_RULES}")
    by_rule: dict = function.derived.setdefault("tom candidates", {})  # type: ignore[assignment]
    cached = by_rule.get(blocks)
    if cached is None:
        search = _search(function)
        cached = by_rule[blocks] = tuple(map(search.candidate, _Choice(search, blocks).run()))
    return cached


def thread_live_registers(function: Function) -> int:
    """The most 32-bit registers live at once in ``function`` (64-bit ones count twice,
    predicates not at all): a whole thread's register demand, against which sec. 6.4 compares
    an offloaded block's (:attr:`TomCandidate.live_registers`)."""
    return _search(function).thread_live_registers()
