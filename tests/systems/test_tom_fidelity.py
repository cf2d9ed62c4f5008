"""TOM as its paper describes it: links of 80 GB/s counting both directions, a learning phase
that costs latency only and ends once the analyzer has seen its instances, an ideal system that
keeps the stack SMs' warp limit, the GPU running a block up to its first memory access, and
stack SMs that flush their L1 before an offloaded block."""

from __future__ import annotations

import numpy as np
import pytest

from ndpsim.experiments.papers import tom as tom_experiment
from ndpsim.hw.gpu import offload as ofl
from ndpsim.systems import load_system_config
from ndpsim.systems.gpu import GpuSystem
from ndpsim.workloads import kernel_module, run_workload


@pytest.fixture(scope="module")
def vadd():
    run = run_workload("vadd", "tiny", 0)
    return run, kernel_module(run.workload.module_name)


def _run(config, workload):
    run, module = workload
    return GpuSystem(config).run(run.traces, module, run.memory, seed=0)


def _ndp(**ndp):
    return load_system_config("tom-ndp", {"ndp": ndp})


# ---------------------------------------------------------------------------------- links
def test_a_gpu_stack_link_carries_half_of_its_80_gbps_each_way():
    base = load_system_config("tom-baseline")
    ndp = load_system_config("tom-ndp")
    links = base.links
    assert links.host_to_cube_gbps == links.cube_to_host_gbps == 40
    # Table 1: 320 GB/s over the four links, both directions together
    assert base.memory.cubes * (links.host_to_cube_gbps + links.cube_to_host_gbps) == 320
    assert ndp.links.cube_to_cube_gbps == 20  # 40 GB/s per cross-stack link, 20 each way
    assert base.memory.internal_gbps == 160  # 2x the 80 GB/s link
    sndp = load_system_config("sndp-ndp").links  # SNDP Table 2: 20 GB/s per direction
    assert sndp.host_to_cube_gbps == sndp.cube_to_host_gbps == sndp.cube_to_cube_gbps == 20


@pytest.mark.parametrize(
    "internal, cross, internal_gbps, cross_gbps_each_way",
    [(2.0, 0.5, 160, 20), (1.0, 0.5, 80, 20), (2.0, 1.0, 160, 40), (2.0, 0.125, 160, 5)],
)
def test_the_bandwidth_switches_are_multiples_of_the_80_gbps_link(
    internal, cross, internal_gbps, cross_gbps_each_way
):
    for variant in tom_experiment.PAPER.variants(internal_bw=internal, cross_bw=cross):
        config = load_system_config(variant.preset, variant.overrides)
        assert config.memory.internal_gbps == internal_gbps
        if config.ndp is not None:
            assert config.links.cube_to_cube_gbps == cross_gbps_each_way


# ------------------------------------------------------------------------ the learning phase
def test_the_learning_phase_costs_the_pcie_latency_and_no_bandwidth(vadd):
    # a phase as long as the run: 64 GPU SMs run everything, every GPU-stack link keeps its
    # 40 GB/s and adds half the PCIe round trip each way
    learning = _run(_ndp(control=False, mapping="learned", learning_fraction=1.0), vadd)
    assert learning.summary["offload"]["offloaded"] == 0
    pcie_ns = load_system_config("tom-ndp").ndp.pcie_latency_ns
    link_ns = load_system_config("tom-baseline").links.latency_ns
    gpu = {"sm": {"count": 64}}
    far = _run(
        load_system_config("tom-baseline", {**gpu, "links": {"latency_ns": link_ns + pcie_ns / 2}}),
        vadd,
    )
    near = _run(load_system_config("tom-baseline", gpu), vadd)

    def busy(result):
        links = result.stats["link_busy"]["instances"]
        return {label: link["busy_ps"] for label, link in links.items() if "gpu" in label}

    assert busy(learning) == busy(far) == busy(near)  # the same bytes at the same bandwidth
    # the phase ends when the last block issues its last instruction; its stores then cross
    # without PCIe's latency
    assert near.time_ps < learning.time_ps <= far.time_ps
    assert learning.time_ps == pytest.approx(far.time_ps, rel=0.01)


