"""The CPU core model against what a CPU must show, on hand-made streams and a memory of fixed
latency (issue 49, item 6)."""

from __future__ import annotations

import numpy as np
import pytest

from ndpsim.hw.core.cpu_config import CpuCoreConfig
from ndpsim.hw.cpu import core as cpu
from ndpsim.ptx import DeviceMemory, launch
from ndpsim.trace.cpu_threads import cpu_program
from ndpsim.trace.cpu_work import (
    K_BRANCH,
    K_INT,
    K_LOAD,
    K_MUL,
    K_STORE,
    CpuWork,
    build_cpu_work,
    stream_work,
)
from ndpsim.workloads import kernel_module, run_workload
from tests.simt.harness import module_from

PERIOD_PS = 1000
#: ALP Table 1's core (the defaults): 4-wide, 128-entry ROB, 32-entry load and store queues.
ALP = CpuCoreConfig()


def run(work: CpuWork, memory_cycles: int = 100, **changes):
    """Every thread of ``work`` on a core of its own, memory answering every request
    ``memory_cycles`` after the core asks; returns (cycles, stats per core)."""
    in_order = changes.pop("in_order", False)
    config = ALP.model_copy(update=changes)
    threads = work.threads
    cores = cpu.build_cores(work, config.params(PERIOD_PS, in_order), config.latencies())
    writes: list[tuple[int, int]] = []  # (time written, core)
    now, delay = 0, memory_cycles * PERIOD_PS
    while not all(cpu.finished(cores, c) for c in range(threads)):
        for t, c in [w for w in writes if w[0] <= now]:
            cpu.store_written(cores, c)
            writes.remove((t, c))
        cpu.tick(cores, work, now)
        k = 0
        while k < cores.req_used[0]:  # an answer may start more loads
            c, e = int(cores.req_core[k]), int(cores.req_entry[k])
            done = int(cores.req_time[k]) + delay
            if cores.req_kind[k] == cpu.REQ_STORE:
                writes.append((done, c))
            else:
                cpu.load_done(cores, work, c, e, done)
            k += 1
        cores.req_used[0] = 0
        now += PERIOD_PS
        assert now < 10**10, "the core never finished"
    stats = [dict(zip(cpu.CORE_STAT_NAMES, map(int, row), strict=True)) for row in cores.stats]
    return now // PERIOD_PS, stats


def test_a_dependent_alu_chain_retires_one_instruction_a_cycle():
    n = 2_000
    cycles, (stats,) = run(stream_work([0] * n, [K_INT], [[0]], [[0]]))
    assert stats["instructions"] == n
    assert n <= cycles <= n + 10


def test_independent_instructions_reach_the_issue_width():
    n = 4_000
    pcs = np.arange(n) % 8
    cycles, (stats,) = run(stream_work(pcs, [K_INT] * 8, [[]] * 8, [[r] for r in range(8)]))
    assert stats["instructions"] == n
    assert n / 4 <= cycles <= n / 4 + 10


def test_a_longer_latency_stretches_a_dependent_chain():
    n = 500
    cycles, _ = run(stream_work([0] * n, [K_MUL], [[0]], [[0]]))
    assert ALP.latency_mul * n <= cycles <= ALP.latency_mul * n + 10


def test_the_defaults_are_alp_table_1s_core():
    assert (ALP.clock_ghz, ALP.width, ALP.rob, ALP.load_queue, ALP.store_queue) == (
        2.4, 4, 128, 32, 32)  # fmt: skip
    assert ALP.clock().period_ps == 417


def test_loads_in_flight_never_exceed_the_load_queue():
    # independent loads that each take 100 cycles: the load queue bounds the overlap
    n = 640
    work = stream_work([0] * n, [K_LOAD], [[]], [[0]])
    cycles, (stats,) = run(work, memory_cycles=100)
    assert stats["peak_loads_in_flight"] == 32
    assert stats["load_queue_full_cycles"] > 0
    # 640 loads, 32 at a time, 100 cycles each
    assert 20 * 100 <= cycles <= 20 * 100 + 200
    small, (few,) = run(work, memory_cycles=100, load_queue=8)
    assert few["peak_loads_in_flight"] == 8 and small >= 80 * 100


