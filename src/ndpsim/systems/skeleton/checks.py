"""The memory path's invariants, the same in every system kind: a kind checks them after each
launch and at the end of a run, with the checks of its own components beside them. A
violation is a bug in the model, never a result: it stops the run naming the component.

A conservation check is a tuple ``(component, what, found, expected)``; the kind gathers its
own and these, and :func:`check_conserved` reports every one that disagrees.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

import numpy as np

from ndpsim.errors import SimulationError
from ndpsim.hw import link as linkmod
from ndpsim.hw import requests as rq
from ndpsim.hw.dram import controller as ctl

Check = tuple[str, str, int, int]  # (component, what, found, expected)
Label = Callable[[int], str]  # a link's or a channel's name, from its index


def memory_path_left(pool, dram, vaults) -> dict[str, int]:
    """What a finished launch may not leave in the memory path: requests in flight, in the
    DRAM controllers' queues, or in the channels' backlogs."""
    return {
        "requests in flight": rq.in_use(pool),
        "requests in DRAM queues": int(dram.q_count.sum()),
        "channel backlogs": int((vaults.backlog_head >= 0).sum()),
    }


def check_drained(kernel: str, left: dict[str, int]) -> None:
    """A finished launch left nothing behind: every count in ``left`` is zero."""
    broken = {name: n for name, n in left.items() if n}
    if broken:
        raise SimulationError(
            f"kernel {kernel!r} finished but left "
            + ", ".join(f"{n} {name}" for name, n in broken.items())
        )


def dram_checks(dram, channel_label: Label) -> list[Check]:
    """Each channel served every read and write it took, each served access a row hit, miss
    or conflict."""
    checks: list[Check] = []
    served = dram.stats[:, ctl.S_READS_DONE] + dram.stats[:, ctl.S_WRITES_DONE]
    for ch, st in enumerate(dram.stats):
        where = f"DRAM channel {channel_label(ch)}"
        checks += [
            (where, "reads served", int(st[ctl.S_READS_DONE]), int(st[ctl.S_READS])),
            (where, "writes served", int(st[ctl.S_WRITES_DONE]), int(st[ctl.S_WRITES])),
            (where, "row hits, misses and conflicts",
             int(st[[ctl.S_ROW_HITS, ctl.S_ROW_MISSES, ctl.S_ROW_CONFLICTS]].sum()),
             int(served[ch])),
        ]  # fmt: skip
    return checks


def tsv_checks(vaults, links, dram, channels_per_cube: int, link_label: Label) -> list[Check]:
    """Every access of a cube's vaults crossed its TSVs (in a cube that has them)."""
    packets = links.traffic[:, :, 1]
    served = dram.stats[:, ctl.S_READS_DONE] + dram.stats[:, ctl.S_WRITES_DONE]
    checks: list[Check] = []
    for k, tsv in enumerate(vaults.tsv):
        if tsv >= 0:
            checks.append((link_label(int(tsv)), "DRAM accesses", int(packets[tsv].sum()),
                           int(served[k * channels_per_cube : (k + 1) * channels_per_cube]
                               .sum())))  # fmt: skip
    return checks


def packet_errors(links, smallest_bytes: np.ndarray, link_label: Label) -> list[str]:
    """Packets smaller than the smallest a link carries (``smallest_bytes`` per link: a
    header, say), and busy times that are not what the link's bytes take on the wire."""
    packets = links.traffic[:, :, 1]
    wrong = []
    short = links.traffic[:, :, 0] < packets * smallest_bytes[:, None]
    for i, k in zip(*np.nonzero(short), strict=True):
        wrong.append(f"{link_label(int(i))}: {int(packets[i, k])} "
                     f"{linkmod.CLASS_NAMES[k]} packets in {int(links.traffic[i, k, 0])} "
                     "bytes")  # fmt: skip
    for i in linkmod.misaccounted(links):
        wrong.append(f"{link_label(int(i))}: busy {int(links.busy_ps[i])} ps, not "
                     "the time its bytes take on the wire")  # fmt: skip
    return wrong


def check_conserved(kernel: str, checks: Iterable[Check], errors: Iterable[str] = ()) -> None:
    """After launch ``kernel``, every check found what it expected, and no other error was
    found; else the first few disagreements, named."""
    wrong = [f"{where}: {what} {found}, expected {expected}"
             for where, what, found, expected in checks if found != expected]  # fmt: skip
    wrong += list(errors)
    if wrong:
        raise SimulationError(
            f"after kernel {kernel!r} the counters disagree: " + "; ".join(wrong[:8])
        )


def check_busy(links, dram, ranks: int, link_label: Label, channel_label: Label) -> None:
    """No link was busier than 100% over any utilization window, nor longer than it existed,
    and no DRAM data bus carried two bursts at once."""
    window = int(links.window_ps[0])
    busiest = linkmod.busiest_window_ps(links)
    wrong = [f"{link_label(int(i))} busy {int(busiest[i])} ps in a {window} ps window"
             for i in np.flatnonzero(busiest > window)]  # fmt: skip
    wrong += [f"{link_label(int(i))} busy {int(links.busy_ps[i])} ps by "
              f"{int(links.busy_until[i])} ps" for i in linkmod.overdrawn(links)]  # fmt: skip
    wrong += [f"DRAM channel {channel_label(int(b) // ranks)} rank {int(b) % ranks} "
              f"data bus carrying two bursts at once for {int(dram.bus_overlap[b])} cycles"
              for b in np.flatnonzero(dram.bus_overlap)]  # fmt: skip
    if wrong:
        raise SimulationError("busier than 100%: " + "; ".join(wrong[:8]))
