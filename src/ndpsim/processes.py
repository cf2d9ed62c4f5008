"""Worker processes that end with the process that started them, and a coordinator that stops
them when it is told to stop.

Sweeps and reproductions hand their runs to pools of worker processes. A batch scheduler ends an
over-time job with SIGTERM and then SIGKILL, and a user presses Ctrl-C; on 2026-11-28 each of
these left the workers running with parent 1 (one pair for 88 minutes). So:

* each worker, when it starts (:func:`die_with_parent`), asks Linux to kill it when its parent
  dies (``prctl(PR_SET_PDEATHSIG)``: immediate, even while the worker is inside compiled code),
  and watches its parent from a thread besides (on other systems; it notices within a second
  whenever the worker is between two compiled calls). It ignores Ctrl-C, which the terminal sends
  to every process of the job: stopping is the coordinator's to decide;
* the coordinator turns SIGTERM into an exception (:func:`sigterm_raises`), as Ctrl-C already
  is, so that it leaves what it is doing through the same clean-up, and ends its workers there
  (:func:`stop_pool`) rather than waiting for the runs in flight.

Workers store each finished run themselves, atomically (:mod:`ndpsim.experiments.store`), so a
stopped job keeps every run that finished and loses only those in flight.
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager

#: prctl(2)'s option number for "signal me when my parent dies" (linux/prctl.h).
_PR_SET_PDEATHSIG = 1
#: How often a worker's watch thread looks at its parent, in seconds.
_WATCH_S = 0.5


class Terminated(Exception):
    """The process received SIGTERM (the exit status to give is ``128 + SIGTERM``)."""


def die_with_parent() -> None:
    """In a worker process, first thing: end it when the process that started it ends, and
    leave Ctrl-C to that process."""
    parent = os.getppid()
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if sys.platform.startswith("linux"):
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
        except (OSError, AttributeError):  # no libc to ask: the watch thread still looks
            pass
    if os.getppid() != parent:  # the parent died before the request above was made
        os._exit(1)
    threading.Thread(target=_watch, args=(parent,), name="ndpsim-watch-parent",
                     daemon=True).start()  # fmt: skip


def _watch(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(_WATCH_S)
    os._exit(1)


def stop_pool(pool: ProcessPoolExecutor) -> None:
    """End ``pool`` now: no more runs handed out, and its workers ended (SIGTERM, then
    SIGKILL after 5 s), the runs they were simulating lost."""
    # the pool's own processes: the executor has no public way to end them
    workers = list((getattr(pool, "_processes", None) or {}).values())
    pool.shutdown(wait=False, cancel_futures=True)
    for worker in workers:
        worker.terminate()
    deadline = time.monotonic() + 5
    for worker in workers:
        worker.join(max(0.0, deadline - time.monotonic()))
        if worker.is_alive():
            worker.kill()
            worker.join(1)


@contextmanager
def sigterm_raises() -> Iterator[None]:
    """While inside: SIGTERM raises :class:`Terminated` in the main thread, as Ctrl-C raises
    KeyboardInterrupt, so the code inside stops through its clean-up. Elsewhere than the main
    thread, nothing changes (only it may set signal handlers)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def raise_terminated(signum, frame):
        raise Terminated()

    previous = signal.signal(signal.SIGTERM, raise_terminated)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


__all__ = ["Terminated", "die_with_parent", "sigterm_raises", "stop_pool"]
