"""TOM's NDP system: instances of candidate blocks, the learned mapping, offloading to stack SMs
with and without dynamic control, and the ideal system."""

from __future__ import annotations

import numpy as np
import pytest

from ndpsim.analysis.tom import tom_candidates
from ndpsim.errors import ConfigError
from ndpsim.hw.dram.mapping import AddressMapping
from ndpsim.policy import learned_mapping as tom_mapping
from ndpsim.policy.learned_mapping import (
    LaunchAccesses,
    LearningPhase,
    learn_mapping,
    single_stack_counts,
    single_stack_fraction,
)
from ndpsim.simt.memory import BASE_ADDRESS, DeviceMemory
from ndpsim.systems import load_system_config
from ndpsim.systems.gpu import GpuSystem
from ndpsim.trace.instances import find_instances, instance_lines
from ndpsim.trace.work import build_kernel_work
from ndpsim.workloads import kernel_module, run_workload


@pytest.fixture(scope="module")
def vadd():
    run = run_workload("vadd", "tiny", 0)
    return run, kernel_module(run.workload.module_name)


def _ndp(**ndp):
    return load_system_config("tom-ndp", {"ndp": ndp})


def _run(config, workload):
    run, module = workload
    return GpuSystem(config).run(run.traces, module, run.memory, seed=0)


def _touching_instances(workload):
    run, module = workload
    work = build_kernel_work(run.traces[0], module)
    instances = find_instances(work, tom_candidates(module.function(run.traces[0].info.kernel)))
    return len(np.unique(instance_lines(work, instances)[0]))


def _offload_bytes(result, kind):
    links = result.stats["links"]["instances"]
    return sum(entry["offload_bytes"] for label, entry in links.items() if kind in label)


# ------------------------------------------------------------------------------ instances
def test_every_warp_of_vadd_runs_one_instance_of_its_whole_body(vadd):
    run, module = vadd
    trace = run.traces[0]
    work = build_kernel_work(trace, module)
    candidates = tom_candidates(module.function(trace.info.kernel))
    instances = find_instances(work, candidates)
    assert len(instances) == len(work.warp_first)
    assert np.array_equal(instances.start, work.warp_first)
    assert np.all(instances.end == work.warp_end - 1)  # everything but the exit
    owner, _, _ = instance_lines(work, instances)
    # two loads and a store per warp, except the tail warps whose lanes are all past the end
    touching = np.unique(owner)
    assert np.all(np.bincount(owner)[touching] == 3)
    assert len(touching) > len(instances) - 32


def test_loop_instances_count_their_iterations():
    run = run_workload("lib", "tiny", 0)
    module = kernel_module(run.workload.module_name)
    trace = run.traces[0]
    work = build_kernel_work(trace, module)
    candidates = tom_candidates(module.function(trace.info.kernel))
    instances = find_instances(work, candidates)
    pcs = work.inst & ((1 << 24) - 1)
    for k in range(min(len(instances), 50)):
        cand = candidates[instances.candidate[k]]
        body = pcs[instances.start[k] : instances.end[k]]
        assert body[0] == cand.begin and body.min() >= cand.begin and body.max() <= cand.end
        if cand.loop_header_pc is not None:
            assert instances.trips[k] == np.count_nonzero(body == cand.loop_header_pc)


# -------------------------------------------------------------------------------- mapping
def test_single_stack_fraction_counts_instances_within_one_stack():
    owner = np.array([0, 0, 1, 1, 2])
    stacks = np.array([3, 3, 0, 1, 2])
    assert single_stack_fraction(owner, stacks) == pytest.approx(2 / 3)


