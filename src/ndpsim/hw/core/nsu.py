"""SNDP's near-data streaming unit (Kim et al. SC 2017, Table 2: one NSU per stack, 48 warps of
32 threads, no data cache): it runs its part of a partitioned block on data and write addresses
the GPU sends it (sec. 4)."""

from __future__ import annotations

from ndpsim.hw.core.contract import CORES
from ndpsim.hw.core.stack_processor import StackProcessor


@CORES.register("nsu")
class Nsu(StackProcessor):
    """SNDP's NSU (see the module)."""
