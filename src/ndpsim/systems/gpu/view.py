"""What a stepped GPU run shows between steps (:mod:`ndpsim.systems.stepping`).

The arrays are the live state of the run, not copies: what a caller writes there, the rest of
the run sees. The page table is the run's (:meth:`~ndpsim.hw.pagetable.PageTable.migrate` moves
a page for every later access; the caches are not flushed, and the traffic of a move is the
caller's to model). The compiled state of the launch in flight (``state``) holds every
component, the offload state among them (``state.off``: a policy's settings, such as the
offload ratio in ``control``, hold until the launch ends; each launch starts from the
system's config).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ndpsim.engine import events as ev
from ndpsim.engine import pool as poolmod
from ndpsim.hw.core import sm as smmod
from ndpsim.hw.dram import controller as ctl
from ndpsim.hw.gpu import offload as ofl
from ndpsim.hw.link import Links
from ndpsim.hw.pagetable import PageTable
from ndpsim.systems.gpu import model
from ndpsim.systems.skeleton.program import LaunchView
from ndpsim.trace.work import W_NUM_CTAS


def _named(names: tuple[str, ...], totals: np.ndarray) -> dict[str, int]:
    return {name: int(totals[k]) for k, name in enumerate(names)}


@dataclass
class GpuRunView(LaunchView):
    """A GPU run between steps: the launch in flight (``kernel``, -1 before the first) and its
    model (:class:`~ndpsim.systems.skeleton.program.LaunchView`), the run's page table and
    links, and the counters of the launches already finished."""

    page_table: PageTable
    links: Links
    mem: model.MemorySide  # the L2 side, whole run
    dram: ctl.DramState  # whole run
    finished_sm_stats: np.ndarray  # per SM, the launches finished
    finished_offload_stats: np.ndarray  # per cube, the launches finished

    def counters(self) -> dict[str, dict[str, int]]:
        """Totals so far, by component: the SMs' and the offload controllers' (launches
        finished and the one in flight), the L2's and the DRAM's, and the links' busy time."""
        sm = self.finished_sm_stats.sum(axis=0)
        offload = self.finished_offload_stats.sum(axis=0)
        state = self.state
        if state is not None and self.in_flight:
            sm = sm + state.sm.stats.sum(axis=0)
            if state.off.stats.shape[0]:
                offload = offload + state.off.stats.sum(axis=0)
        return {
            "sm": _named(smmod.SM_STAT_NAMES, sm),
            "offload": _named(ofl.OFFLOAD_STAT_NAMES, offload),
            "l2": _named(model.L2_STAT_NAMES, self.mem.stats.sum(axis=0)),
            "dram": _named(ctl.STAT_NAMES, self.dram.stats.sum(axis=0)),
            "links": {"busy_ps": int(self.links.busy_ps.sum())},
        }

    def occupancy(self) -> dict[str, int]:
        """Now: events pending, memory requests in flight, requests queued at the DRAM
        controllers, warps resident on the SMs, and the launch's CTAs not yet dispatched."""
        state = self.state
        if state is None:
            return {"events_pending": 0, "requests_in_flight": 0, "dram_queued": 0,
                    "warps_resident": 0, "ctas_waiting": 0}  # fmt: skip
        return {
            "events_pending": ev.size(state.events),
            "requests_in_flight": poolmod.in_use(state.pool),
            "dram_queued": int(state.dram.q_count.sum()),
            "warps_resident": int(state.sm.sm_warps.sum()),
            "ctas_waiting": int(state.work.params[W_NUM_CTAS] - state.sm.counters[0]),
        }
