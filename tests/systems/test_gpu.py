"""The baseline GPU system end to end: every kernel runs, exact counts on a hand-written kernel,
bandwidth-bound runtime, link accounting, determinism, and loud failures."""

from __future__ import annotations

import re

import numpy as np
import pytest

from ndpsim.errors import ConfigError, SimulationError
from ndpsim.frontend.parser import parse_ptx
from ndpsim.ptx import DeviceMemory, launch
from ndpsim.systems import load_system_config
from ndpsim.systems.gpu import GpuSystem
from ndpsim.workloads import kernel_module, run_workload, workload_names
from tests.systems.conservation import (
    assert_every_request_answered,
    assert_gpu_traffic_conserved,
    issued,
    trace_totals,
)

HEADER = ".version 9.0\n.target sm_75\n.address_size 64\n"

# One warp: load a[i], load a[i] again at an address that depends on the first value (so the
# second load issues after the first returned and finds the line in L1), store the sum to b[i].
LOAD_TWICE = (
    HEADER
    + """
.visible .entry twice(.param .u64 k_a, .param .u64 k_b)
{
    .reg .b32 %r<8>;
    .reg .f32 %f<4>;
    .reg .b64 %rd<8>;
    ld.param.u64 %rd1, [k_a];
    ld.param.u64 %rd2, [k_b];
    mov.u32 %r1, %tid.x;
    mul.wide.u32 %rd3, %r1, 4;
    add.s64 %rd4, %rd1, %rd3;
    ld.global.f32 %f1, [%rd4];
    mov.b32 %r2, %f1;
    and.b32 %r3, %r2, 0;
    cvt.u64.u32 %rd5, %r3;
    add.s64 %rd6, %rd4, %rd5;
    ld.global.f32 %f2, [%rd6];
    add.f32 %f3, %f1, %f2;
    add.s64 %rd7, %rd2, %rd3;
    st.global.f32 [%rd7], %f3;
    ret;
}
"""
)


def run_suite_workload(name, size="tiny", system="gpu-baseline", overrides=None, seed=None):
    run = run_workload(name, size)
    gpu = GpuSystem(load_system_config(system, overrides))
    result = gpu.run(run.traces, kernel_module(run.workload.module_name), run.memory, seed=seed)
    return run, result


def totals(result, path):
    return result.stats[path]["total"]


@pytest.mark.parametrize("name", workload_names())
def test_every_kernel_of_the_suite_runs_and_every_request_completes(name):
    run, result = run_suite_workload(name)
    assert result.core_cycles > 0
    assert issued(result) == trace_totals(run)[:2]
    # every request that went to memory came back (the run also checks its queues drained)
    assert_every_request_answered(run, result)
    assert_gpu_traffic_conserved(result)


def test_hits_misses_and_write_through_traffic_are_exact_on_a_small_kernel():
    module = parse_ptx(LOAD_TWICE, "twice.ptx")
    memory = DeviceMemory()
    a = memory.to_device(np.arange(32, dtype=np.float32))
    b = memory.alloc(32 * 4)
    trace = launch(module, "twice", (1, 1, 1), (32, 1, 1), [a, b], memory)
    config = load_system_config("gpu-baseline")
    result = GpuSystem(config).run([trace], module, memory)
    np.testing.assert_array_equal(
        memory.from_device(b, np.float32, 32), 2 * np.arange(32, dtype=np.float32)
    )
    sm, l2, dram = totals(result, "sm"), totals(result, "l2"), totals(result, "dram")
    # L1: the first load misses, the second hits; the store misses and is written through
    assert (sm["l1_accesses"], sm["l1_hits"], sm["l1_misses"]) == (3, 1, 2)
    assert (sm["line_transactions"], sm["load_transactions"], sm["store_transactions"]) == (
        3,
        1,
        1,
    )
    assert (l2["accesses"], l2["misses"], l2["write_throughs"]) == (2, 2, 1)
    assert (dram["reads"], dram["writes"]) == (1, 1)
    header = config.links.header_bytes
    links = result.summary["links"]
    # to memory: a read request (header) and a write (header + the 128 bytes the warp stored)
    assert links["gpu_to_memory"]["bytes"] == header + (header + 128)
    # back: the line (header + 128 bytes) and the write's acknowledgement (header)
    assert links["memory_to_gpu"]["bytes"] == (header + 128) + header
    assert links["memory_to_memory"]["bytes"] == 0