@pytest.mark.parametrize("cubes", [4, 8])
def test_no_link_is_busier_than_the_run_across_the_learning_phase(vadd, cubes):
    # the learning phase once slowed the GPU-stack links down and then freed them mid-packet,
    # which counted more busy time than the run had: a memory-to-GPU link was "105% busy"
    config = load_system_config(
        "tom-ndp", {"memory": {"cubes": cubes}, "ndp": {"learning_fraction": 0.5}}
    )
    result = _run(config, vadd)
    assert result.summary["offload"]["learning_us"] > 0
    for channel in result.summary["links"].values():
        assert 0 <= channel["utilization"] <= 1


def _learning_state(ends):
    """An offload state of len(ends) instances, all touching stack 0, in the learning phase
    with one instance wanted."""
    n = len(ends)
    control = np.zeros(ofl.CONTROL_FIELDS, dtype=np.int64)
    control[ofl.C_LEARNING] = 1
    control[ofl.C_LEARN_LEFT] = 1
    return ofl.no_offload()._replace(
        inst_end=np.asarray(ends, dtype=np.int64),
        inst_dest=np.zeros(n, dtype=np.int64),
        inst_home=np.full(n, -1, dtype=np.int64),
        control=control,
    )


def test_the_phase_ends_once_the_analyzer_has_seen_the_instances_it_wants_whole():
    # sec. 4.3: the analyzer watches every running instance and counts those it has seen; the
    # first to finish counts, not the first to start
    off = _learning_state([50, 10])
    ofl.observe(off, 0, 0)  # reached first, finishes last
    ofl.observe(off, 1, 1)
    ofl.observed_progress(off, 1, 9)  # instance 1 issues its last instruction
    assert ofl.learning_done(off)
    assert off.inst_home[1] == ofl.SEEN and off.inst_home[0] == 0
    ofl.observed_progress(off, 0, 49)  # the rest finish unseen and uncounted
    assert off.inst_home[0] == -1
    assert off.control[ofl.C_LEARN_RUNNING] == 0 and off.control[ofl.C_LEARN_LEFT] == 0


# ------------------------------------------------------------------------ the ideal system
def test_the_ideal_system_keeps_the_stack_sms_warp_limit_and_its_unbounded_twin_does_not(vadd):
    ideal = {"ideal": True, "control": False, "mapping": "baseline", "stack_warps": 1}
    bounded = _run(_ndp(**ideal, warp_limit=True), vadd)
    off = bounded.summary["offload"]
    assert off["declined_pending"] > 0 and off["waited_for_slot"] == 0
    unbounded = _run(_ndp(**ideal), vadd)
    off = unbounded.summary["offload"]
    assert off["declined_pending"] == 0 and off["waited_for_slot"] > 0


def test_the_reproduction_runs_the_ideal_with_the_warp_limit_and_names_the_unbounded_one():
    by_name = {
        v.name: v.overrides["ndp"] for v in tom_experiment.PAPER.variants() if "ndp" in v.overrides
    }
    assert by_name["ideal"]["ideal"] and by_name["ideal"]["warp_limit"]
    assert by_name["ideal-unbounded"]["ideal"] and not by_name["ideal-unbounded"]["warp_limit"]


# ------------------------------------------------------------------ what offloading costs
def test_a_warp_runs_its_block_up_to_the_first_memory_access_before_offloading_it(vadd):
    probing = _run(_ndp(control=False, mapping="baseline"), vadd).summary["offload"]
    told = _run(_ndp(control=False, mapping="baseline", run_to_first_access=False), vadd)
    told = told.summary["offload"]
    assert probing["offloaded"] == told["offloaded"] > 0
    # VADD's block starts with its parameter loads and index arithmetic: every offloaded
    # instance ran them on the GPU first
    assert probing["redundant_instructions"] >= 5 * probing["offloaded"]
    assert told["redundant_instructions"] == 0
    ideal = _run(_ndp(control=False, mapping="baseline", ideal=True), vadd)
    assert ideal.summary["offload"]["redundant_instructions"] == 0


def test_a_stack_sm_flushes_its_l1_before_each_offloaded_block(vadd):
    flushing = _run(_ndp(control=False, mapping="baseline"), vadd).summary["offload"]
    assert flushing["stack_l1_flushes"] == flushing["offloaded"] > 0
    kept = _run(_ndp(control=False, mapping="baseline", flush_stack_l1=False), vadd)
    assert kept.summary["offload"]["stack_l1_flushes"] == 0
    ideal = _run(_ndp(control=False, mapping="baseline", ideal=True), vadd)
    assert ideal.summary["offload"]["stack_l1_flushes"] == 0