def test_learning_picks_the_lowest_bits_that_keep_each_instance_in_one_stack():
    memory = DeviceMemory()
    memory.alloc(1 << 20, "data")
    memory.alloc(1 << 20, "untouched")
    instances = 1000
    # instance i touches the lines at byte offsets 1024 i and 1024 i + 128: bit 7 differs
    lines = np.stack([np.arange(instances) * 8, np.arange(instances) * 8 + 1], 1).ravel()
    owner = np.repeat(np.arange(instances), 2)
    launch = LaunchAccesses(instances, owner, lines + (BASE_ADDRESS >> 7), lines)
    config = load_system_config("tom-ndp")
    system = GpuSystem(config)
    choice = learn_mapping([launch], range(10), system.mapping, 4, memory,
                           lambda a: (a - BASE_ADDRESS) >> 7)  # fmt: skip
    assert choice.bit == 8
    assert choice.scores[7] == 0.0 and choice.scores[8] == 1.0
    assert choice.colocation_learned == 1.0
    assert choice.learning_instances == 10
    assert choice.remapped_allocations == ["data"]


def test_the_learning_phase_wants_a_fraction_of_the_instances_touching_memory():
    touching = LaunchAccesses(3, np.array([0, 0, 2]), np.arange(3), np.arange(3))
    later = LaunchAccesses(5, np.arange(5), np.arange(5), np.arange(5))
    phase = LearningPhase.of([touching, later], 0.5)
    assert phase.wanted == 4  # half of the 2 + 5 instances touching memory, rounded up
    phase.record(0, np.array([0, 2]))
    phase.record(1, np.array([1]))
    assert phase.observed == [0, 2, 4] and phase.left == 1
    assert LearningPhase.of([LaunchAccesses(2, np.zeros(0, np.int64), np.zeros(0, np.int64),
                                            np.zeros(0, np.int64))], 0.5).wanted == 0  # fmt: skip


# ------------------------------------------------------------------------------ the system
def test_the_ndp_preset_needs_a_cube_network():
    with pytest.raises(ConfigError, match="cube network"):
        GpuSystem(load_system_config("tom-ndp", {"links": {"cube_topology": "none"}}))


def test_without_control_every_instance_is_offloaded_and_acknowledged(vadd):
    result = _run(_ndp(control=False, mapping="baseline"), vadd)
    off = result.summary["offload"]
    run, module = vadd
    work = build_kernel_work(run.traces[0], module)
    instances = find_instances(work, tom_candidates(module.function("vadd")))
    touching = _touching_instances(vadd)
    # every instance that touches memory (one has a stack to go to) goes, and comes back
    assert off["instances"] == len(instances)
    assert off["offloaded"] == off["acknowledged"] == touching > 0
    assert off["offloaded_instruction_fraction"] > 0.9  # all but the exits
    # a request carries a 16-byte header and 16 bytes of PCs and mask (no live-ins here);
    # an acknowledgement its header and 8 bytes per written line
    assert _offload_bytes(result, "gpu->") == off["offloaded"] * 32
    writes = result.stats["stack_sm"]["total"]["store_transactions"]
    assert _offload_bytes(result, "->gpu") == off["offloaded"] * 16 + 8 * writes
    assert off["invalidated_lines"] == writes


def test_offloading_moves_data_traffic_off_the_gpu_links(vadd):
    base = _run(load_system_config("tom-baseline"), vadd)
    ndp = _run(_ndp(control=False, mapping="baseline"), vadd)
    offchip = lambda r: sum(v["bytes"] for v in r.summary["links"].values())  # noqa: E731
    assert ndp.summary["links"]["memory_to_gpu"]["bytes"] < base.summary["links"][
        "memory_to_gpu"]["bytes"] / 4  # fmt: skip
    assert offchip(ndp) < offchip(base)


def test_blocks_reach_other_stacks_data_over_the_cube_network():
    run = run_workload("bp", "tiny", 0)
    workload = (run, kernel_module(run.workload.module_name))
    base = _run(load_system_config("tom-baseline"), workload)
    ndp = _run(_ndp(control=False, mapping="baseline"), workload)
    ideal = _run(_ndp(control=False, mapping="baseline", ideal=True), workload)
    assert base.summary["links"]["memory_to_memory"]["bytes"] == 0  # no cube network
    assert ndp.summary["offload"]["colocation"] < 1
    assert ndp.summary["links"]["memory_to_memory"]["bytes"] > 0
    assert ideal.summary["links"]["memory_to_memory"]["bytes"] == 0


