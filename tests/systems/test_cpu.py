"""The ``cpu`` kind: the suite's programs on a host of CPU cores, each launch's CTAs spread over
the cores, with the caches' coherence and the DRAM behind them, DDR channels or 3D stacks over
SerDes links (issue 49)."""

from __future__ import annotations

import pytest

from ndpsim.errors import ConfigError
from ndpsim.sweeps.sweep import prepare
from ndpsim.systems import load_system, run_programs_on
from ndpsim.systems.skeleton.program import Program
from ndpsim.trace.cpu_threads import cpu_program
from ndpsim.workloads import kernel_module, run_workload


def _run(workload: str, overrides: dict | None = None, preset: str = "cpu-baseline"):
    functional = run_workload(workload, "tiny", 0)
    module = kernel_module(functional.workload.module_name)
    system = load_system(preset, overrides or {})
    result = system.run(functional.traces, module, functional.memory)
    return functional, module, result


def _caches(result) -> dict:
    return result.as_dict()["stats"]["caches"]["total"]


@pytest.mark.parametrize("workload", ["vadd", "hist", "pr", "bfs"])
def test_every_instruction_of_every_cpu_thread_retires(workload):
    functional, module, result = _run(workload)
    launches = cpu_program(functional.traces, module, 8)
    assert result.summary["warp_instructions"] == sum(x.instruction_count for x in launches)
    assert len(result.summary["ipc_per_core"]) == 8
    assert result.energy["total"] > 0 and result.energy["caches"] > 0


def test_lines_written_by_one_core_and_read_by_another_are_counted_by_the_directory():
    # BFS's cores write the frontier and visited flags other cores read
    _, _, result = _run("bfs")
    coherence = result.summary["coherence"]
    assert coherence["invalidations"] > 0 and coherence["downgrades"] > 0


def test_an_in_order_core_is_slower_than_an_out_of_order_one():
    _, _, out_of_order = _run("gemv")
    _, _, in_order = _run("gemv", {"cores": {"kind": "cpu_inorder", "width": 1}})
    assert in_order.summary["warp_instructions"] == out_of_order.summary["warp_instructions"]
    assert in_order.time_ps > 1.5 * out_of_order.time_ps


def test_the_prefetcher_reads_ahead_of_a_stream():
    _, _, plain = _run("vadd", {"caches": {"prefetch_degree": 0}})
    _, _, ahead = _run("vadd")
    assert _caches(plain)["prefetches"] == 0 < _caches(ahead)["prefetches"]
    assert ahead.time_ps < plain.time_ps


def test_more_cores_than_a_directory_tracks_are_refused():
    with pytest.raises(ConfigError, match=r"cores\.count"):
        load_system("cpu-baseline", {"cores": {"count": 64}})


def test_a_sweep_over_a_cpu_host_stores_its_runs(tmp_path):
    study = {
        "name": "cpu",
        "systems": ["cpu-baseline"],
        "workloads": ["vadd"],
        "sizes": ["tiny"],
        "counters": ["core_cycles", "summary.hit_rates", "energy_nj.total"],
        "grid": {"caches.prefetch_degree": [0, 2]},
    }
    sweep = prepare(study, tmp_path)
    assert sweep.run(jobs=1) == []
    rows = sweep.store.query('SELECT "caches.prefetch_degree" AS d, core_cycles FROM runs '
                             "ORDER BY d").to_pylist()  # fmt: skip
    assert [r["d"] for r in rows] == [0, 2]
    assert rows[1]["core_cycles"] < rows[0]["core_cycles"]  # the prefetcher helps a stream


def _link_totals(result) -> dict:
    return result.as_dict()["stats"]["links"]["total"]


def test_an_hmc_host_reads_memory_over_its_links():
    _, _, result = _run("vadd", preset="cpu-hmc")
    links, dram = _link_totals(result), result.summary
    header, line = 16, 128  # cpu-hmc's packet header; ndpsim's memory line
    # every DRAM read: a request down the links and its line back up; every write-back down
    # with its line, acknowledged
    assert links["read_request_packets"] == links["read_data_packets"] == dram["dram_reads"]
    assert links["read_data_bytes"] == dram["dram_reads"] * (header + line)
    assert links["write_request_packets"] == links["write_ack_packets"] == dram["dram_writes"]
    assert result.summary["links"]["memory_to_cpu"]["bytes"] > 0
    assert result.energy["links"] > 0 and result.energy["tsv"] > 0


def test_narrower_links_slow_an_hmc_host_down():
    _, _, wide = _run("vadd", preset="cpu-hmc")
    narrow_links = {"links": {"host_to_cube_gbps": 4, "cube_to_host_gbps": 4}}
    _, _, narrow = _run("vadd", narrow_links, preset="cpu-hmc")
    assert narrow.summary["dram_reads"] == wide.summary["dram_reads"]
    assert narrow.time_ps > 1.5 * wide.time_ps
    assert narrow.summary["links"]["memory_to_cpu"]["utilization"] > 0.9


def test_an_hmc_host_spreads_its_lines_over_several_cubes():
    _, _, result = _run("vadd", {"memory": {"cubes": 2}}, preset="cpu-hmc")
    stats = result.as_dict()["stats"]
    assert len(stats["dram"]["instances"]) == 2 * 32  # both cubes' vaults
    for cube in (0, 1):  # each cube's link carries requests down and data up
        assert stats["links"]["instances"][f"cpu->cube{cube}"]["read_request_packets"] > 0
        assert stats["links"]["instances"][f"cube{cube}->cpu"]["read_data_packets"] > 0


def test_cubes_without_links_are_refused():
    with pytest.raises(ConfigError, match="links"):
        load_system("cpu-baseline", {"memory": {"cubes": 2}})


def _program(workload: str, name: str | None = None) -> Program:
    functional = run_workload(workload, "tiny", 0)
    return Program(name or workload, functional.traces,
                   kernel_module(functional.workload.module_name), functional.memory)  # fmt: skip


def test_several_programs_run_at_once_each_on_its_own_cores():
    vadd, bfs = _program("vadd"), _program("bfs")
    result = run_programs_on(load_system("cpu-baseline"), [vadd, bfs])
    programs = result.summary["programs"]
    for program in (vadd, bfs):
        mine = programs[program.name]
        assert mine["cores"] == 4 and mine["launches"] == len(program.traces)
        assert mine["instructions"] == sum(t.num_thread_instructions for t in program.traces)
        assert result.stats["programs"][program.name]["instructions"] == mine["instructions"]
    assert result.kernels == len(vadd.traces) + len(bfs.traces)
    # the run ends with its last program (BFS's 16 launches)
    assert programs["bfs"]["time_us"] == result.time_ps / 1e6 > programs["vadd"]["time_us"]


def test_programs_run_at_once_have_address_spaces_of_their_own():
    vadd = _program("vadd")
    one = load_system("cpu-baseline").run(vadd.traces, vadd.module, vadd.memory)
    two = run_programs_on(load_system("cpu-baseline"),
                          [_program("vadd", "first"), _program("vadd", "second")])  # fmt: skip
    # the same program twice reads its data twice: neither finds the other's in the LLC
    assert two.summary["dram_reads"] >= 1.9 * one.summary["dram_reads"]


def test_more_programs_than_cores_are_refused():
    with pytest.raises(ConfigError, match="9 programs"):
        run_programs_on(load_system("cpu-baseline"), [_program("vadd", f"p{k}") for k in range(9)])