def test_a_load_miss_stalls_an_in_order_core_at_its_first_use():
    # load r1; r2 = r1 + 1 (uses the load); r3 = r3 + 1 x 50 (independent)
    body = [0, 1] + [2] * 50
    work = stream_work(body, [K_LOAD, K_INT, K_INT], [[], [1], [3]], [[1], [2], [3]])
    out_of_order, _ = run(work, memory_cycles=100)
    in_order, _ = run(work, memory_cycles=100, in_order=True, width=1)
    # out of order the independent chain runs under the miss, and retires 4 a cycle after it
    assert out_of_order <= 100 + 52 / 4 + 5
    assert in_order >= 100 + 50  # nothing passes the use of the missing load


def test_the_rob_bounds_how_far_a_core_runs_ahead_of_a_miss():
    # a load, then 1,000 independent instructions: the ROB fills behind the load
    work = stream_work([0] + [1] * 1_000, [K_LOAD, K_INT], [[], []], [[0], [1]])
    _, (big,) = run(work, memory_cycles=200)
    _, (small,) = run(work, memory_cycles=200, rob=16)
    assert small["rob_full_cycles"] > big["rob_full_cycles"]


@pytest.mark.parametrize(("pattern", "expect_mispredicts"), [("alternating", False),
                                                              ("random", True)])  # fmt: skip
def test_the_predictor_learns_a_pattern_and_misses_random_branches(pattern, expect_mispredicts):
    n = 2_000
    rng = np.random.default_rng(0)
    taken = np.arange(n) % 2 if pattern == "alternating" else rng.integers(0, 2, n)
    # the branch at pc 0 goes back to itself when taken, else falls through to pc 1, which
    # jumps back to it
    pcs = [p for t in taken for p in ([0] if t else [0, 1])]
    work = stream_work(pcs, [K_BRANCH, K_INT], [[], []], [[], []])
    cycles, (stats,) = run(work)
    rate = stats["mispredicts"] / stats["branches"]
    if expect_mispredicts:
        assert 0.35 < rate < 0.65
        assert cycles > n / 4 + stats["mispredicts"] * ALP.mispredict_cycles
    else:
        assert rate < 0.02


def test_stores_retire_without_waiting_but_the_store_queue_bounds_the_writes():
    n = 400
    work = stream_work([0] * n, [K_STORE], [[]], [[]])
    cycles, (stats,) = run(work, memory_cycles=100)
    assert stats["stores"] == n
    assert stats["store_queue_full_cycles"] > 0
    assert cycles >= (n / 32) * 100


def test_a_workload_runs_its_cpu_threads_to_the_end():
    functional = run_workload("vadd", "tiny", 0)
    module = kernel_module(functional.workload.module_name)
    (launch,) = cpu_program(functional.traces, module, threads=2)
    work = build_cpu_work(launch, module)
    _, stats = run(work, memory_cycles=50)
    assert sum(s["instructions"] for s in stats) == work.instruction_count
    assert sum(s["loads"] for s in stats) == int((launch.mem_kind == 0).sum())


def test_a_load_whose_guard_is_false_issues_without_an_access():
    # half the lanes load: the other CUDA threads run the instruction and touch nothing
    module = module_from("""
    ld.param.u64 %rd1, [k_in];
    mov.u32 %r1, %tid.x;
    setp.lt.u32 %p1, %r1, 16;
    @%p1 ld.global.u32 %r2, [%rd1];
    ret;
""", params=".param .u64 k_in")  # fmt: skip
    memory = DeviceMemory()
    trace = launch(module, "k", 1, 32, [memory.alloc(4)], memory)
    (cpu_threads,) = cpu_program([trace], module, threads=1)
    assert len(cpu_threads.mem_address) == 16
    work = build_cpu_work(cpu_threads, module)
    _, (stats,) = run(work, memory_cycles=50)
    assert stats["instructions"] == 32 * 5
    assert stats["loads"] == 16
