"""Compiler passes that choose the code a near-data system runs near memory.

A pass takes a PTX function and returns its blocks (offload candidates): disjoint, ordered by
their first pc, each with the registers it reads and writes. An offload scheme names the pass it
uses; the modules of this package register the shipped passes (TOM's candidate blocks under
each block rule, SNDP's blocks), and MPU's location analysis and ALP's segments will join them
the same way.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ndpsim.frontend.ir import Function
from ndpsim.registry import Registry

#: A pass: the function's offload blocks, computed once per function (cached on it).
OffloadPass = Callable[[Function], Sequence[Any]]

OFFLOAD_PASSES: Registry[OffloadPass] = Registry("offload pass", "ndpsim.analysis.passes")
