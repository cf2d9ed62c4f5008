"""The one seeding rule: a stream per (seed, purpose), independent of the others and of the
order they are drawn in."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from ndpsim.errors import ConfigError
from ndpsim.seeding import generator, sequence, state63
from ndpsim.workloads import get_workload


def test_a_stream_depends_on_its_seed_and_purpose_only():
    first = generator(3, "workload/bfs").integers(0, 1 << 30, 8)
    generator(3, "page-placement").integers(0, 1 << 30, 100)  # another stream drawn between
    again = generator(3, "workload/bfs").integers(0, 1 << 30, 8)
    assert (first == again).all()
    assert (generator(4, "workload/bfs").integers(0, 1 << 30, 8) != first).any()
    assert (generator(3, "workload/bsf").integers(0, 1 << 30, 8) != first).any()


def test_workloads_whose_names_are_anagrams_draw_different_inputs(monkeypatch):
    bfs = get_workload("bfs")("tiny", 0)
    monkeypatch.setattr(bfs, "name", "sbf")  # the sum of its bytes is bfs's
    anagram = bfs.rng().integers(0, 1 << 30, 8)
    monkeypatch.setattr(bfs, "name", "bfs")
    assert (anagram != bfs.rng().integers(0, 1 << 30, 8)).any()


def test_the_sequence_is_the_seed_spawned_for_the_purpose():
    s = sequence(7, "offload/launch-0")
    assert s.entropy == 7 and len(s.spawn_key) == 1


@given(st.integers(0, 2**64), st.text(min_size=1, max_size=40))
def test_a_compiled_generators_state_is_nonzero_and_63_bits(seed, purpose):
    state = state63(seed, purpose)
    assert 0 < state < 1 << 63
    assert state == state63(seed, purpose)


@pytest.mark.parametrize("seed", [-1, 1.5, True, "3", None])
def test_a_bad_seed_is_refused(seed):
    with pytest.raises(ConfigError, match="seed must be an integer >= 0"):
        generator(seed, "workload/bfs")


@pytest.mark.parametrize("purpose", ["", None, 3])
def test_a_stream_without_a_purpose_is_refused(purpose):
    with pytest.raises(ConfigError, match="purpose must be a non-empty string"):
        generator(0, purpose)


def test_numpy_integers_are_seeds_too():
    assert (generator(np.int64(2), "x").random(3) == generator(2, "x").random(3)).all()
