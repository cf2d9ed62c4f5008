"""Noticing when numba compiles, the one slow step of a machine's first run.

Compiled functions are cached on disk (:mod:`ndpsim.numba_cache`), so only the first run on a
machine compiles the timing model: about a minute, during which a spinner saying "simulating"
looks stuck.
numba's Event API broadcasts ``numba:compile`` when it compiles a function, and not when it
loads one from its cache, so a listener tells exactly when a run is compiling.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

from numba.core import event

# what a first run costs (docs/timing.md, "Speed"): said to the user while it happens
COMPILING_NOTICE = (
    "numba is compiling the simulator (once per machine, about a minute; later runs load it "
    "from numba's cache)"
)


class CompilationWatcher(event.Listener):
    """Calls ``on_start`` when numba starts compiling a function and ``on_end`` when it is done;
    the functions a compilation compiles on its way (callees) do not call them again."""

    def __init__(self, on_start: Callable[[], None],
                 on_end: Callable[[], None] | None = None) -> None:  # fmt: skip
        self._on_start = on_start
        self._on_end = on_end
        self._depth = 0

    def on_start(self, ev: event.Event) -> None:
        self._depth += 1
        if self._depth == 1:
            self._on_start()

    def on_end(self, ev: event.Event) -> None:
        self._depth -= 1
        if self._depth == 0 and self._on_end is not None:
            self._on_end()


@contextmanager
def watching_compilation(on_start: Callable[[], None],
                         on_end: Callable[[], None] | None = None) -> Iterator[None]:  # fmt: skip
    """Within the block, report every compilation numba does in this process (see
    :class:`CompilationWatcher`)."""
    with event.install_listener("numba:compile", CompilationWatcher(on_start, on_end)):
        yield


def watch_compilation_for_good(on_start: Callable[[], None]) -> CompilationWatcher:
    """Report every compilation this process does from now on (a worker process's setup);
    returns the listener, which ``numba.core.event.unregister`` takes."""
    watcher = CompilationWatcher(on_start)
    event.register("numba:compile", watcher)
    return watcher


__all__ = [
    "COMPILING_NOTICE",
    "CompilationWatcher",
    "watch_compilation_for_good",
    "watching_compilation",
]
