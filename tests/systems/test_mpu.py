"""MPU's near-bank SIMT processors (the ``mpu`` kind): every workload of the paper's Table I runs
with its invariants checked, and the hybrid pipeline places work and moves data as sec. IV-B
says."""

from __future__ import annotations

import numpy as np
import pytest

from ndpsim.errors import ConfigError
from ndpsim.hw import link
from ndpsim.policy.location import FAR, LOCATION_POLICIES, NEAR, NO_HINT
from ndpsim.systems import load_system
from ndpsim.workloads import kernel_module, run_workload

#: MPU's Table I in ndpsim's workloads.
TABLE_I = ("blur", "conv", "gemv", "hist", "kmeans", "knn", "ttrans", "maxp", "nw", "upsamp",
           "axpy", "pr")  # fmt: skip

#: One core with one subcore and its NBU: every access is local, and a full warp's consecutive
#: lines all sit in the warp's NBU.
ONE_CORE = {
    "processors": {"columns": 1, "rows": 1, "core_columns": 1, "core_rows": 1, "subcores": 1},
    "core": {"schedulers": 1},
    "memory": {"dram_overrides": {"organization": {"channels": 1}}},
}


def _run(workload: str, overrides: dict | None = None, preset: str = "mpu"):
    functional = run_workload(workload, "tiny", 0)
    system = load_system(preset, overrides or {})
    return system.run(functional.traces, kernel_module(functional.workload.module_name),
                      functional.memory)  # fmt: skip


def _counters(result, group: str) -> dict:
    return result.as_dict()["stats"][group]["total"]


def _tsv_bytes(result, traffic: int) -> int:
    """Bytes of one traffic class on every core's TSV bus."""
    links = result.as_dict()["stats"]["links"]
    rows = links.get("instances", {"core0-tsv": links["total"]})  # one link: the TSV bus
    name = f"{link.CLASS_NAMES[traffic]}_bytes"
    return sum(row[name] for label, row in rows.items() if label.endswith("-tsv"))


@pytest.mark.parametrize("workload", TABLE_I)
def test_every_table_i_workload_runs_on_mpu_with_its_invariants_checked(workload):
    functional = run_workload(workload, "tiny", 0)
    result = _run(workload)
    assert result.time_ps > 0
    assert result.summary["warp_instructions"] == sum(
        t.num_warp_instructions for t in functional.traces)  # fmt: skip
    core = _counters(result, "mpu_core")
    nbu = _counters(result, "mpu_nbu")
    assert core["far_instructions"] + nbu["near_instructions"] + core["barriers"] == (
        core["warp_instructions"])  # fmt: skip


def test_an_access_sent_whole_moves_no_dram_data_over_the_tsvs():
    result = _run("axpy", ONE_CORE)
    nbu, core = _counters(result, "mpu_nbu"), _counters(result, "mpu_core")
    assert nbu["whole_accesses"] > 0 and core["remote_transactions"] == 0
    # DRAM data crosses the TSVs only for the accesses that went per transaction (a 32-byte
    # bank I/O unit at least, with its header) and for their registers written back near
    assert _tsv_bytes(result, link.READ_DATA) <= (
        core["local_transactions"] * (8 + 128) + core["register_writebacks"] * 128)  # fmt: skip
    pon_b = _run("axpy", {**ONE_CORE, "pipeline": {"near_bank": False}})
    assert _counters(pon_b, "mpu_nbu")["whole_accesses"] == 0
    assert _tsv_bytes(pon_b, link.READ_DATA) > _tsv_bytes(result, link.READ_DATA)


def test_pon_b_runs_every_instruction_on_the_base_die():
    result = _run("axpy", {"pipeline": {"near_bank": False}})
    nbu = _counters(result, "mpu_nbu")
    assert nbu["near_instructions"] == 0 and result.summary["near_bank_share"] == 0
    assert _counters(result, "mpu_core")["register_moves_to_near"] == 0


