"""Helpers of the offload passes' searches over pc ranges (TOM and SNDP).

Both passes choose disjoint pc ranges best first. They keep the ranges chosen so far in
:class:`ChosenRanges`, answer range-maximum questions about per-pc tables with :class:`RangeMax`,
and (TOM) find the ranges a new choice overlaps with :class:`IntervalIndex`, each in logarithmic
or constant time, so that a search costs about as much as the ranges it looks at, not the square
of the function's length.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right, insort
from collections.abc import Sequence

import numpy as np


class RangeMax:
    """Maximum of ``values[lo..hi]`` (inclusive) in constant time, from a sparse table."""

    def __init__(self, values: Sequence[int]):
        level = np.asarray(values, dtype=np.int64)
        self.levels = [level]
        width = 1
        while 2 * width <= len(values):
            level = np.maximum(level[:-width], level[width:])
            self.levels.append(level)
            width *= 2

    def max(self, lo: int, hi: int) -> int:
        k = (hi - lo + 1).bit_length() - 1
        level = self.levels[k]
        return max(level.item(lo), level.item(hi - (1 << k) + 1))

    def last_at_least(self, lo: int, hi: int, threshold: int) -> int | None:
        """The highest index in ``[lo, hi]`` whose value is at least ``threshold``, or None."""
        if lo > hi or self.max(lo, hi) < threshold:
            return None
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if self.max(mid, hi) >= threshold:
                lo = mid
            else:
                hi = mid - 1
        return lo


class ChosenRanges:
    """Disjoint inclusive pc ranges, in order."""

    def __init__(self):
        self.begins: list[int] = []
        self.ends: list[int] = []

    def add(self, begin: int, end: int) -> None:
        at = bisect_left(self.begins, begin)
        self.begins.insert(at, begin)
        self.ends.insert(at, end)

    def overlaps(self, begin: int, end: int) -> bool:
        """Whether ``[begin, end]`` shares a pc with a chosen range."""
        at = bisect_right(self.begins, end)
        return at > 0 and self.ends[at - 1] >= begin

    def covers(self, pc: int) -> bool:
        return self.overlaps(pc, pc)

    def free_around(self, begin: int, end: int, last: int) -> tuple[int, int] | None:
        """The widest free pc range holding ``[begin, end]`` (pcs ``0 .. last``), or None if a
        chosen range overlaps it."""
        if self.overlaps(begin, end):
            return None
        at = bisect_right(self.begins, end)
        low = self.ends[at - 1] + 1 if at > 0 else 0
        high = self.begins[at] - 1 if at < len(self.begins) else last
        return low, high


class IntervalIndex:
    """Keys attached to inclusive pc ranges; finds (and forgets) those overlapping a range."""

    def __init__(self):
        self.entries: list[tuple[int, int, int]] = []  # (begin, end, key), by begin
        self.longest = 0

    def add(self, begin: int, end: int, key: int) -> None:
        insort(self.entries, (begin, end, key))
        self.longest = max(self.longest, end - begin)

    def pop_overlapping(self, begin: int, end: int) -> list[int]:
        lo = bisect_left(self.entries, (begin - self.longest,))
        hi = bisect_right(self.entries, (end, float("inf")))
        hits = [entry for entry in self.entries[lo:hi] if entry[1] >= begin]
        if hits:
            self.entries[lo:hi] = [entry for entry in self.entries[lo:hi] if entry[1] < begin]
        return [key for _, _, key in hits]
