"""Any valid configuration runs to completion: hypothesis draws corners of the configuration
space the presets never visit (one SM, one L2 MSHR, one-entry DRAM queues, a 2 GB/s link, a
one-entry NSU command buffer) on the kernels of the suite, and every run must finish with
every instruction issued, every request answered and every offload acknowledged. The system
checks its own queues, credits and acknowledgements when each kernel ends; these tests add
the counts seen from outside."""

from __future__ import annotations

from functools import cache

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ndpsim.systems import load_system_config
from ndpsim.systems.gpu import GpuSystem
from ndpsim.workloads import kernel_module, run_workload, workload_names
from tests.systems.conservation import (
    assert_every_request_answered,
    assert_gpu_traffic_conserved,
    issued,
    trace_totals,
)

# derandomized, so that the suite is the same on every run; a simulation of a tiny workload
# costs about a tenth of a second. (Run with more examples and derandomize=False to hunt.)
EXAMPLES = settings(
    max_examples=25,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)


@cache
def interpreted(name: str):
    """A workload's traces, interpreted once: a run reads them and changes nothing."""
    return run_workload(name, "tiny")


def simulate(name: str, system: str, overrides: dict, seed: int):
    """Run a workload on a system and check what every system must account for."""
    run = interpreted(name)
    gpu = GpuSystem(load_system_config(system, overrides))
    result = gpu.run(run.traces, kernel_module(run.workload.module_name), run.memory, seed=seed)
    assert_every_request_answered(run, result)
    return run, result


def assert_offloads_acknowledged(result):
    off = result.summary["offload"]
    assert off["acknowledged"] == off["offloaded"] <= off["instances"]
    return off


def gpu_overrides(draw) -> dict:
    """The GPU and memory keys every system has, from tiny to preset-sized."""
    slices = draw(st.sampled_from([1, 2, 4, 16]))
    return {
        "sm": {
            "count": draw(st.integers(1, 6)),
            "warps": draw(st.sampled_from([8, 16, 48])),  # a tiny CTA has at most 8 warps
            "ctas": draw(st.integers(1, 8)),
            "schedulers": draw(st.integers(1, 4)),
            "scheduler": draw(st.sampled_from(["gto", "lrr"])),
            "load_slots": draw(st.integers(1, 8)),
            "latency_alu": draw(st.integers(1, 12)),
            "latency_sfu": draw(st.integers(1, 40)),
            "sfu_interval": draw(st.integers(1, 8)),
        },
        "l1": {
            "size_bytes": draw(st.sampled_from([4096, 32768])),
            "ways": draw(st.sampled_from([1, 4])),
            "mshrs": draw(st.integers(32, 64)),  # the lines of one warp instruction at least
            "enabled": draw(st.booleans()),
        },
        "l2": {
            "slices": slices,
            "size_bytes": slices * draw(st.sampled_from([4096, 65536])),
            "ways": draw(st.sampled_from([1, 16])),
            "mshrs": draw(st.integers(1, 48)),
        },
        "crossbar": {
            "bytes_per_cycle": draw(st.sampled_from([8, 32])),
            "latency": draw(st.integers(0, 8)),
        },
        "memory": {
            "mapping": draw(st.sampled_from(["interleaved", "random-page"])),
            "xor_cube": draw(st.booleans()),
            "page_bytes": draw(st.sampled_from([256, 4096, 65536])),
            "internal_gbps": draw(st.sampled_from([0.0, 4.0, 160.0])),
            "dram_overrides": {
                "controller": {
                    "read_queue": draw(st.integers(1, 32)),
                    "write_queue": draw(st.integers(1, 32)),
                    "row_policy": draw(st.sampled_from(["open", "closed"])),
                    "write_high_watermark": draw(st.sampled_from([0.5, 1.0])),
                    "write_low_watermark": draw(st.sampled_from([0.0, 0.2])),
                    "refresh": draw(st.booleans()),
                }
            },
        },
        "links": {
            "host_to_cube_gbps": draw(st.sampled_from([2.0, 80.0])),
            "cube_to_host_gbps": draw(st.sampled_from([2.0, 80.0])),
            "latency_ns": draw(st.sampled_from([0.0, 10.0, 200.0])),
        },
    }


