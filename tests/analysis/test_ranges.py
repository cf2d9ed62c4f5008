"""The pc-range helpers of the offload searches, against brute force."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from ndpsim.analysis.ranges import ChosenRanges, IntervalIndex, RangeMax

values = st.lists(st.integers(-5, 20), min_size=1, max_size=40)


@given(values, st.data())
def test_range_max_and_the_last_value_reaching_a_threshold_match_a_scan(values, data):
    table = RangeMax(values)
    lo = data.draw(st.integers(0, len(values) - 1))
    hi = data.draw(st.integers(lo, len(values) - 1))
    threshold = data.draw(st.integers(-6, 21))
    assert table.max(lo, hi) == max(values[lo : hi + 1])
    reaching = [i for i in range(lo, hi + 1) if values[i] >= threshold]
    assert table.last_at_least(lo, hi, threshold) == (reaching[-1] if reaching else None)


@given(st.lists(st.tuples(st.integers(0, 60), st.integers(0, 5)), max_size=12), st.data())
def test_chosen_ranges_know_what_overlaps_and_what_is_free(ranges, data):
    chosen, taken = ChosenRanges(), set()
    for begin, length in ranges:
        pcs = set(range(begin, begin + length + 1))
        if not pcs & taken:
            chosen.add(begin, begin + length)
            taken |= pcs
    begin = data.draw(st.integers(0, 70))
    end = data.draw(st.integers(begin, 70))
    assert chosen.overlaps(begin, end) == bool(set(range(begin, end + 1)) & taken)
    window = chosen.free_around(begin, end, 70)
    if chosen.overlaps(begin, end):
        assert window is None
    else:
        low, high = window
        assert not set(range(low, high + 1)) & taken
        assert low == 0 or low - 1 in taken
        assert high == 70 or high + 1 in taken


@given(st.lists(st.tuples(st.integers(0, 60), st.integers(0, 9)), max_size=12), st.data())
def test_the_interval_index_hands_back_exactly_the_keys_overlapping_a_range(intervals, data):
    index = IntervalIndex()
    for key, (begin, length) in enumerate(intervals):
        index.add(begin, begin + length, key)
    begin = data.draw(st.integers(0, 70))
    end = data.draw(st.integers(begin, 70))
    overlapping = {
        key for key, (b, length) in enumerate(intervals) if b <= end and b + length >= begin
    }
    assert set(index.pop_overlapping(begin, end)) == overlapping
    assert index.pop_overlapping(begin, end) == []  # forgotten once handed back
