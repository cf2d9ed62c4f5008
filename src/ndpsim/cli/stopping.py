"""A long command stopped by SIGTERM or Ctrl-C: one line saying what was kept and how to go
on, and the exit status shells expect (128 + the signal: 130 for Ctrl-C, 143 for SIGTERM)."""

from __future__ import annotations

import signal
from collections.abc import Iterator
from contextlib import contextmanager

import typer
from rich.markup import escape

from ndpsim.cli.main import errors
from ndpsim.experiments.store import ResultStore
from ndpsim.processes import Terminated, sigterm_raises


@contextmanager
def stops_cleanly(store: ResultStore, again: str) -> Iterator[None]:
    """Run the inside; stopped by SIGTERM or Ctrl-C (its workers already ended by their pool's
    clean-up), say how many runs ``store`` holds and that ``again`` resumes from them."""
    try:
        with sigterm_raises():
            yield
    except (KeyboardInterrupt, Terminated) as stop:
        number = signal.SIGINT if isinstance(stop, KeyboardInterrupt) else signal.SIGTERM
        errors.print(f"stopped by {number.name}: {len(store.keys())} runs are stored in "
                     f"{escape(str(store.root))}; {again} resumes from them",
                     highlight=False, soft_wrap=True)  # fmt: skip
        raise typer.Exit(128 + number) from None
