"""SNDP's reproduction metrics from synthetic run summaries: normalization to the baseline, the
means, the stacked parts, the offload and credit records, the JSON document and the variants."""

from __future__ import annotations

import json
import math

import pytest

from ndpsim.errors import ConfigError
from ndpsim.experiments.averages import averages
from ndpsim.experiments.papers import sndp
from ndpsim.experiments.results import claims
from ndpsim.reports.tables import figure_rows, split_rows


def run(time_ps, *, tx=1000, rx=3000, m2m=0, stalls=(10, 60, 30), energy=None, offload=None):
    """A run record as the runner returns it, with only the keys the metrics read."""
    summary = {
        "time_us": time_ps / 1e6,
        "links": {"gpu_to_memory": {"bytes": tx, "gbps": 0.0, "utilization": 0.0},
                  "memory_to_gpu": {"bytes": rx, "gbps": 0.0, "utilization": 0.0},
                  "memory_to_memory": {"bytes": m2m, "gbps": 0.0, "utilization": 0.0}},
        "l2_hit_rate": 0.5,
        "stall_breakdown": dict(zip(("unit_busy", "dependency", "idle"), stalls, strict=True)),
    }  # fmt: skip
    if offload is not None:
        summary["offload"] = offload
    energy = energy or {"sm": 60.0, "caches": 10.0, "crossbar": 5.0, "links": 10.0, "dram": 15.0}
    energy_nj = {**energy, "total": sum(energy.values())}
    return {"time_ps": time_ps, "summary": summary, "energy_nj": energy_nj, "wall_seconds": 0.1}


def offload(fraction=0.5, credits=None):
    return {
        "instances": 100,
        "offloaded": round(100 * fraction),
        "offloaded_fraction": fraction,
        "offloaded_instruction_fraction": fraction / 2,
        "rdf_hit_rate": 0.25,
        "ratio_timeline": [[0.0, 0.1], [1.0, 0.25]],
        "ratio_mean": 0.125,  # what the run computed from the timeline (tests/systems)
        "credits": credits if credits is not None else {
            "command": {"most_reserved": 10, "capacity": 10},
            "read_data": {"most_reserved": 128, "capacity": 256},
            "write_address": {"most_reserved": 64, "capacity": 256},
            "overdrawn": 0,
        },
    }  # fmt: skip


@pytest.fixture
def runs():
    """Two workloads; the naive system is twice as slow on one and as fast on the other."""
    naive_energy = {"sm": 50.0, "caches": 8.0, "crossbar": 4.0, "links": 14.0, "dram": 12.0,
                    "nsu": 2.0}  # fmt: skip
    return {
        "vadd": {
            "baseline": run(1000),
            "naive": run(2000, tx=500, rx=1000, m2m=2500, stalls=(5, 40, 155),
                         energy=naive_energy, offload=offload(1.0)),
            "ratio-0.2": run(800, offload=offload(0.2)),
            "ratio-0.4": run(900, offload=offload(0.4)),
            "dyn": run(850, m2m=400, offload=offload(0.3)),
        },
        "km": {
            "baseline": run(4000),
            "naive": run(4000, m2m=100, offload=offload(1.0)),
            "ratio-0.2": run(5000, offload=offload(0.2)),
            "ratio-0.4": run(2000, offload=offload(0.4)),
            "dyn": run(2500, offload=offload(0.3)),
        },
    }  # fmt: skip


def test_speedups_are_normalized_to_the_baseline_of_the_same_workload(runs):
    m = sndp.metrics(runs)
    assert m["baseline"]["vadd"]["speedup"] == 1.0
    assert m["naive"]["vadd"]["speedup"] == 0.5
    assert m["naive"]["km"]["speedup"] == 1.0
    assert m["ratio-0.4"]["km"]["speedup"] == 2.0


def test_no_issue_cycles_are_split_by_cause_over_the_baselines_total(runs):
    m = sndp.metrics(runs)
    assert m["baseline"]["vadd"]["stall"] == pytest.approx(1.0)
    naive = m["naive"]["vadd"]
    assert naive["stall"] == pytest.approx(2.0)
    assert naive["stall_idle"] == pytest.approx(1.55)
    parts = naive["stall_unit_busy"] + naive["stall_dependency"] + naive["stall_idle"]
    assert parts == pytest.approx(naive["stall"])


