"""TOM's stack SM (Hsieh et al. ISCA 2016, Table 1: one SM per memory stack, 48 warps): a GPU
SM in the logic layer that runs offloaded blocks whole, with its own L1."""

from __future__ import annotations

from ndpsim.hw.core.contract import CORES
from ndpsim.hw.core.stack_processor import StackProcessor


@CORES.register("stack_sm")
class StackSm(StackProcessor):
    """TOM's stack SM (see the module)."""