def test_all_far_runs_near_only_the_shared_memory_the_hardware_puts_there():
    result = _run("pr", {"pipeline": {"locations": "all-far"}})
    nbu = _counters(result, "mpu_nbu")
    assert nbu["near_shared_accesses"] > 0
    assert nbu["near_instructions"] == nbu["near_shared_accesses"]


def test_all_near_runs_more_near_than_the_annotation():
    near = _counters(_run("gemv", {"pipeline": {"locations": "all-near"}}), "mpu_nbu")
    annotated = _counters(_run("gemv"), "mpu_nbu")
    assert near["near_instructions"] > annotated["near_instructions"]


def test_far_bank_shared_memory_keeps_shared_accesses_on_the_base_die():
    far = _run("pr", {"pipeline": {"shared_memory": "far"}})
    near = _run("pr")
    assert _counters(far, "mpu_nbu")["near_shared_accesses"] == 0
    assert _counters(near, "mpu_nbu")["near_shared_accesses"] == (
        _counters(near, "mpu_core")["shared_accesses"])  # fmt: skip


def test_a_register_moves_only_to_where_it_has_no_copy():
    """Every move is one register of one warp crossing the TSVs; with everything on the base
    die nothing has a near copy to move."""
    result = _run("gemv")
    core = _counters(result, "mpu_core")
    moves = core["register_moves_to_far"] + core["register_moves_to_near"]
    assert moves > 0
    assert _counters(_run("gemv", {"pipeline": {"near_bank": False}}), "mpu_core")[
        "register_moves_to_far"] == 0  # fmt: skip


def test_stepping_an_mpu_run_changes_nothing():
    functional = run_workload("hist", "tiny", 0)
    system = load_system("mpu")
    module = kernel_module(functional.workload.module_name)
    whole = system.run(functional.traces, module, functional.memory).as_dict()
    stepped = system.start(functional.traces, module, functional.memory)
    while not stepped.advance(events=700):
        pass
    result = stepped.finish().as_dict()
    for document in (whole, result):
        document.pop("wall_seconds")
    assert result == whole


def test_every_location_policy_hints_every_instruction():
    module = kernel_module(run_workload("gemv", "tiny", 0).workload.module_name)
    function = module.kernels[0]
    assert set(LOCATION_POLICIES.names()) == {"annotation", "hardware", "all-near", "all-far"}
    for name in LOCATION_POLICIES.names():
        hints = LOCATION_POLICIES.get(name)().hints(function)
        assert hints.shape == (len(function.instructions),)
        assert set(np.unique(hints)) <= {NO_HINT, NEAR, FAR}


def test_an_mpu_preset_needs_one_dram_channel_per_near_bank_unit():
    with pytest.raises(ConfigError, match="one per near-bank unit"):
        load_system("mpu", {"processors": {"subcores": 2}, "core": {"schedulers": 2}})
    with pytest.raises(ConfigError, match="schedulers"):
        load_system("mpu", {"core": {"schedulers": 2}})


def test_a_remote_cache_serves_repeated_remote_loads_without_the_mesh():
    # every CTA of GEMV reads all of x, which sits in a few cores' banks
    plain = _counters(_run("gemv"), "mpu_core")
    cached_result = _run("gemv", {"pipeline": {"remote_cache_bytes": 32768}})
    cached = _counters(cached_result, "mpu_core")
    assert plain["remote_cache_hits"] == 0 and cached["remote_cache_hits"] > 0
    assert cached["remote_transactions"] + cached["remote_cache_hits"] == (
        plain["remote_transactions"])  # fmt: skip
    dram = cached_result.as_dict()["stats"]["dram"]["total"]
    assert dram["reads"] + dram["writes"] == (
        cached["line_transactions"] - cached["remote_cache_hits"]
    )


def test_a_remote_cache_must_hold_whole_lines():
    with pytest.raises(ConfigError, match="remote_cache_bytes"):
        load_system("mpu", {"pipeline": {"remote_cache_bytes": 1000}})