def test_bytes_on_links_equal_the_bytes_of_the_packets_sent():
    _, result = run_suite_workload("bfs")
    header = load_system_config("gpu-baseline").links.header_bytes
    l2 = totals(result, "l2")
    reads, writes = l2["dram_reads"], l2["dram_writes"]
    per_link = result.stats["links"]["instances"]

    def over(pattern):
        picked = [v for label, v in per_link.items() if re.fullmatch(pattern, label)]
        return {name: sum(v[name] for v in picked) for name in picked[0]}

    to_memory, from_memory = over(r"gpu->cube\d+"), over(r"cube\d+->gpu")
    assert to_memory["read_request_packets"] == reads
    assert to_memory["write_request_packets"] == writes
    assert from_memory["read_data_packets"] == reads
    assert from_memory["write_ack_packets"] == writes
    written = to_memory["write_request_bytes"] - writes * header  # the data the writes carry
    assert 0 < written <= writes * 128
    assert to_memory["read_request_bytes"] == reads * header
    assert from_memory["read_data_bytes"] == reads * (header + 128)
    assert from_memory["write_ack_bytes"] == writes * header
    summary = result.summary["links"]
    assert summary["gpu_to_memory"]["bytes"] == reads * header + writes * header + written
    assert summary["memory_to_gpu"]["bytes"] == reads * (header + 128) + writes * header


def test_a_bandwidth_bound_kernel_runs_in_bytes_over_bandwidth():
    # VADD streams 12 B per element and reuses nothing. With 2 GB/s links the stacks' links,
    # not the DRAM or the SMs, are the bottleneck by far; the run must take as long as the
    # busiest direction needs to move its bytes, within 5%.
    gbps = 2.0
    overrides = {"links": {"host_to_cube_gbps": gbps, "cube_to_host_gbps": gbps}}
    _, result = run_suite_workload("vadd", overrides=overrides)
    config = load_system_config("gpu-baseline")
    capacity = gbps * 1e9 * config.memory.cubes  # bytes per second, each direction
    links = result.summary["links"]
    moved = max(links["gpu_to_memory"]["bytes"], links["memory_to_gpu"]["bytes"])
    ideal_ps = moved / capacity * 1e12
    assert ideal_ps <= result.time_ps <= 1.05 * ideal_ps


def _without_evaluated_clocks(stats):
    """Every counter but how many clocks of an SM were looked at: the one counter that says
    how much skipping there was."""
    if isinstance(stats, dict):
        return {k: _without_evaluated_clocks(v) for k, v in stats.items()
                if k != "cycles_evaluated"}  # fmt: skip
    return stats


@pytest.mark.parametrize(
    "name, system",
    [("bfs", "gpu-baseline"), ("hist", "gpu-baseline"), ("bp", "gpu-baseline"),
     ("vadd", "tom-ndp"), ("spmv", "sndp-ndp")],
)  # fmt: skip
def test_sleeping_through_clocks_with_nothing_to_issue_changes_no_result(name, system):
    _, asleep = run_suite_workload(name, system=system)
    every_clock = {"sm": {"skip_idle_clocks": False}}
    _, awake = run_suite_workload(name, system=system, overrides=every_clock)
    assert awake.time_ps == asleep.time_ps and awake.energy == asleep.energy
    # the stall breakdown included: a sleeping scheduler's clocks count as what it waits for
    assert _without_evaluated_clocks(awake.stats) == _without_evaluated_clocks(asleep.stats)
    evaluated = [r.stats["sm"]["total"]["cycles_evaluated"] for r in (asleep, awake)]
    assert evaluated[0] < evaluated[1]


def test_an_sm_counts_its_clocks_only_while_it_has_work_or_ctas_are_left():
    # knn `tiny` is one launch of fewer CTAs than the GPU has SMs: all go out at once
    _, result = run_suite_workload("knn")
    schedulers = load_system_config("gpu-baseline").sm.schedulers
    sms = list(result.stats["sm"]["instances"].values())
    for sm in sms:  # on each clock counted, each scheduler issues or names one reason
        stalls = sm["no_issue_unit_busy"] + sm["no_issue_dependency"] + sm["no_issue_idle"]
        outcomes = sm["warp_instructions"] + stalls
        assert outcomes == schedulers * sm["clocks"]
    without_cta = [sm for sm in sms if sm["ctas"] == 0]
    busy = [sm["clocks"] for sm in sms if sm["ctas"] > 0]
    assert without_cta and busy
    # an SM that got no CTA counts the launch's first clock only, idle
    assert all(sm["clocks"] == 1 and sm["no_issue_idle"] == schedulers for sm in without_cta)
    # the others stop when their last warp finishes, each at its own time, before the end
    assert max(busy) < result.summary["core_cycles"] and min(busy) < max(busy)


