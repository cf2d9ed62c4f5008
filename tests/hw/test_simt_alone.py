"""The SIMT core with no extension at all: a system of its own, a few SMs in front of a memory
that answers every request after a fixed latency, built from the core's clock and its memory
events with nothing of TOM's or SNDP's offloading (the core's ``ext`` is None). It runs a
workload's launch to the end, every warp instruction issued once."""

from __future__ import annotations

import subprocess
import sys
from typing import NamedTuple

import numpy as np

from ndpsim.engine import events as ev
from ndpsim.engine import kinds, loop
from ndpsim.engine.assemble import assemble
from ndpsim.engine.reference import reference, references
from ndpsim.hw import cache as cachemod
from ndpsim.hw import link as linkmod
from ndpsim.hw import requests as rq
from ndpsim.hw.core import sm as smmod
from ndpsim.hw.pagetable import PageTable
from ndpsim.numba_cache import compiled
from ndpsim.simt.memory import BASE_ADDRESS
from ndpsim.systems import load_system
from ndpsim.trace.work import W_NUM_CTAS, W_NUM_REGISTERS, build_kernel_work
from ndpsim.workloads import kernel_module, run_workload

MEMORY_LATENCY_PS = 200_000  # assumption: any fixed latency will do


class Alone(NamedTuple):
    sm: smmod.SmState
    work: object
    l1: cachemod.Caches
    pool: rq.RequestPool
    links: linkmod.Links
    events: ev.EventQueue
    sm_port: np.ndarray
    page: tuple
    ext: None


HANDLERS = kinds.Handlers("the SIMT core alone")


@HANDLERS.on(smmod.EV_L2_REQUEST)
@compiled
def _memory(sm, work, l1, pool, events, ext, rid, now):
    """The request is served a fixed time later: a load's (or atomic's) registers are ready
    then, a store is done."""
    f = pool.fields[rid]
    if rq.reads(f[rq.Q_KIND]):
        smmod.complete_transaction(sm, work, ext, events, f[rq.Q_SM], f[rq.Q_SLOT], f[rq.Q_LOAD],
                                   now + MEMORY_LATENCY_PS)  # fmt: skip
    smmod.release_request(sm, pool, rid, now)
    smmod.memory_freed(sm, l1, f[rq.Q_SM], now)


@compiled(inline=True)
def _never_short():
    return False


@compiled(inline=True)
def _finished(sm, work, pool):
    done = sm.counters[3] == work.params[W_NUM_CTAS] and pool.meta[0] == pool.free.shape[0]
    end = 0
    for s in range(sm.params[smmod.S_COUNT]):
        end = max(end, sm.clock_last[s])
    return done, end


@compiled(inline=True)
def _nothing_requested():
    return False


advance = compiled(entry=True)(assemble(Alone, HANDLERS, (smmod.CLOCK,), short_of_room=_never_short,
                                        finished=_finished, requested=_nothing_requested,
                                        home=__name__))  # fmt: skip


class _Launch(loop.Model):
    def __init__(self, state: Alone):
        self.state = state
        self.arguments = references(state)

    def advance(self, until_ps, until_events=loop.NEVER):
        return advance(*self.arguments, until_ps, until_events)

    def progress(self):
        return int(self.state.sm.stats[:, smmod.T_ISSUED].sum())

    def stuck(self, now_ps):
        return f"the SIMT core alone is stuck at {now_ps} ps"


def test_the_simt_core_runs_a_launch_with_no_extension():
    run = run_workload("vadd", "tiny", 0)
    (trace,) = run.traces
    work = build_kernel_work(trace, kernel_module(run.workload.module_name))
    system = load_system("gpu-baseline", {"sm": {"count": 4}, "l1": {"enabled": False}})
    cores = system.cores
    sm = smmod.build_sm_state(system._sm_params(), cores, int(work.params[W_NUM_REGISTERS]),
                              int(work.params[W_NUM_CTAS]))  # fmt: skip
    page = PageTable.build(BASE_ADDRESS, run.memory.size_bytes, 4096, 1 << 20)
    state = Alone(sm=sm, work=work,
                  l1=cachemod.build_caches(cores.count, 16384, 4, 128, 8),
                  pool=rq.request_pool(1 << 16), links=linkmod.build_links([1000.0] * 4, [0] * 4),
                  events=ev.event_queue(1 << 16), sm_port=np.arange(4, dtype=np.int64),
                  page=page.compiled, ext=None)  # fmt: skip
    smmod.dispatch_initial(reference(sm), reference(work), None, 0)
    end = loop.run(_Launch(state), 0)
    assert end > MEMORY_LATENCY_PS
    assert sm.counters[3] == work.params[W_NUM_CTAS]  # every CTA finished
    assert int(sm.stats[:, smmod.T_ISSUED].sum()) == trace.num_warp_instructions
    assert int(sm.stats[:, smmod.T_LOADS].sum()) > 0


def test_the_core_imports_no_extension():
    code = ("import sys, ndpsim.hw.core.sm\n"
            "print('ndpsim.hw.gpu.offload_execution' in sys.modules, "
            "'ndpsim.hw.gpu.offload' in sys.modules)")  # fmt: skip
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True)  # fmt: skip
    assert done.stdout.split() == ["False", "False"]
