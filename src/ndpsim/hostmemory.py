"""How much memory the machine running ndpsim has free, and refusing work that needs more.

Every array-sizing config key has an upper bound, and a trace file's arrays are checked against
the file's size, but a product of large values (thousands of SMs, each with a big L1) or an
honest but huge trace can still ask for more than the machine has. Asking first turns what would
be a MemoryError (or the kernel's out-of-memory killer) minutes into a run into an error naming
the keys or the file, before anything is allocated.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

from ndpsim.errors import NdpsimError

MEMINFO = Path("/proc/meminfo")
STATUS = Path("/proc/self/status")


def available_bytes() -> int | None:
    """Memory a new allocation can take without swapping: Linux's ``MemAvailable``, else the
    physical memory, else None where neither is known (the checks are then skipped)."""
    try:
        for line in MEMINFO.read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024  # reported in KiB
    except (OSError, ValueError, IndexError):
        pass
    return physical_bytes()


def physical_bytes() -> int | None:
    """The machine's physical memory, or None where the system does not say."""
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, ValueError, OSError):  # no sysconf, or no such name (not POSIX)
        return None


def size_text(count: int) -> str:
    """``count`` bytes for a person: ``512 B``, ``3.2 GiB``."""
    if count < 1024:
        return f"{count} B"
    size = count / 1024
    for unit in ("KiB", "MiB", "GiB", "TiB"):
        if size < 1024:
            return f"{size:.1f} {unit}"
        size /= 1024
    return f"{size:.1f} PiB"


def check_fits(
    parts: Mapping[str, int], what: str, error: type[NdpsimError], available: int | None = None
) -> None:
    """Raise ``error`` when the arrays of ``parts`` (what each is, naming the keys that size
    it: its bytes) need more than ``available`` bytes (by default what
    :func:`available_bytes` finds). The message lists the biggest parts first."""
    limit = available_bytes() if available is None else available
    total = sum(parts.values())
    if limit is None or total <= limit:
        return
    biggest = sorted(parts.items(), key=lambda item: -item[1])
    shares = ", ".join(f"{size_text(size)} for {name}" for name, size in biggest if size)
    raise error(
        f"{what} needs about {size_text(total)} of memory, more than the {size_text(limit)} "
        f"available: {shares}"
    )


def _address_space_bytes() -> int | None:
    """This process's virtual memory now (Linux's ``VmSize``), or None where unknown."""
    try:
        for line in STATUS.read_text().splitlines():
            if line.startswith("VmSize:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


@contextmanager
def growth_bounded(extra_bytes: int) -> Iterator[None]:
    """Within the block, the process may take at most ``extra_bytes`` more address space: an
    allocation past that raises MemoryError at once, where Linux would otherwise promise the
    memory and the out-of-memory killer end the process once it is touched (what a huge
    ``--param`` asks of a workload's NumPy inputs). For code that only allocates (not for
    compiling, whose tools reserve address space freely); unbounded where the system cannot
    say its size or set the limit."""
    try:
        import resource
    except ImportError:  # not POSIX
        yield
        return
    now = _address_space_bytes()
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    if now is None:
        yield
        return
    bound = now + extra_bytes
    if hard != resource.RLIM_INFINITY:
        bound = min(bound, hard)
    if soft != resource.RLIM_INFINITY and soft <= bound:
        yield  # already bounded at least as tightly
        return
    resource.setrlimit(resource.RLIMIT_AS, (bound, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))
