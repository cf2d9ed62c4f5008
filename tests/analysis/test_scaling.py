"""Every analysis pass on generated kernels of 3,000 instructions, each shape in turn.

The suite's largest kernel has a few hundred instructions; these have ten times more. A pass
whose work grows with the square (or the cube) of the kernel's length would take minutes here
instead of seconds, so this module guards the passes' complexity without timing anything. What
it asserts is that the passes still find what the generator wrote (``bench/analysis.py`` times
the same kernels up to 100,000 instructions).
"""

from __future__ import annotations

from collections import Counter
from itertools import pairwise

import pytest

from ndpsim.analysis import TripCountKind, analyze
from ndpsim.analysis.sndp import indirect_loads, sndp_blocks
from ndpsim.analysis.tom import BLOCK_RULES, tom_candidates
from ndpsim.frontend.ir import Function
from ndpsim.frontend.parser import parse_ptx
from tests.analysis.synthetic_kernels import SHAPES, SyntheticKernel, synthetic_kernel

NUM_INSTRUCTIONS = 3000


@pytest.fixture(scope="module", params=SHAPES)
def generated(request) -> tuple[SyntheticKernel, Function]:
    kernel = synthetic_kernel(request.param, NUM_INSTRUCTIONS)
    return kernel, parse_ptx(kernel.ptx).functions["k"]


def test_the_generator_writes_kernels_of_the_size_asked(generated):
    kernel, function = generated
    assert len(function.instructions) == kernel.num_instructions
    assert NUM_INSTRUCTIONS <= kernel.num_instructions < NUM_INSTRUCTIONS + 50


def test_every_read_has_a_reaching_definition_and_nothing_is_live_on_entry(generated):
    _, function = generated
    a = analyze(function)
    assert a.liveness.live_before(0) == frozenset()
    for pc, reads in enumerate(a.cfg.reads):
        for register in reads:
            assert a.defuse.definitions(pc, register), (pc, register)


def test_the_loops_found_are_the_loops_written_with_their_nesting(generated):
    kernel, function = generated
    a = analyze(function)
    assert len(a.loops) == kernel.num_loops
    for loop in a.loops:
        assert all(a.dominance.dominates(loop.header, latch) for latch in loop.latches)
        assert loop.is_contiguous
        assert a.loop_depth(loop.header) == loop.depth
    kinds = Counter((loop.depth, loop.trip_count_kind, loop.static_trip_count) for loop in a.loops)
    if kernel.shape == "nested":  # depth three: the innermost counts to 8, the others to %r1
        nests = kernel.num_loops // 3
        assert kinds == {
            (1, TripCountKind.ENTRY, None): nests,
            (2, TripCountKind.ENTRY, None): nests,
            (3, TripCountKind.STATIC, 8): nests,
        }
    elif kernel.shape == "branches":
        assert kinds == {(1, TripCountKind.ENTRY, None): kernel.num_loops}
    else:
        assert len(a.cfg) == 1


@pytest.mark.parametrize("rule", BLOCK_RULES)
def test_tom_offloads_the_straight_kernel_whole_and_each_loop_or_nest_apart(generated, rule):
    kernel, function = generated
    candidates = tom_candidates(function, rule)
    assert all(a.end < b.begin for a, b in pairwise(candidates))
    if kernel.shape == "straight":  # everything but the final ret
        (candidate,) = candidates
        assert (candidate.begin, candidate.end) == (0, kernel.num_instructions - 2)
        return
    loops = analyze(function).loops
    outermost = sorted((lp for lp in loops if lp.depth == 1), key=lambda lp: lp.start_pc)
    assert len(candidates) == len(outermost)
    for candidate, loop in zip(candidates, outermost, strict=True):
        assert candidate.begin <= loop.start_pc and loop.end_pc - 1 <= candidate.end
        assert candidate.loop_kind == "entry"


def test_sndp_offloads_the_straight_kernel_whole_and_each_indirect_load_alone(generated):
    kernel, function = generated
    blocks = sndp_blocks(function)
    assert len(indirect_loads(function)) == kernel.num_indirect_loads
    assert sum(block.indirect for block in blocks) == kernel.num_indirect_loads
    assert all(block.num_instructions == 1 for block in blocks if block.indirect)
    if kernel.shape == "straight":  # nothing is live in or out: the score is every access
        (block,) = blocks
        assert (block.begin, block.end) == (0, kernel.num_instructions - 2)
        assert block.score == block.traffic_reduction_bytes > 0
