"""Compiler passes that choose the code a near-data system runs near memory.

A pass takes a PTX function and returns its blocks (offload candidates): disjoint, ordered by
their first pc, each with the registers it reads and writes. An offload scheme names the pass it
uses; the modules of this package register the shipped passes (TOM's candidates under each
block rule, SNDP's blocks, MPU's runs of one location), and ALP's segments will join them the
same way. A pass also says how ``ndpsim analyze --pass NAME`` shows its blocks.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ndpsim.frontend.ir import Function
from ndpsim.registry import Registry


@dataclass(frozen=True)
class OffloadPass:
    """A pass and how its blocks read in a table and in JSON."""

    find: Callable[[Function], Sequence[Any]]  # the function's blocks, cached on it
    noun: str  # what the blocks are called ("TOM offload candidates")
    title: str  # the table's title
    columns: tuple[tuple[str, bool], ...]  # (heading, right-aligned)
    row: Callable[[Any], tuple[str, ...]]  # a block's cells
    json_key: str  # the key of the blocks in ``--json`` output
    heading: Callable[[Function, Sequence[Any]], str]  # a function's line above its table
    none_found: str  # what to say of a function without blocks
    facts: Callable[[Function], dict[str, Any]] = field(default=lambda function: {})
    # facts of the whole function beside its blocks (in the heading and in JSON)

    def __call__(self, function: Function) -> Sequence[Any]:
        return self.find(function)


def registers_text(names: Sequence[str], limit: int = 8) -> str:
    """Register names for a table cell: the first ``limit``, then how many more."""
    if len(names) <= limit:
        return " ".join(names)
    return " ".join(names[:limit]) + f" (+{len(names) - limit})"


OFFLOAD_PASSES: Registry[OffloadPass] = Registry("offload pass", "ndpsim.analysis.passes")
