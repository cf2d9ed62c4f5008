"""Set-associative LRU caches: hits and misses against a pure-Python reference, LRU victims,
write-back victims reported dirty, probes that leave LRU order alone, invalidation, independent
cache instances, and the MSHR table."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ndpsim.hw import cache as C

LINE = 128


def small_caches(count=1, sets=4, ways=2, mshrs=4):
    return C.build_caches(count, sets * ways * LINE, ways, LINE, mshrs)


def lines_of_set(s, n, sets=4):
    """``n`` distinct lines that map to set ``s``."""
    return [s + sets * k for k in range(n)]


class ReferenceLru:
    """Each set a list of lines from least to most recently used, with dirty bits."""

    def __init__(self, sets: int, ways: int):
        self.sets, self.ways = sets, ways
        self.order: list[list[int]] = [[] for _ in range(sets)]
        self.dirty: set[int] = set()

    def access(self, line: int, write: bool) -> tuple[bool, int, bool]:
        """(hit, evicted line or INVALID, evicted line was dirty)."""
        lru = self.order[line % self.sets]
        if line in lru:
            if write:
                self.dirty.add(line)
            lru.remove(line)
            lru.append(line)
            return True, C.INVALID, False
        evicted, was_dirty = C.INVALID, False
        if len(lru) == self.ways:
            evicted = lru.pop(0)
            was_dirty = evicted in self.dirty
            self.dirty.discard(evicted)
        lru.append(line)
        if write:
            self.dirty.add(line)
        return False, evicted, was_dirty


def access(c, cache, line, write):
    """What a write-back cache controller does: look up, fill on a miss (or mark a write hit
    dirty); returns (hit, evicted, evicted was dirty)."""
    hit = bool(C.lookup(c, cache, line))
    if hit:
        if write:
            assert C.fill(c, cache, line, True) == (C.INVALID, False)
        return True, C.INVALID, False
    evicted, was_dirty = C.fill(c, cache, line, write)
    return False, int(evicted), bool(was_dirty)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 23), st.booleans()), max_size=200),
    st.sampled_from([(4, 2), (1, 4), (2, 1), (8, 3)]),
)
def test_hits_misses_and_victims_match_a_reference_lru(trace, shape):
    sets, ways = shape
    c = small_caches(sets=sets, ways=ways)
    ref = ReferenceLru(sets, ways)
    for line, write in trace:
        assert access(c, 0, line, write) == ref.access(line, write), (line, write)
    for s, lru in enumerate(ref.order):
        for line in lines_of_set(s, 6, sets):
            assert bool(C.probe(c, 0, line)) == (line in lru)


def test_the_least_recently_used_way_is_evicted():
    c = small_caches()
    a, b, d = lines_of_set(1, 3)
    assert C.fill(c, 0, a, False) == (C.INVALID, False)
    assert C.fill(c, 0, b, False) == (C.INVALID, False)
    assert C.lookup(c, 0, a)  # a is now the most recent, b the least
    assert C.fill(c, 0, d, False) == (b, False)
    assert C.probe(c, 0, a) and C.probe(c, 0, d) and not C.probe(c, 0, b)
    assert not C.lookup(c, 0, b)


def test_a_miss_does_not_disturb_other_sets():
    c = small_caches()
    C.fill(c, 0, 0, False)  # set 0
    for line in lines_of_set(1, 10):
        C.fill(c, 0, line, False)
    assert C.probe(c, 0, 0)


def test_filling_over_a_dirty_victim_reports_it_for_write_back():
    c = small_caches()
    a, b, d, e = lines_of_set(2, 4)
    C.fill(c, 0, a, True)
    C.fill(c, 0, b, False)
    evicted, was_dirty = C.fill(c, 0, d, False)
    assert (evicted, bool(was_dirty)) == (a, True)
    evicted, was_dirty = C.fill(c, 0, e, False)
    assert (evicted, bool(was_dirty)) == (b, False)  # a clean victim needs no write-back


def test_a_write_fill_over_a_present_line_marks_it_dirty_and_evicts_nothing():
    c = small_caches()
    a, b, d = lines_of_set(0, 3)
    C.fill(c, 0, a, False)
    C.fill(c, 0, b, False)
    assert C.fill(c, 0, a, True) == (C.INVALID, False)  # also makes a the most recent
    assert C.fill(c, 0, a, False) == (C.INVALID, False)  # a clean fill keeps it dirty
    assert C.fill(c, 0, d, False) == (b, False)
    evicted, was_dirty = C.fill(c, 0, b, False)
    assert (evicted, bool(was_dirty)) == (a, True)


def test_probe_does_not_change_lru_order():
    c = small_caches()
    a, b, d = lines_of_set(3, 3)
    C.fill(c, 0, a, False)
    C.fill(c, 0, b, False)
    for _ in range(3):
        assert C.probe(c, 0, a)
    assert not C.probe(c, 0, d)
    assert C.fill(c, 0, d, False) == (a, False)  # a stayed the least recently used


def test_invalidate_drops_a_line_and_frees_its_way():
    c = small_caches()
    a, b, d = lines_of_set(0, 3)
    C.fill(c, 0, a, True)
    C.fill(c, 0, b, False)
    assert C.invalidate(c, 0, a)
    assert not C.invalidate(c, 0, a)
    assert not C.probe(c, 0, a)
    # the freed way is used before any valid line is evicted
    assert C.fill(c, 0, d, False) == (C.INVALID, False)
    assert C.probe(c, 0, b) and C.probe(c, 0, d)


def test_caches_of_one_build_are_independent():
    c = small_caches(count=2)
    C.fill(c, 1, 5, True)
    assert C.probe(c, 1, 5)
    assert not C.probe(c, 0, 5)
    assert not C.lookup(c, 0, 5)


@pytest.mark.parametrize("slices, sets", [(16, 32), (16, 64), (4, 4), (3, 8), (8, 2)])
def test_slices_sharing_the_lines_each_hold_their_whole_capacity(slices, sets):
    """Line l lives in slice l mod slices (an L2). Filling every slice with exactly as many
    consecutive lines as the slices hold evicts none of them: every set of every slice is
    used, whatever the slice and set counts have in common."""
    ways = 4
    c = C.build_caches(slices, sets * ways * LINE, ways, LINE, 4, interleave=slices)
    lines = range(slices * sets * ways)
    for line in lines:
        assert C.fill(c, line % slices, line, False) == (C.INVALID, False)
    assert all(C.probe(c, line % slices, line) for line in lines)


def test_geometry_follows_size_ways_and_line():
    c = C.build_caches(3, 32768, 4, 128, 48)
    assert c.tags.shape == (3, 64, 4)
    assert (c.tags == C.INVALID).all()
    assert c.mshr_line.shape == (3, 48)


def test_mshr_allocate_find_release_round_trip():
    c = small_caches(count=2, mshrs=3)
    ids = [C.mshr_allocate(c, 0, line) for line in (100, 101, 102)]
    assert sorted(ids) == [0, 1, 2]
    assert c.mshr_used[0] == 3
    for line, m in zip((100, 101, 102), ids, strict=True):
        assert C.mshr_find(c, 0, line) == m
    assert C.mshr_find(c, 0, 103) == -1
    assert C.mshr_allocate(c, 0, 103) < 0  # all in use
    assert C.mshr_allocate(c, 1, 103) >= 0  # the other cache has its own table

    m = ids[1]
    c.mshr_head[0, m] = 42  # a request waits on line 101
    assert C.mshr_release(c, 0, m) == 42
    assert C.mshr_find(c, 0, 101) == -1
    assert c.mshr_used[0] == 2
    again = C.mshr_allocate(c, 0, 103)
    assert again == m
    assert c.mshr_head[0, again] == -1  # a fresh MSHR has no waiters
    assert C.mshr_release(c, 0, again) == -1


@pytest.mark.parametrize("mshrs", [1, 5])
def test_exactly_the_configured_number_of_mshrs_can_be_in_flight(mshrs):
    c = small_caches(mshrs=mshrs)
    assert all(C.mshr_allocate(c, 0, line) >= 0 for line in range(mshrs))
    assert C.mshr_allocate(c, 0, 999) < 0
    C.mshr_release(c, 0, C.mshr_find(c, 0, 0))
    assert C.mshr_allocate(c, 0, 999) >= 0
    assert C.mshr_allocate(c, 0, 1000) < 0