def test_control_bounds_pending_offloads_by_the_stack_warps(vadd):
    controlled = _run(_ndp(control=True, stack_warps=1, mapping="baseline"), vadd)
    off = controlled.summary["offload"]
    assert off["declined_pending"] > 0
    assert off["waited_for_slot"] == 0  # never more pending than slots
    flooded = _run(_ndp(control=False, stack_warps=1, mapping="baseline"), vadd)
    assert flooded.summary["offload"]["waited_for_slot"] > 0


def test_the_ideal_system_pays_nothing_to_offload(vadd):
    ideal = _run(_ndp(ideal=True, control=False, mapping="baseline"), vadd)
    assert ideal.summary["offload"]["offloaded"] > 0
    assert _offload_bytes(ideal, "->") == 0
    assert ideal.summary["links"]["memory_to_memory"]["bytes"] == 0
    real = _run(_ndp(control=False, mapping="baseline"), vadd)
    assert ideal.time_ps < real.time_ps


def test_learned_mapping_is_reported_and_colocates_at_least_as_well(vadd):
    result = _run(_ndp(control=False, mapping="learned"), vadd)
    off = result.summary["offload"]
    mapping = off["mapping"]
    assert mapping["bits"] != "baseline"
    assert mapping["colocation_learned"] >= mapping["colocation_baseline"]
    assert 0 < off["learning_us"] < result.time_ps / 1e6
    assert off["colocation"] == pytest.approx(mapping["colocation_learned"])


def test_the_learning_phase_runs_everything_on_the_gpu_over_pcie(vadd):
    # a phase as long as the whole kernel: nothing is offloaded, and every access pays PCIe
    config = _ndp(control=False, mapping="learned", learning_fraction=1.0)
    slow = _run(config, vadd)
    off = slow.summary["offload"]
    assert off["offloaded"] == 0
    assert off["mapping"]["learning_instances"] == _touching_instances(vadd)
    base = _run(load_system_config("tom-baseline"), vadd)
    assert slow.time_ps > 3 * base.time_ps  # every access waits 1 us longer
    # a short phase: the blocks reached after it (here by later CTAs on two SMs) go to the
    # stacks; the ones warps started during it stay on the GPU
    two_sms = load_system_config("tom-ndp", {"ndp": {"control": False, "mapping": "learned"},
                                             "sm": {"count": 2}})  # fmt: skip
    short = _run(two_sms, vadd)
    off = short.summary["offload"]
    assert off["mapping"]["learning_instances"] == 1
    assert 0 < off["offloaded"] < _touching_instances(vadd)
    assert 0 < off["learning_us"] < short.time_ps / 1e6


def test_ndp_runs_are_deterministic(vadd):
    config = _ndp(control=True, mapping="learned")
    a, b = _run(config, vadd), _run(config, vadd)
    assert a.time_ps == b.time_ps
    assert a.stats == b.stats


def test_stacks_are_decoded_slice_by_slice_as_in_one_go(monkeypatch):
    mapping = AddressMapping.from_layout([("offset", 7), ("cube", 2), ("channel", 4), ("row", 20)])
    lines = np.random.default_rng(0).integers(0, 1 << 26, 1000)
    whole = tom_mapping.stacks_under(mapping, lines)
    monkeypatch.setattr(tom_mapping, "_DECODE_SLICE", 7)
    np.testing.assert_array_equal(tom_mapping.stacks_under(mapping, lines), whole)
    np.testing.assert_array_equal(whole, mapping.decode(lines.astype(np.uint64) << 7)["cube"])
    assert set(mapping.decode(lines.astype(np.uint64), ("cube",))) == {"cube"}


def test_single_stack_counts_add_up_over_launches_to_the_fraction_over_all():
    rng = np.random.default_rng(3)
    owner = np.sort(rng.integers(0, 40, size=200))
    stacks = rng.integers(0, 2, size=200)
    split = owner < 17  # two launches: instances 0-16 and 17-39
    counts = [single_stack_counts(owner[part], stacks[part]) for part in (split, ~split)]
    together = sum(n for n, _ in counts) / sum(t for _, t in counts)
    assert together == pytest.approx(single_stack_fraction(owner, stacks))
    assert sum(t for _, t in counts) == len(np.unique(owner))
