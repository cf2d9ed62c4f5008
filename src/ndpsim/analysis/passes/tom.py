"""TOM's offload candidates (Hsieh et al., ISCA 2016, sec. 3.1), one pass per block rule."""

from functools import partial

from ndpsim.analysis.passes import OFFLOAD_PASSES
from ndpsim.analysis.tom import BLOCK_RULES, tom_candidates

for _rule in BLOCK_RULES:
    OFFLOAD_PASSES.register(f"tom-{_rule}")(partial(tom_candidates, blocks=_rule))
