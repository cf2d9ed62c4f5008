"""What a run did over time, window by window, as a trace-event file for Perfetto UI.

A system samples its counters into a :class:`Timeline` at the end of every window of simulated
time (as a controller of the engine's loop, so the compiled model is only ever read, never
changed) and at the start and end of every kernel launch. A sample holds, per group of like
components (the SMs, the links, the DRAM channels), cumulative counters and instantaneous gauges,
one row per component; the value shown for a window is computed from the difference of the
cumulative counters over it (utilization, row hits per window) and the gauges at its end. The
counters start from zero with the run: what the first sample holds already (work charged as
the run started) belongs to the first window.

The file stays bounded however long the run: when the windows times the components would
exceed ``max_events``, the window doubles and every other sample is dropped (a cumulative
counter loses nothing by it: the difference over two windows is their sum; a gauge keeps the
value at the end of the merged window). Launch boundaries are always kept.

The output is the JSON object form of Chrome's trace-event format, which Perfetto UI and
``chrome://tracing`` load: one process per group, one counter track (``"ph": "C"``) per
component with one series per derived value, instant events (``"ph": "i"``) for what happens
at one moment (a launch starting, a policy's decision), timestamps in microseconds. A value
equal to the one before on its track is not repeated; a counter holds its value until the next.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ndpsim.engine.clock import PS_PER_NS
from ndpsim.errors import ConfigError, SimulationError

#: Default window: 100 ns, about 140 cycles of a 1.4 GHz SM; a long run coarsens it (a choice:
#: fine enough for a tiny run to show its phases, and the bound keeps long runs small).
DEFAULT_WINDOW_PS = 100_000
#: Default bound on the counter events of a file: about 20 MB of JSON.
DEFAULT_MAX_EVENTS = 200_000
_PS_PER_US = 1000 * PS_PER_NS  # trace-event timestamps are in microseconds
#: Fewest windows a file keeps, however many components there are (coarsening halves them).
MIN_WINDOWS = 16

#: derive(deltas[components, counters], gauges[components, gauges], window_ps) -> the series
#: shown, each an array over the components
Derive = Callable[[np.ndarray, np.ndarray, int], dict[str, np.ndarray]]


@dataclass
class _Group:
    """Components sampled together: they become one process of the trace, a track each."""

    name: str
    labels: list[str]
    counters: tuple[str, ...]
    gauges: tuple[str, ...]
    derive: Derive
    cumulative: list[np.ndarray] = field(default_factory=list)  # per sample: int64[n, counters]
    gauge_values: list[np.ndarray] = field(default_factory=list)  # per sample: [n, gauges]


class Timeline:
    """Samples of a run's counters in windows of ``window_ps`` (coarsened to stay within
    ``max_events`` counter events), and the moments marked on it."""

    def __init__(self, window_ps: int = DEFAULT_WINDOW_PS,
                 max_events: int = DEFAULT_MAX_EVENTS):  # fmt: skip
        if int(window_ps) < 1:
            raise ConfigError(f"a timeline's window must be at least 1 ps, got {window_ps}")
        if int(max_events) < 1:
            raise ConfigError(f"a timeline's max_events must be at least 1, got {max_events}")
        self.window_ps = int(window_ps)
        self.max_events = int(max_events)
        self.times_ps: list[int] = []
        self._boundary: list[bool] = []  # samples kept whatever the window
        self._groups: dict[str, _Group] = {}
        self._marks: list[tuple[int, str, str, dict[str, Any]]] = []

    # ------------------------------------------------------------------ recording
    def group(self, name: str, labels: Sequence[str], counters: Sequence[str],
              gauges: Sequence[str], derive: Derive) -> None:  # fmt: skip
        """Declare a group before its first sample: ``labels`` name its components (one track
        each), ``counters`` and ``gauges`` the columns of its sample rows."""
        if self.times_ps:
            raise ConfigError(f"timeline group {name!r} declared after the first sample")
        if name in self._groups:
            raise ConfigError(f"timeline group {name!r} declared twice")
        self._groups[name] = _Group(name, list(labels), tuple(counters), tuple(gauges), derive)

    def next_sample_ps(self, now_ps: int) -> int:
        """The first window end after ``now_ps`` (windows are aligned to time 0)."""
        return (now_ps // self.window_ps + 1) * self.window_ps

    def sample(self, time_ps: int, rows: dict[str, tuple[np.ndarray, np.ndarray]],
               boundary: bool = False) -> None:  # fmt: skip
        """Record every group's (cumulative counters, gauges) at ``time_ps``; a ``boundary``
        sample (a launch starting or ending) is kept when the windows coarsen."""
        if rows.keys() != self._groups.keys():
            raise ValueError(f"a timeline sample has groups {sorted(rows)}, "
                             f"expected {sorted(self._groups)}")  # fmt: skip
        if self.times_ps and time_ps < self.times_ps[-1]:
            raise ValueError(f"timeline sample at {time_ps} ps after one at {self.times_ps[-1]}")
        for name, (cumulative, gauges) in rows.items():
            group = self._groups[name]
            shape = (len(group.labels), len(group.counters))
            if cumulative.shape != shape or gauges.shape != (shape[0], len(group.gauges)):
                raise ValueError(f"timeline group {name!r}: sample of shape {cumulative.shape} "
                                 f"and {gauges.shape}, expected {shape} and "
                                 f"{(shape[0], len(group.gauges))}")  # fmt: skip
            if group.cumulative and (cumulative < group.cumulative[-1]).any():
                row, column = np.argwhere(cumulative < group.cumulative[-1])[0]
                raise SimulationError(
                    f"timeline group {name!r}: counter {group.counters[column]!r} of "
                    f"{group.labels[row]} went down at {time_ps} ps, from "
                    f"{group.cumulative[-1][row, column]} to {cumulative[row, column]}"
                )
            group.cumulative.append(np.array(cumulative, dtype=np.int64))
            group.gauge_values.append(np.array(gauges, dtype=np.float64))
        self.times_ps.append(int(time_ps))
        self._boundary.append(boundary)
        while self._events_bound() > self.max_events and self._coarsen():
            pass

    def mark(self, time_ps: int, group: str, name: str, args: dict[str, Any] | None = None,
             ) -> None:  # fmt: skip
        """Something that happened at one moment (shown as an instant event in ``group``)."""
        self._marks.append((int(time_ps), group, name, dict(args or {})))

    def totals(self, group: str) -> dict[str, dict[str, int]]:
        """Per component of ``group``, each counter summed over every window: its value at
        the last sample."""
        g = self._groups[group]
        if not g.cumulative:
            return {label: dict.fromkeys(g.counters, 0) for label in g.labels}
        moved = g.cumulative[-1]
        return {label: {c: int(v) for c, v in zip(g.counters, row, strict=True)}
                for label, row in zip(g.labels, moved, strict=True)}  # fmt: skip

    def _tracks(self) -> int:
        return sum(len(g.labels) for g in self._groups.values())

    def _events_bound(self) -> int:
        return (len(self.times_ps) - 1) * self._tracks()

    def _coarsen(self) -> bool:
        """Double the window, keeping the samples at its multiples and the boundaries; False
        when the windows are as few as they may get."""
        if len(self.times_ps) - 1 < 2 * MIN_WINDOWS:
            return False
        self.window_ps *= 2
        keep = [
            i
            for i, t in enumerate(self.times_ps)
            if self._boundary[i] or t % self.window_ps == 0 or i == len(self.times_ps) - 1
        ]
        self.times_ps = [self.times_ps[i] for i in keep]
        self._boundary = [self._boundary[i] for i in keep]
        for group in self._groups.values():
            group.cumulative = [group.cumulative[i] for i in keep]
            group.gauge_values = [group.gauge_values[i] for i in keep]
        return True

    # ------------------------------------------------------------------ output
    def events(self) -> list[dict[str, Any]]:
        """The trace events: process names, then each track's values window by window, then
        the marks."""
        out: list[dict[str, Any]] = []
        pids = {name: pid for pid, name in enumerate(self._groups, start=1)}
        for name in {m[1] for m in self._marks} - pids.keys():
            pids[name] = len(pids) + 1
        for name, pid in pids.items():
            out.append({"name": "process_name", "ph": "M", "pid": pid, "tid": 0,
                        "args": {"name": name}})  # fmt: skip
            out.append({"name": "process_sort_index", "ph": "M", "pid": pid, "tid": 0,
                        "args": {"sort_index": pid}})  # fmt: skip
        for group in self._groups.values():
            out += self._counter_events(group, pids[group.name])
        for time_ps, group_name, name, args in sorted(self._marks, key=lambda m: m[0]):
            out.append({"name": name, "ph": "i", "s": "p", "ts": time_ps / _PS_PER_US,
                        "pid": pids[group_name], "tid": 0, "args": args})  # fmt: skip
        return out

    def _counter_events(self, group: _Group, pid: int) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        last: list[dict[str, float] | None] = [None] * len(group.labels)
        j = 0  # the sample the window starts at (samples at one time make one window)
        for k in range(1, len(self.times_ps)):
            start, end = self.times_ps[j], self.times_ps[k]
            if end == start:
                continue
            deltas = group.cumulative[k] - (group.cumulative[j] if j else 0)
            series = group.derive(deltas, group.gauge_values[k], end - start)
            j = k
            for i, label in enumerate(group.labels):
                args = {s: _number(values[i]) for s, values in series.items()}
                if args != last[i]:
                    out.append({"name": label, "ph": "C", "ts": start / _PS_PER_US, "pid": pid,
                                "tid": 0, "args": args})  # fmt: skip
                    last[i] = args
        if len(self.times_ps) > 1:  # the run is over: every track ends at zero
            end = self.times_ps[-1] / _PS_PER_US
            for i, label in enumerate(group.labels):
                if last[i] is not None and any(last[i].values()):
                    out.append({"name": label, "ph": "C", "ts": end, "pid": pid, "tid": 0,
                                "args": dict.fromkeys(last[i], 0)})  # fmt: skip
        return out

    def document(self, metadata: dict[str, Any] | None = None) -> dict[str, Any]:
        """The whole file: the events, and ``metadata`` (shown by Perfetto as the trace's
        metadata) with the final window length."""
        return {
            "traceEvents": self.events(),
            "displayTimeUnit": "ns",
            "otherData": {**(metadata or {}), "window_ns": self.window_ps / 1000},
        }

    def write(self, path: Path | str, metadata: dict[str, Any] | None = None) -> None:
        Path(path).write_text(json.dumps(self.document(metadata), separators=(",", ":")))


def _number(value: Any) -> float | int:
    """A JSON number, rounded so that a file is not mostly digits."""
    value = float(value)
    return int(value) if value.is_integer() else round(value, 6)


__all__ = ["DEFAULT_MAX_EVENTS", "DEFAULT_WINDOW_PS", "Derive", "Timeline"]
