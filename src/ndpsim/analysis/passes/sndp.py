"""SNDP's offload blocks for partitioned execution (Kim et al., SC 2017, sec. 4)."""

from ndpsim.analysis.passes import OFFLOAD_PASSES
from ndpsim.analysis.sndp import sndp_blocks

OFFLOAD_PASSES.register("sndp")(sndp_blocks)
