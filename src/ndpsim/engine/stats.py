"""Statistics: named counters and histograms that compiled code updates in place.

A component declares its counters once (``registry.counters("l2", ["hits", "misses"], count=16)``)
and gets back a NumPy array that its compiled code increments; the registry remembers the names,
so a run's statistics dump to a nested dictionary with the same shape as the component tree
(``{"l2": {"3": {"hits": ...}}}``) and totals across instances.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ndpsim.errors import SimulationError


@dataclass
class _Group:
    names: tuple[str, ...]
    values: np.ndarray  # [instances, len(names)]
    instance_names: tuple[str, ...]


@dataclass
class Histogram:
    """Counts of a quantity in fixed-width bins (the last bin holds everything beyond)."""

    bin_width: int
    counts: np.ndarray

    def as_dict(self) -> dict:
        return {"bin_width": self.bin_width, "counts": self.counts.tolist()}


@dataclass
class StatsRegistry:
    """Every counter array of one simulated system, by hierarchical name."""

    groups: dict[str, _Group] = field(default_factory=dict)
    histograms: dict[str, Histogram] = field(default_factory=dict)

    def counters(
        self, path: str, names: list[str] | tuple[str, ...], count: int = 1,
        instance_names: list[str] | None = None, dtype=np.int64,
    ) -> np.ndarray:  # fmt: skip
        """Register ``count`` instances of a component with counters ``names``; returns the
        int64[count, len(names)] array compiled code updates."""
        values = np.zeros((count, len(names)), dtype=dtype)
        self.adopt(path, names, values, instance_names)
        return values

    def adopt(self, path: str, names, values: np.ndarray, instance_names=None) -> None:
        """Register an array a component already owns (e.g. the DRAM model's)."""
        self._claim(path)
        names = tuple(names)
        labels = tuple(instance_names or [str(i) for i in range(values.shape[0])])
        _check_group(path, names, values, labels)
        self.groups[path] = _Group(names, values, labels)

    def histogram(self, path: str, bins: int, bin_width: int) -> np.ndarray:
        """Register a histogram; returns the counts array compiled code increments."""
        counts = np.zeros(bins, dtype=np.int64)
        self.adopt_histogram(path, bin_width, counts)
        return counts

    def adopt_histogram(self, path: str, bin_width: int, counts: np.ndarray) -> None:
        """Register counts a component already owns."""
        self._claim(path)
        self.histograms[path] = Histogram(bin_width, counts)

    def _claim(self, path: str) -> None:
        """Refuse a path a group or histogram already has (one would hide the other), with an
        empty segment, or with a segment the dump uses for its own keys."""
        if not isinstance(path, str) or not all(path.split(".")):
            raise ValueError(f"statistics path {path!r}: expected dotted non-empty names")
        if {"total", "instances"} & set(path.split(".")):
            raise ValueError(f"statistics path {path!r}: 'total' and 'instances' name the "
                             "dump's parts")  # fmt: skip
        if path in self.groups or path in self.histograms:
            raise ValueError(f"statistics path {path!r} registered twice")

    def check(self) -> None:
        """What a run's statistics must hold before they are reported: every counter and bin a
        finite count of at least zero (a negative one is a component that undercounted, or an
        overflow)."""
        for path, group in self.groups.items():
            bad = ~np.isfinite(group.values) | (group.values < 0)
            if bad.any():
                i, j = np.argwhere(bad)[0]
                raise SimulationError(f"statistic {path}.{group.instance_names[i]}."
                                      f"{group.names[j]} is {group.values[i, j]}: a count must "
                                      "be finite and at least 0")  # fmt: skip
        for path, hist in self.histograms.items():
            if (hist.counts < 0).any():
                raise SimulationError(f"histogram {path} has a negative bin")

    def total(self, path: str, name: str) -> int | float:
        group = self.groups[path]
        value = group.values[:, group.names.index(name)].sum()
        return value.item()

    def totals(self, path: str) -> dict[str, int | float]:
        group = self.groups[path]
        return {n: group.values[:, i].sum().item() for i, n in enumerate(group.names)}

    def as_dict(self, per_instance: bool = True) -> dict:
        """Nested dict: path segments, then (optionally) instances, then counter names; each
        group also has a ``total``."""
        out: dict = {}
        for path, group in self.groups.items():
            node = out
            for part in path.split("."):
                node = node.setdefault(part, {})
            node["total"] = self.totals(path)
            if per_instance and len(group.instance_names) > 1:
                node["instances"] = {
                    label: {n: group.values[i, j].item() for j, n in enumerate(group.names)}
                    for i, label in enumerate(group.instance_names)
                }
        for path, hist in self.histograms.items():
            node = out
            *parents, leaf = path.split(".")
            for part in parents:
                node = node.setdefault(part, {})
            node[leaf] = hist.as_dict()
        return out


def _check_group(path: str, names: tuple[str, ...], values: np.ndarray,
                 labels: tuple[str, ...]) -> None:  # fmt: skip
    """A group's counters: distinct non-empty names, one column each, one row per instance,
    instances distinctly named."""
    if values.ndim != 2 or values.shape[1] != len(names):
        raise ValueError(f"statistics {path!r}: {len(names)} counter names for an array of "
                         f"shape {values.shape}; expected [instances, {len(names)}]")  # fmt: skip
    if len(set(names)) != len(names) or not all(isinstance(n, str) and n for n in names):
        raise ValueError(f"statistics {path!r}: counter names must be distinct and non-empty, "
                         f"got {list(names)}")  # fmt: skip
    if len(labels) != values.shape[0] or len(set(labels)) != len(labels):
        raise ValueError(f"statistics {path!r}: {len(labels)} instance names for "
                         f"{values.shape[0]} instances, or a name used twice")  # fmt: skip
