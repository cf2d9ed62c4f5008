"""Static analyses of PTX functions: pure functions from the IR to frozen results.

:class:`FunctionAnalysis` bundles the analyses of one function and computes each on first use,
so passes ask for what they need (``analysis.loops``, ``analysis.liveness`` ...) without caring
about the order they are built in. :func:`analyze` hands every caller the same bundle for a
function, so the interpreter, the timing models and the offload passes share one computation.
"""

from __future__ import annotations

from functools import cached_property

from ndpsim.analysis.cfg import BasicBlock, ControlFlowGraph
from ndpsim.analysis.classify import Access, InstructionClass, Kind, Role, classify
from ndpsim.analysis.dataflow import DefUse, Liveness
from ndpsim.analysis.dominance import EXIT, Dominance
from ndpsim.analysis.loops import InductionVariable, Loop, LoopValue, TripCountKind, find_loops
from ndpsim.frontend.ir import Function

__all__ = [
    "EXIT",
    "Access",
    "BasicBlock",
    "ControlFlowGraph",
    "DefUse",
    "Dominance",
    "FunctionAnalysis",
    "InductionVariable",
    "InstructionClass",
    "Kind",
    "Liveness",
    "Loop",
    "LoopValue",
    "Role",
    "TripCountKind",
    "analyze",
]


class FunctionAnalysis:
    """Every analysis of one function, each computed once on first access."""

    def __init__(self, function: Function):
        self.function = function

    @cached_property
    def cfg(self) -> ControlFlowGraph:
        return ControlFlowGraph(self.function)

    @cached_property
    def dominance(self) -> Dominance:
        return Dominance(self.cfg)

    @cached_property
    def liveness(self) -> Liveness:
        return Liveness(self.cfg)

    @cached_property
    def defuse(self) -> DefUse:
        return DefUse(self.cfg, self.liveness)

    @cached_property
    def loops(self) -> tuple[Loop, ...]:
        return find_loops(self.cfg, self.dominance, self.defuse)

    @cached_property
    def classes(self) -> tuple[InstructionClass, ...]:
        return classify(self.cfg, self.defuse)

    @cached_property
    def _loops_of_block(self) -> tuple[tuple[Loop, ...], ...]:
        """The loops holding each block, found once so that every question about them is cheap."""
        holding: list[list[Loop]] = [[] for _ in self.cfg]
        for loop in self.loops:
            for block in loop.blocks:
                holding[block].append(loop)
        return tuple(map(tuple, holding))

    def loops_holding(self, block: int) -> tuple[Loop, ...]:
        """The loops that contain ``block``, in the order of :attr:`loops` (outermost first)."""
        return self._loops_of_block[block]

    def loop_depth(self, block: int) -> int:
        """How many loops contain ``block``."""
        return len(self._loops_of_block[block])

    def innermost_loop(self, block: int) -> Loop | None:
        inner = self._loops_of_block[block]
        return max(inner, key=lambda loop: loop.depth) if inner else None


def analyze(function: Function) -> FunctionAnalysis:
    """The (shared, lazily computed) analyses of ``function``, kept on it (``derived``)."""
    analysis = function.derived.get("analysis")
    if analysis is None:
        analysis = function.derived["analysis"] = FunctionAnalysis(function)
    return analysis  # type: ignore[return-value]