@st.composite
def baseline_configs(draw):
    return draw(st.sampled_from(workload_names())), gpu_overrides(draw)


@st.composite
def tom_configs(draw):
    overrides = gpu_overrides(draw)
    overrides["links"]["cube_to_cube_gbps"] = draw(st.sampled_from([1.0, 40.0]))
    overrides["ndp"] = {
        "stack_warps": draw(st.sampled_from([8, 48])),
        "control": draw(st.booleans()),
        "mapping": draw(st.sampled_from(["baseline", "learned"])),
        "ideal": draw(st.booleans()),
        "busy_window_cycles": draw(st.sampled_from([10, 1000])),
        "offload_latency_cycles": draw(st.integers(0, 20)),
        "blocks": draw(st.sampled_from(["loops", "maximal"])),
        "warp_limit": draw(st.booleans()),
        "run_to_first_access": draw(st.booleans()),
        "flush_stack_l1": draw(st.booleans()),
    }
    if overrides["ndp"]["mapping"] == "learned":  # it rearranges the interleaved mapping
        overrides["memory"]["mapping"] = "interleaved"
    return draw(st.sampled_from(workload_names())), overrides


@st.composite
def sndp_configs(draw):
    overrides = gpu_overrides(draw)
    overrides["ndp"] = {
        "stack_warps": draw(st.sampled_from([8, 48])),
        "decision": draw(st.sampled_from(["always", "ratio", "dynamic"])),
        "ratio": draw(st.sampled_from([0.0, 0.5, 1.0])),
        "cache_aware": draw(st.booleans()),
        "target": draw(st.sampled_from(["first", "optimal"])),
        "command_entries": draw(st.integers(1, 10)),
        "read_data_entries": draw(st.sampled_from([32, 64, 256])),
        "write_address_entries": draw(st.sampled_from([32, 64, 256])),
        "ready_packets": draw(st.sampled_from([32, 64])),
        "epoch_cycles": draw(st.sampled_from([100, 30000])),
    }
    return draw(st.sampled_from(workload_names())), overrides


@EXAMPLES
@given(baseline_configs(), st.integers(0, 3))
def test_the_baseline_gpu_finishes_under_any_valid_configuration(config, seed):
    name, overrides = config
    run, result = simulate(name, "tom-baseline", overrides, seed)
    assert issued(result) == trace_totals(run)[:2]
    assert_gpu_traffic_conserved(result)


@EXAMPLES
@given(tom_configs(), st.integers(0, 3))
def test_tom_finishes_and_acknowledges_every_offload_under_any_valid_configuration(config, seed):
    name, overrides = config
    run, result = simulate(name, "tom-ndp", overrides, seed)
    # an offloaded block's instructions issue on the stack SM instead of the GPU's, those before
    # its first memory access on both (footnote 4)
    gpu, stack = issued(result), issued(result, "stack_sm")
    off = assert_offloads_acknowledged(result)
    again = (off["redundant_instructions"], off["redundant_thread_instructions"])
    assert (gpu[0] + stack[0] - again[0], gpu[1] + stack[1] - again[1]) == trace_totals(run)[:2]


@EXAMPLES
@given(sndp_configs(), st.integers(0, 3))
def test_sndp_finishes_without_overdrawing_credits_under_any_valid_configuration(config, seed):
    name, overrides = config
    run, result = simulate(name, "sndp-ndp", overrides, seed)
    # partitioned execution: the GPU issues every instruction (an @NSU one as a NOP, its
    # threads counted on the NSU), the NSU its block's loads, stores and @NSU instructions
    warps, threads, _ = trace_totals(run)
    gpu, nsu = issued(result), issued(result, "nsu")
    assert gpu[0] == warps
    assert gpu[1] <= threads <= gpu[1] + nsu[1]
    off = assert_offloads_acknowledged(result)
    assert off["nsu_writes"] == off["wta_packets"]
    assert off["credits"]["overdrawn"] == 0