def test_the_same_seed_gives_identical_statistics_twice():
    _, first = run_suite_workload("spmv", system="sndp-baseline", seed=3)
    _, again = run_suite_workload("spmv", system="sndp-baseline", seed=3)
    assert first.stats == again.stats and first.time_ps == again.time_ps
    assert first.energy == again.energy
    # the random page placement of this system depends on the seed
    _, other = run_suite_workload("spmv", system="sndp-baseline", seed=4)
    assert other.stats["dram"] != first.stats["dram"]


def test_an_energy_breakdown_adds_up_to_its_total():
    _, result = run_suite_workload("km")
    energy = result.energy
    parts = {k: v for k, v in energy.items() if k != "total"}
    assert all(v >= 0 for v in parts.values()) and energy["total"] > 0
    assert sum(parts.values()) == pytest.approx(energy["total"])


def test_a_kernel_that_does_not_fit_an_sm_is_a_config_error():
    with pytest.raises(ConfigError, match="does not fit on an SM"):
        run_suite_workload("hist", overrides={"sm": {"shared_bytes": 256}})


def test_a_run_that_stops_progressing_is_stopped_by_the_watchdog():
    # A row activation of ~2 ms: nothing completes for longer than the watchdog waits.
    slow = {"memory": {"dram_overrides": {"timing": {"RCD": 2_000_000, "RAS": 2_000_100,
                                                     "RC": 2_000_200}}}}  # fmt: skip
    with pytest.raises(SimulationError, match=r"stopped making progress.*DRAM queues"):
        run_suite_workload("vadd", overrides=slow)


def test_a_policy_sees_every_epoch_and_its_page_moves_take_effect():
    run = run_workload("vadd", "small")
    module = kernel_module("vadd")
    seen = []

    def policy(epoch):
        seen.append((epoch.kernel, epoch.time_ps, int(epoch.sm_stats[:, 0].sum())))
        if len(seen) == 1:  # move every page of the run into cube-0-heavy frames
            table = epoch.page_table
            for page in range(len(table.table)):
                table.migrate((table.vpn_base + page) << table.shift, page * 4)

    config = load_system_config("gpu-baseline")
    moved = GpuSystem(config).run(run.traces, module, run.memory, on_epoch=policy)
    plain = GpuSystem(config).run(run.traces, module, run.memory)
    assert len(seen) >= 1 and all(k == 0 for k, _, _ in seen)
    times = [t for _, t, _ in seen]
    assert times == sorted(times) and times[-1] < moved.time_ps
    issued = [n for _, _, n in seen]
    assert issued == sorted(issued) and issued[-1] < totals(moved, "sm")["warp_instructions"]
    # the migration changed where the later accesses went
    assert moved.stats["dram"] != plain.stats["dram"]


def test_load_latencies_are_recorded_in_a_histogram():
    _, result = run_suite_workload("vadd")
    hist = result.stats["load_latency_cycles"]
    counts = hist["counts"]
    assert hist["bin_width"] > 0
    sm = totals(result, "sm")
    # every load transaction that left an SM came back once
    assert sum(counts) == sm["load_transactions"] + sm["atomic_transactions"]
    assert counts[0] == 0  # nothing crosses the memory system in under one bin


def test_a_gpu_takes_a_dram_of_shorter_accesses_as_back_to_back_bursts_per_line():
    """The V100-like preset's HBM2 moves 64 bytes a burst: a 128-byte line is two bursts of one
    row, at the stack's own bandwidth; a DRAM whose accesses do not divide a line is refused."""
    from ndpsim.hw.dram.spec import load_dram_preset

    system = GpuSystem(load_system_config("v100"))
    hbm2 = load_dram_preset("hbm2")
    assert system.dram_preset.organization.access_bytes == 128
    assert system.dram_preset.peak_bandwidth_gbps == pytest.approx(hbm2.peak_bandwidth_gbps)
    odd = {"memory": {"dram_overrides": {"organization": {"access_bytes": 48}}}}
    with pytest.raises(ConfigError, match="128 B lines"):
        GpuSystem(load_system_config("v100", odd))