def test_energy_groups_add_up_to_the_total_and_keep_the_nsu_apart(runs):
    naive = sndp.metrics(runs)["naive"]["vadd"]
    assert naive["energy"] == pytest.approx(0.9)
    assert naive["energy_sm"] == pytest.approx(0.62)  # SMs, caches and crossbar
    assert naive["energy_nsu"] == pytest.approx(0.02)
    assert sum(naive[p] for p in sndp.ENERGY_PARTS if p in naive) == pytest.approx(0.9)


def test_an_energy_component_no_group_names_is_counted_as_other():
    energy = {"sm": 1.0, "caches": 0.0, "crossbar": 0.0, "links": 1.0, "dram": 1.0, "tsv": 1.0}
    m = sndp.metrics({"w": {"baseline": run(10, energy=energy)}})["baseline"]["w"]
    assert m["energy_other"] == pytest.approx(0.25)
    assert sum(m[p] for p in sndp.ENERGY_PARTS if p in m) == pytest.approx(1.0)


def test_traffic_channels_add_up_and_the_memory_network_is_reported_in_megabytes(runs):
    naive = sndp.metrics(runs)["naive"]["vadd"]
    assert naive["traffic"] == pytest.approx(1.0)  # 4000 bytes, as the baseline's
    assert naive["traffic_gpu"] == pytest.approx(naive["traffic_tx"] + naive["traffic_rx"])
    assert naive["traffic_memory_to_memory"] == pytest.approx(2500 / 4000)
    assert naive["memory_to_memory_mb"] == pytest.approx(0.0025)


def test_offload_records_become_fractions_ratio_means_and_credit_peaks(runs):
    dyn = sndp.metrics(runs)["dyn"]["vadd"]
    assert dyn["offloaded_instance_fraction"] == 0.3
    assert dyn["offloaded_instruction_fraction"] == 0.15
    assert dyn["offload_ratio_mean"] == 0.125  # the run's own figure, not computed again
    assert dyn["offload_ratio_final"] == 0.25  # the timeline's last point
    assert dyn["credits_peak_read_data"] == 0.5
    assert dyn["credits_peak_command"] == 1.0
    assert dyn["credits_overdrawn"] == 0
    assert dyn["rdf_hit_rate"] == 0.25
    assert "offloaded_instance_fraction" not in sndp.metrics(runs)["baseline"]["vadd"]


def test_missing_offload_keys_leave_their_metrics_out():
    r = run(10, offload={"instances": 5})
    m = sndp.metrics({"w": {"baseline": run(10), "naive": r}})["naive"]["w"]
    assert m["speedup"] == 1.0
    assert not any(k.startswith(("offload", "credits")) for k in m)


def test_best_static_is_the_fastest_ratio_per_workload(runs):
    best = sndp.metrics(runs)[sndp.BEST_STATIC]
    assert best["vadd"] == {"speedup": 1.25, "best_ratio": 0.2}
    assert best["km"] == {"speedup": 2.0, "best_ratio": 0.4}


def test_speedups_average_geometrically_and_everything_else_arithmetically(runs):
    avg = averages(sndp.metrics(runs))
    assert avg["naive"]["speedup"] == pytest.approx(math.sqrt(0.5 * 1.0))
    naive = sndp.metrics(runs)["naive"]
    assert avg["naive"]["stall"] == pytest.approx((naive["vadd"]["stall"]
                                                   + naive["km"]["stall"]) / 2)  # fmt: skip


def test_the_document_has_tom_s_shape_and_survives_json(runs):
    doc = sndp.document(runs, "tiny", 3, {"nsu_mhz": 350, "target": "first"})
    doc = json.loads(json.dumps(doc))
    for name in ("baseline", "naive", "ratio-0.2", "ratio-0.4", "dyn", sndp.BEST_STATIC):
        assert set(doc[name]) == {"vadd", "km"}
        assert "speedup" in doc["average"][name]
    assert "dyn-cache" not in doc  # variants that did not run are left out
    assert doc["mean"]["speedup"].startswith("geometric")
    # two of the paper's ten workloads: its averages over all ten are not shown beside ours
    assert doc["paper"]["average"] == {}
    assert doc["meta"]["experiment"] == "sndp"
    assert doc["meta"]["workloads"] == ["vadd", "km"]
    assert doc["meta"]["variants"] == ["baseline", "naive", "ratio-0.2", "ratio-0.4", "dyn"]
    assert doc["meta"]["switches"] == {"nsu_mhz": 350, "target": "first"}
    assert doc["ratio_timeline"]["dyn"]["km"] == [[0.0, 0.1], [1.0, 0.25]]
    every = {w: runs["vadd"] for w in sndp.PAPER.workloads}
    whole = sndp.document(every, "tiny", 3, {"nsu_mhz": 350, "target": "first"})
    assert whole["paper"]["average"]["speedup"]["dyn-cache"] == 1.179
    assert doc["credits"]["naive"]["vadd"]["overdrawn"] == 0


