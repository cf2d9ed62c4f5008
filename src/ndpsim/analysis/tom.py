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

Choosing blocks. Every range that satisfies the rules is evaluated: ``O(n^2)`` ranges with
incrementally updated counts and register sets held as bit masks. The profitable ranges overlap
and nest heavily, and the hardware needs disjoint blocks (an offloaded block runs to its end pc),
so they are chosen greedily, best first. A range that overlaps one already chosen is skipped.
*Best* means, in this order:

1. unconditional before conditional, because an unconditional saving is certain;
2. the larger saving per instance, ``-(BW_TX + BW_RX)``; for conditional candidates, the lower
   threshold, then the larger saving per extra iteration;
3. the longer range, then the earlier ``begin``.

One exception: a range inside a loop body waits while some other free profitable range holds the
whole loop. Offloading the loop pays its registers once rather than on every iteration. This also
stops a cheap one-store block inside a loop from breaking up that loop's conditional candidate.
"""

from __future__ import annotations

import math
from bisect import bisect_left
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from weakref import WeakKeyDictionary

from ndpsim.analysis import FunctionAnalysis, analyze
from ndpsim.analysis.classify import Access, Kind
from ndpsim.analysis.loops import Loop, LoopValue, TripCountKind, trip_count_of
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
    """One function's per-pc tables and the range search over them."""

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
        # Control flow between pcs; the function's end is pc n.
        succs = cfg.pc_successors
        preds: list[list[int]] = [[] for _ in range(n + 1)]
        for pc in range(n):
            for s in succs[pc]:
                preds[s].append(pc)
        self.lowest_pred = [min(p, default=n) for p in preds[:n]]
        self.highest_pred = [max(p, default=-1) for p in preds[:n]]
        self.lowest_succ = [min(s, default=n) for s in succs]
        self.highest_succ = [max(s, default=-1) for s in succs]
        # Register sets as bit masks.
        self.names = sorted({r for inst in insts for r in (*inst.uses, *inst.defs)})
        self.bit = {name: 1 << k for k, name in enumerate(self.names)}
        self.touched = [self._mask({*i.uses, *i.defs}) for i in insts]
        self.written = [self._mask(i.defs) for i in insts]
        live = analysis.liveness
        self.live_before = [self._mask(live.live_before(pc)) for pc in range(n)] + [0]
        self.slots = {
            name: 0 if function.registers[name].name == "pred"
            else max(1, function.registers[name].size_bytes // 4)
            for name in self.names
        }  # fmt: skip
        # Loops, outermost first.
        self.loops = analysis.loops
        self.loops_ending_at: list[list[Loop]] = [[] for _ in range(n)]
        # "loops": the last pc of the outermost loop a block starting at each pc may hold, or -1
        self.loop_end_from = [-1] * n
        for loop in self.loops:
            for at in range(self._loop_entry(loop), loop.start_pc + 1):
                self.loop_end_from[at] = max(self.loop_end_from[at], loop.end_pc - 1)
        self.loops_of_pc: list[tuple[int, ...]] = [()] * n
        for loop in self.loops:
            self.loops_ending_at[loop.end_pc - 1].append(loop)
            for b in loop.blocks:
                for pc in cfg[b].pcs:
                    self.loops_of_pc[pc] = (*self.loops_of_pc[pc], loop.index)
        self.memory_in_loop = [
            [pc for pc in range(loop.start_pc, loop.end_pc)
             if cfg.block_of_pc[pc] in loop.blocks and (self.is_ld[pc] or self.is_st[pc])]
            for loop in self.loops
        ]  # fmt: skip
        self.writes_of = {r: analysis.defuse.definitions_of(r) for r in self.names}
        self._loop_counts: dict[Factors, _LoopCounts] = {}

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
        enclosing = {lp.index for lp in self.loops if before in lp.blocks}
        inside = {lp.index for lp in self.loops if loop.header in lp.blocks} - {loop.index}
        if before in loop.blocks or enclosing - inside:
            return loop.start_pc  # part of the loop, or of another loop the loop is not in
        if not all(succ in loop.blocks for succ in cfg[before].successors):
            return loop.start_pc  # a guard that may skip the loop: code around it
        entry = loop.start_pc
        while entry > cfg[before].start and not (self.is_ld[entry - 1] or self.is_st[entry - 1]):
            entry -= 1
        return entry

    def _mask(self, names) -> int:
        mask = 0
        for name in names:
            mask |= self.bit[name]
        return mask

    def _names(self, mask: int) -> tuple[str, ...]:
        return tuple(name for name in self.names if mask & self.bit[name])

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
    def profitable_ranges(self, rule: str) -> list[_Evaluation]:
        """Every range obeying the rules, and the block rule ``rule``, whose offloading saves
        bandwidth (at some count)."""
        n = self.n
        forbidden, is_ld, is_st = self.forbidden, self.is_ld, self.is_st
        lowest_pred, highest_pred = self.lowest_pred, self.highest_pred
        lowest_succ, highest_succ = self.lowest_succ, self.highest_succ
        touched, written, live_before = self.touched, self.written, self.live_before
        found: list[_Evaluation] = []
        for begin in range(n):
            if forbidden[begin]:
                continue
            live_on_entry = live_before[begin]
            touched_mask = written_mask = 0
            needs_end_at = -1  # the range is closed once end reaches this
            n_ld = n_st = 0
            whole: list[Loop] = []
            outermost = 0
            loop_end = self.loop_end_from[begin]
            for end in range(begin, n):
                if forbidden[end] or lowest_succ[end] < begin:
                    break
                if end > begin:
                    if lowest_pred[end] < begin:
                        break
                    needs_end_at = max(needs_end_at, highest_pred[end])
                needs_end_at = max(needs_end_at, highest_succ[end] - 1)
                touched_mask |= touched[end]
                written_mask |= written[end]
                n_ld += is_ld[end]
                n_st += is_st[end]
                if self.loops_ending_at[end]:
                    whole.extend(lp for lp in self.loops_ending_at[end] if lp.start_pc >= begin)
                    held = {loop.index for loop in whole}
                    outermost = sum(loop.parent not in held for loop in whole)
                if rule == "loops" and whole:
                    # a loop, from its set-up code, is a block of its own
                    if end > loop_end:
                        break
                    if end < loop_end:
                        continue
                if needs_end_at > end or outermost > 1 or not (n_ld or n_st):
                    continue
                reg_tx = (live_on_entry & touched_mask).bit_count()
                reg_rx = (live_before[end + 1] & written_mask).bit_count()
                evaluation = self._evaluate(begin, end, reg_tx, reg_rx, n_ld, n_st, whole)
                if evaluation is not None:
                    found.append(evaluation)
        return found

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

    def choose(self, evaluations: list[_Evaluation]) -> list[_Evaluation]:
        """Disjoint ranges, best first; a range inside a loop body waits while another free
        range holds that whole loop."""
        block_of = self.analysis.cfg.block_of_pc
        within = {
            id(e): {
                loop.index
                for loop in self.loops
                if block_of[e.begin] in loop.blocks and loop.index not in dict(e.factors)
            }
            for e in evaluations
        }
        free = sorted(evaluations, key=_Evaluation.rank)
        chosen: list[_Evaluation] = []
        while free:
            held = {index for e in free for index, _ in e.factors}
            best = next((e for e in free if not within[id(e)] & held), free[0])
            chosen.append(best)
            free = [e for e in free if e.end < best.begin or e.begin > best.end]
        return sorted(chosen, key=lambda e: e.begin)

    # -------------------------------------------------------------------- the candidates
    def candidate(self, e: _Evaluation) -> TomCandidate:
        touched = written = 0
        for pc in range(e.begin, e.end + 1):
            touched |= self.touched[pc]
            written |= self.written[pc]
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
        live_registers = max(self._slots(self.live_before[pc] & touched)
                             for pc in range(e.begin, e.end + 2))  # fmt: skip
        return TomCandidate(
            begin=e.begin,
            end=e.end,
            live_in=self._names(self.live_before[e.begin] & touched),
            live_out=self._names(self.live_before[e.end + 1] & written),
            n_ld=sum(self.is_ld[e.begin : e.end + 1]),
            n_st=sum(self.is_st[e.begin : e.end + 1]),
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

    def _slots(self, mask: int) -> int:
        """32-bit register slots of the registers in ``mask``."""
        return sum(self.slots[name] for name in self._names(mask))

    def thread_live_registers(self) -> int:
        """The most 32-bit register slots live at once anywhere in the function."""
        return max((self._slots(mask) for mask in self.live_before), default=0)


_SEARCHES: WeakKeyDictionary[Function, _Search] = WeakKeyDictionary()
_CANDIDATES: WeakKeyDictionary[Function, dict[str, tuple[TomCandidate, ...]]] = WeakKeyDictionary()


def _search(function: Function) -> _Search:
    search = _SEARCHES.get(function)
    if search is None:
        search = _SEARCHES[function] = _Search(function, analyze(function))
    return search


def tom_candidates(function: Function, blocks: str = "loops") -> tuple[TomCandidate, ...]:
    """TOM's offload candidate blocks of ``function`` under the block rule ``blocks`` (see
    :data:`BLOCK_RULES`): disjoint, ordered by ``begin``, and computed once per function and
    rule."""
    if blocks not in BLOCK_RULES:
        raise ValueError(f"unknown TOM block rule {blocks!r}; expected one of {BLOCK_RULES}")
    by_rule = _CANDIDATES.setdefault(function, {})
    cached = by_rule.get(blocks)
    if cached is None:
        search = _search(function)
        chosen = search.choose(search.profitable_ranges(blocks))
        cached = by_rule[blocks] = tuple(search.candidate(e) for e in chosen)
    return cached


def thread_live_registers(function: Function) -> int:
    """The most 32-bit registers live at once in ``function`` (64-bit ones count twice,
    predicates not at all): a whole thread's register demand, against which sec. 6.4 compares
    an offloaded block's (:attr:`TomCandidate.live_registers`)."""
    return _search(function).thread_live_registers()
