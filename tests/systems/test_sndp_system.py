"""SNDP's NDP system: partitioned execution on NSUs in 8 HMCs, credits, target NSUs, offload
ratios (static and Algorithm 1) and the cache-aware decision."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from ndpsim.errors import ConfigError
from ndpsim.hw.gpu import offload as ofl
from ndpsim.policy.offload.sndp import target_stacks
from ndpsim.policy.sndp_ratio import (
    INITIAL_RATIO,
    STEP_MAX,
    STEP_UNIT,
    RatioController,
    time_weighted_ratio,
)
from ndpsim.systems import load_system_config
from ndpsim.systems.gpu import GpuSystem
from ndpsim.workloads import kernel_module, run_workload


@pytest.fixture(scope="module")
def vadd():
    run = run_workload("vadd", "tiny", 0)
    return run, kernel_module(run.workload.module_name)


@pytest.fixture(scope="module")
def bfs():
    run = run_workload("bfs", "tiny", 0)
    return run, kernel_module(run.workload.module_name)


def _run(workload, preset="sndp-ndp", seed=0, **ndp):
    run, module = workload
    config = load_system_config(preset, {"ndp": ndp} if ndp else None)
    return GpuSystem(config).run(run.traces, module, run.memory, seed=seed)


@pytest.fixture(scope="module")
def naive(vadd):
    return _run(vadd)


# ------------------------------------------------------------------------ partitioned runs
def test_naive_ndp_offloads_every_instance_and_acknowledges_it(naive):
    off = naive.summary["offload"]
    assert off["instances"] > 0
    assert off["offloaded"] == off["instances"] == off["acknowledged"]
    assert off["offloaded_instruction_fraction"] > 0
    # one RDF packet per line each block instance loads, one WTA per line it stores
    assert off["rdf_packets"] > 0 and off["wta_packets"] > 0
    assert off["nsu_writes"] == off["wta_packets"]


def test_the_hypercube_carries_the_forwarded_data(naive):
    links = naive.stats["links"]["instances"]
    cube_links = {k: v for k, v in links.items() if k.startswith("cube") and "->cube" in k}
    assert len(cube_links) == 8 * 3  # 3 links per HMC, each direction counted
    assert sum(v["read_data_bytes"] for v in cube_links.values()) > 0
    assert naive.summary["links"]["memory_to_memory"]["bytes"] > 0


def test_nsu_writes_send_invalidations_to_the_gpu(naive):
    links = naive.stats["links"]["instances"]
    to_gpu = sum(v["other_packets"] for k, v in links.items() if k.endswith("->gpu"))
    assert to_gpu == naive.summary["offload"]["nsu_writes"]


def test_credits_are_never_overdrawn(naive):
    credits = naive.summary["offload"]["credits"]
    assert credits["overdrawn"] == 0
    for kind in ("command", "read_data", "write_address"):
        assert 0 < credits[kind]["most_reserved"] <= credits[kind]["capacity"]


def test_tiny_buffers_make_warps_wait_for_credits_without_deadlock(vadd, naive):
    squeezed = _run(vadd, command_entries=1, read_data_entries=2, write_address_entries=1,
                    stack_warps=1, ready_packets=32)  # fmt: skip
    off = squeezed.summary["offload"]
    assert off["waited_for_credits"] > 0
    assert off["acknowledged"] == off["offloaded"] == off["instances"]
    assert off["credits"]["command"]["most_reserved"] == 1
    assert squeezed.time_ps > naive.time_ps


def test_a_block_larger_than_the_buffers_is_refused(vadd):
    with pytest.raises(ConfigError, match="read_data_entries"):
        _run(vadd, read_data_entries=1)


def test_a_zero_ratio_runs_exactly_like_the_baseline(vadd):
    none = _run(vadd, decision="ratio", ratio=0.0)
    baseline = _run(vadd, preset="sndp-baseline")
    assert none.summary["offload"]["offloaded"] == 0
    assert none.summary["offload"]["declined_ratio"] == none.summary["offload"]["instances"]
    assert none.time_ps == baseline.time_ps


def test_a_static_ratio_offloads_about_that_fraction_deterministically(vadd):
    half = _run(vadd, decision="ratio", ratio=0.5)
    again = _run(vadd, decision="ratio", ratio=0.5)
    assert half.time_ps == again.time_ps
    assert half.summary == again.summary
    assert 0.3 < half.summary["offload"]["offloaded_fraction"] < 0.7
    other_seed = _run(vadd, seed=1, decision="ratio", ratio=0.5)
    assert other_seed.summary["offload"]["offloaded"] != half.summary["offload"]["offloaded"]


def test_a_slower_nsu_clock_slows_naive_offloading(vadd, naive):
    slow = _run(vadd, nsu_clock_ghz=0.175)
    assert slow.time_ps > naive.time_ps


def test_indirect_loads_are_offloaded_alone(bfs):
    result = _run(bfs)
    off = result.summary["offload"]
    assert off["offloaded"] > 0 and off["acknowledged"] == off["offloaded"]


def test_cache_aware_decision_runs_and_reports(vadd):
    result = _run(vadd, decision="dynamic", cache_aware=True)
    off = result.summary["offload"]
    assert off["acknowledged"] == off["offloaded"]
    assert 0.0 <= off["rdf_hit_rate"] <= 1.0
    assert off["ratio_timeline"][0] == [0.0, INITIAL_RATIO]


# --------------------------------------------------------------------------- target NSU
def test_target_is_the_stack_the_first_instruction_touches_most():
    # instance 0: its first instruction (position 5) touches stacks 1, 1, 4; the next one 4, 4
    # instance 1: one line in stack 2, then one in stack 6; instance 2 touches nothing
    owner = np.array([0, 0, 0, 0, 0, 1, 1])
    position = np.array([5, 5, 5, 9, 9, 20, 21])
    stack = np.array([1, 1, 4, 4, 4, 2, 6])
    assert target_stacks(owner, position, stack, 3, 8, "first").tolist() == [1, 2, -1]
    # the optimal target holds most of all accesses
    assert target_stacks(owner, position, stack, 3, 8, "optimal").tolist() == [4, 2, -1]


def test_a_tied_target_is_the_stack_the_block_touches_first():
    # instance 0: one line each in stacks 5, 0 and 3 (a VADD-like block over three HMCs);
    # instance 1: a divergent first instruction with two lines each in stacks 6 and 1
    owner = np.array([0, 0, 0, 1, 1, 1, 1, 1])
    position = np.array([3, 4, 5, 7, 7, 7, 7, 8])
    stack = np.array([5, 0, 3, 6, 1, 1, 6, 1])
    assert target_stacks(owner, position, stack, 2, 8, "first").tolist() == [5, 6]
    assert target_stacks(owner, position, stack, 2, 8, "optimal").tolist() == [5, 1]


@given(st.lists(st.integers(0, 7), min_size=3, max_size=3), st.integers(0, 7))
def test_ties_do_not_favour_low_numbered_stacks(stacks, shift):
    # renumbering the stacks renumbers the target: no stack is preferred by its number
    owner = np.zeros(3, dtype=np.int64)
    position = np.arange(3)
    stack = np.array(stacks)
    for policy in ("first", "optimal"):
        target = target_stacks(owner, position, stack, 1, 8, policy)[0]
        moved = target_stacks(owner, position, (stack + shift) % 8, 1, 8, policy)[0]
        assert moved == (target + shift) % 8


# -------------------------------------------------------------------------- Algorithm 1
def _climb(throughputs):
    """The ratios Algorithm 1 sets when successive epochs measure ``throughputs``."""
    import ndpsim.hw.gpu.offload as ofl

    ratio = RatioController(INITIAL_RATIO, epoch_ps=1000)
    off = ofl.no_offload()
    ratio.attach(off)
    done = 0
    for k, value in enumerate(throughputs, start=1):
        done += value * 1000
        off.control[ofl.C_BLOCK_INSTRUCTIONS] = done
        ratio.epoch_end(k * 1000)
    return [r for _, r in ratio.timeline]


def test_the_offload_ratio_mean_weights_each_ratio_by_how_long_it_held():
    timeline = [[0.0, 0.1], [1.0, 0.4], [3.0, 0.2]]
    assert time_weighted_ratio(timeline, 4.0) == pytest.approx((0.1 * 1 + 0.4 * 2 + 0.2 * 1) / 4)
    # a ratio set when the run ends held for no time
    assert time_weighted_ratio([[0.0, 0.1], [1.0, 0.25]], 0.00085) == pytest.approx(0.1)
    assert time_weighted_ratio([], 4.0) is None


def test_hill_climbing_keeps_going_while_throughput_rises():
    ratios = _climb([1, 2, 3, 4])
    assert ratios == pytest.approx([0.1, 0.25, 0.4, 0.55])
    assert ratios[1] - ratios[0] == pytest.approx(STEP_MAX)


def test_hill_climbing_turns_back_and_shrinks_its_step_when_it_keeps_reversing():
    # every epoch is worse than the last: the direction flips each time, and once more than
    # half of the last four moves were reversals the step shrinks by a unit per epoch
    ratios = _climb([5, 4, 3, 2, 1])
    assert ratios == pytest.approx([0.1, STEP_UNIT, 0.2, 0.1, 0.15])


def test_hill_climbing_stays_within_its_bounds():
    ratios = _climb([1, *range(2, 30)])
    assert max(ratios) == pytest.approx(1 - STEP_UNIT)
    ratios = _climb([30 - k for k in range(30)])
    assert min(ratios) >= STEP_UNIT - 1e-9


# ------------------------------------------------------------------------------ Figure 8
def test_warps_waiting_for_offloaded_blocks_count_as_idle(vadd, naive):
    baseline = _run(vadd, preset="sndp-baseline")
    assert naive.summary["stall_breakdown"]["idle"] > baseline.summary["stall_breakdown"]["idle"]


def test_each_launch_is_planned_when_it_runs_and_its_accesses_dropped_after(bfs, monkeypatch):
    run, _ = bfs
    assert len(run.traces) > 1
    plan_launch = GpuSystem._plan_launch
    kept = []

    def spy(self, plan, *args):
        kept.append(sum(acc is not None for acc in plan.accesses))
        plan_launch(self, plan, *args)

    monkeypatch.setattr(GpuSystem, "_plan_launch", spy)
    result = _run(bfs)
    assert kept == [0] * len(run.traces)  # earlier launches' line accesses are gone
    assert result.summary["offload"]["instances"] > 0


def test_the_cache_aware_benefit_and_the_register_overhead_are_both_bytes_per_warp():
    # sec. 7.3 against Equation 1's overhead: a block with two live-ins whose one load per
    # instance always misses fetches 128 B per warp and costs 2 x 4 B x 32 lanes = 256 B
    off = ofl.no_offload()._replace(
        cand_offloaded=np.array([10]),
        cand_rdf=np.array([10]),  # one line per instance
        cand_rdf_hits=np.array([0]),
        cand_stores=np.array([0]),
        cand_live_in_first=np.array([0, 2]),
        cand_live_out_first=np.array([0, 0]),
    )
    assert ofl.cache_aware_benefit(off, 0) == 128
    assert ofl.register_overhead(off, 0) == 256
    # a store per instance adds a word of every lane
    stores = off._replace(cand_stores=np.array([1]))
    assert ofl.cache_aware_benefit(stores, 0) == 128 + 4 * 32
    # four lines, half of them hits: two fetched per warp
    half = off._replace(cand_rdf=np.array([40]), cand_rdf_hits=np.array([20]))
    assert ofl.cache_aware_benefit(half, 0) == 2 * 128