def test_at_175_mhz_the_paper_column_is_the_175_mhz_result(runs):
    every = {w: runs["vadd"] for w in sndp.PAPER.workloads}
    doc = sndp.document(every, "tiny", 0, {"nsu_mhz": 175, "target": "first"})
    assert doc["paper"]["average"] == {"speedup": {"dyn-cache": 1.141}}
    assert doc["paper"]["workloads"]["speedup"]["km"]["dyn-cache"] == 1.677


def test_tables_name_workloads_as_the_paper_does(runs):
    doc = sndp.document(runs, "tiny", 0, {"nsu_mhz": 350})
    rows = figure_rows(doc, "speedup", ["naive"], sndp.PAPER_AVERAGES["speedup"],
                       sndp.PAPER_NAMES)  # fmt: skip
    assert [label for label, _ in rows] == ["VADD", "KMN", "average (ours)", "average (paper)"]
    assert rows[-1][1] == [0.48]


def test_split_credit_and_claim_rows_come_from_the_document(runs):
    doc = sndp.document(runs, "tiny", 0, {"nsu_mhz": 350})
    split = dict(split_rows(doc, ["baseline", "naive"], ["stall_idle"], "stall"))
    assert split["baseline"] == [pytest.approx(0.3), pytest.approx(1.0)]
    columns, rows = sndp.credit_rows(doc)
    assert columns[-1] == "overdrawn" and "read_data (max used)" in columns
    assert [name for name, _ in rows] == ["naive", "ratio-0.2", "ratio-0.4", "dyn"]
    stated = {what: (ours, paper) for what, ours, paper in claims(sndp.PAPER, doc)}
    assert stated["KMN dyn speedup"] == (1.6, 1.668)
    assert stated["KMN best-static speedup"] == (2.0, 1.636)
    assert stated["VADD dyn speedup"] == (1000 / 850, 1.249)
    assert stated["naive: best speedup (paper: every workload below)"] == (1.0, 1.0)
    assert not any(what.startswith("STN") for what in stated)  # STN did not run


def test_variants_carry_the_config_contract():
    by_name = {v.name: v for v in sndp.PAPER.variants(nsu_mhz=175, target="optimal")}
    assert tuple(by_name) == sndp.VARIANT_NAMES
    assert by_name["baseline"].preset == "sndp-baseline" and by_name["baseline"].overrides == {}
    assert by_name["baseline-morecore"].overrides == {"sm": {"count": 72}}
    ndp = {"nsu_clock_ghz": 0.175, "target": "optimal"}
    assert by_name["naive"].overrides == {"ndp": {"decision": "always", **ndp}}
    assert by_name["ratio-0.6"].overrides == {"ndp": {"decision": "ratio", "ratio": 0.6, **ndp}}
    assert by_name["dyn"].overrides == {"ndp": {"decision": "dynamic", **ndp}}
    assert by_name["dyn-cache"].overrides == {
        "ndp": {"decision": "dynamic", "cache_aware": True, **ndp}
    }
    assert all(v.preset == "sndp-ndp" for n, v in by_name.items() if n in sndp.NDP_NAMES)


def test_a_subset_of_variants_keeps_the_canonical_order():
    names = [v.name for v in sndp.PAPER.variants(names=["dyn", "baseline", "naive"])]
    assert names == ["baseline", "naive", "dyn"]


@pytest.mark.parametrize("kwargs", [{"nsu_mhz": 200}, {"target": "best"},
                                    {"names": ["baseline", "ratio-0.3"]}])  # fmt: skip
def test_bad_switches_name_what_was_expected(kwargs):
    with pytest.raises(ConfigError, match=r"350|first|ratio-0\.3"):
        sndp.PAPER.variants(**kwargs)
