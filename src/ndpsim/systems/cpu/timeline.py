"""A CPU run's timeline: per core, its IPC and the share of its cycles dispatch stopped for a
full ROB, a full load queue or a mispredicted branch, or (in order) waiting on an operand;
per DRAM channel what the other kinds show (:mod:`ndpsim.systems.skeleton.timeline`)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ndpsim.engine.timeline import Timeline
from ndpsim.hw.cpu import core as cpu
from ndpsim.systems.skeleton.timeline import Rows, Sampler, no_gauges

COUNTERS = (cpu.S_CYCLES, cpu.S_INSTRUCTIONS, cpu.S_ROB_FULL, cpu.S_LOAD_QUEUE_FULL,
            cpu.S_MISPREDICT_STALL, cpu.S_DEPENDENCY_STALL)  # fmt: skip


def _series(deltas: np.ndarray, gauges: np.ndarray, window_ps: int):
    cycles, instructions, rob, loads, branches, operands = deltas.T
    per = np.maximum(cycles, 1)
    return {
        "ipc": instructions / per,
        "rob full": rob / per,
        "load queue full": loads / per,
        "mispredicted branch": branches / per,
        "operand not ready": operands / per,
    }


class CpuSampler(Sampler):
    """The ``cores`` group: every core of the state's ``cores``, labelled ``labels``. A
    launch's cores start their counters afresh; the run's so far carry over."""

    def __init__(self, timeline: Timeline, labels: list[str]):
        self._base = np.zeros((len(labels), len(COUNTERS)), dtype=np.int64)
        timeline.group("cores", labels, [cpu.CORE_STAT_NAMES[c] for c in COUNTERS], [],
                       _series)  # fmt: skip

    def rows(self, state: Any, now_ps: int) -> Rows:
        return {"cores": (self._counters(state), no_gauges(len(self._base)))}

    def launch_end(self, state: Any, now_ps: int) -> None:
        self._base = self._counters(state)

    def _counters(self, state: Any) -> np.ndarray:
        return self._base + state.cores.stats[:, list(COUNTERS)]
