"""Progress of long commands, readable both in a terminal and in a log.

In a terminal a Rich bar (or spinner) redraws in place. When output goes to a file or a pipe
(a batch job, CI) a redrawn bar leaves nothing readable, so each finished unit of work prints
one line instead, with the time elapsed and an estimate of the time left.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

from ndpsim.cli.main import console


class Tracker:
    """Counts finished units of a job of ``total`` and reports each one."""

    def __init__(self, label: str, total: int, bar: Progress | None = None,
                 show: Callable[[str], None] | None = None):  # fmt: skip
        self.label = label
        self.total = total
        self.done = 0
        self.start = time.perf_counter()
        self._bar = bar
        self._task = bar.add_task(label, total=total) if bar is not None else None
        self._show = show

    def note(self, text: str) -> None:
        """A change of state that is not a finished unit (numba started compiling, ...)."""
        if self._show is not None:
            self._show(f"{self.label}: {text}")
        elif self._bar is not None:
            self._bar.update(self._task, description=f"{self.label}: {text}")
        else:
            console.print(f"{self.label}: {text}", highlight=False, soft_wrap=True)

    def advance(self, what: str) -> None:
        """Unit ``what`` finished."""
        self.done += 1
        if self._bar is not None:
            self._bar.update(self._task, advance=1, description=f"{self.label} ({what} done)")
            return
        elapsed = time.perf_counter() - self.start
        left = elapsed / self.done * (self.total - self.done)
        console.print(f"{self.label}: {self.done}/{self.total} done ({what}), "
                      f"{_duration(elapsed)} elapsed, about {_duration(left)} left",
                      highlight=False, soft_wrap=True)  # fmt: skip


def _duration(seconds: float) -> str:
    minutes, rest = divmod(round(seconds), 60)
    return f"{minutes} min {rest:02d} s" if minutes else f"{rest} s"


@contextmanager
def tracking(label: str, total: int) -> Iterator[Tracker]:
    """A :class:`Tracker` of ``total`` units, drawn as a bar when the console is a terminal."""
    if not console.is_terminal:
        yield Tracker(label, total, None)
        return
    columns = (TextColumn("{task.description}"), BarColumn(), TextColumn("{task.completed}/"
               "{task.total}"), TimeElapsedColumn(), TimeRemainingColumn())  # fmt: skip
    with Progress(*columns, console=console, transient=True) as bar:
        yield Tracker(label, total, bar)


@contextmanager
def stage(text: str) -> Iterator[Tracker]:
    """One step of unknown length (interpreting, simulating): a spinner in a terminal, a line
    when it starts and one when it ends in a log."""
    if console.is_terminal:
        with console.status(text) as spinner:
            yield Tracker(text, 1, show=spinner.update)
        return
    start = time.perf_counter()
    console.print(f"{text} ...", highlight=False, soft_wrap=True)
    yield Tracker(text, 1, None)
    elapsed = _duration(time.perf_counter() - start)
    console.print(f"{text}: done in {elapsed}", highlight=False, soft_wrap=True)
