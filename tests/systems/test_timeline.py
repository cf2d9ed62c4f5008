"""A GPU run's timeline: it changes nothing the run measures, its windows add up to the run's
counters, and the file it writes is a valid trace-event file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ndpsim.engine.timeline import Timeline
from ndpsim.policy.sndp_ratio import INITIAL_RATIO
from ndpsim.systems import load_system, system_preset_names
from ndpsim.workloads import kernel_module, run_workload
from tests.platform.test_extending import BLOCK
from tests.systems.goldens import GOLDEN_FILE, digest_of
from tests.trace_events import problems

ROOT = Path(__file__).resolve().parents[2]
GOLDENS = json.loads(GOLDEN_FILE.read_text())


def _run(system: str, workload: str, timeline: Timeline, overrides: dict | None = None):
    functional = run_workload(workload, "tiny", 0)
    return load_system(system, overrides).run(functional.traces,
                                              kernel_module(functional.workload.module_name),
                                              functional.memory, seed=0,
                                              timeline=timeline)  # fmt: skip


@pytest.mark.parametrize("system", system_preset_names())
def test_a_timeline_changes_nothing_and_adds_up_to_the_run(system):
    timeline = Timeline(window_ps=50_000)
    result = _run(system, "bfs", timeline)
    assert digest_of(result) == GOLDENS[f"{system}/bfs"], "the timeline changed the run"
    stats = result.as_dict()["stats"]
    kinds = ("sm", "stack_sm", "nsu", "mpu_core")  # the SIMT units of every shipped kind
    counters = ("clocks", "warp_instructions")
    if "cpu_ooo" in stats or "cpu_inorder" in stats:  # CPU cores
        kinds, counters = ("cpu_ooo", "cpu_inorder"), ("cycles", "instructions")
    processors = [stats[k] for k in kinds if k in stats]
    sms = timeline.totals("SMs" if "sm" in stats else "cores")
    for counter in counters:
        want = sum(p["total"][counter] for p in processors)
        assert sum(sm[counter] for sm in sms.values()) == want > 0
    channels = timeline.totals("DRAM channels")
    for counter in ("reads", "writes", "row_hits", "row_misses", "row_conflicts"):
        want = [c[counter] for c in stats["dram"]["instances"].values()]
        assert [c[counter] for c in channels.values()] == want
    if "links" in stats:  # a CPU host with DDR main memory has none
        links = timeline.totals("links")
        busy = stats["link_busy"]["instances"]
        assert {label: link["busy_ps"] for label, link in links.items() if label in busy} == {
            label: link["busy_ps"] for label, link in busy.items()
        }
        moved = {label: sum(v for k, v in link.items() if k.endswith("_bytes"))
                 for label, link in stats["links"]["instances"].items()}  # fmt: skip
        assert {label: link["bytes"] for label, link in links.items() if label in moved} == moved
    if "offload" in stats:
        offloaded = sum(c["offloaded"] for c in timeline.totals("offloading").values())
        assert offloaded == stats["offload"]["total"]["offloaded"]
    assert not problems(timeline.document())


def test_an_sndp_timeline_shows_its_offload_ratio_and_a_tom_one_its_learned_mapping():
    sndp = Timeline(window_ps=50_000)
    _run("sndp-ndp", "bfs", sndp, {"ndp": {"decision": "dynamic", "epoch_cycles": 2000}})
    ratios = [e["args"]["ratio"] for e in sndp.events()
              if e["ph"] == "C" and e["name"] == "offload ratio"]  # fmt: skip
    assert ratios[0] == INITIAL_RATIO and len(ratios) > 3  # Algorithm 1 moved it
    assert all(0 < r < 1 for r in ratios[:-1]) and ratios[-1] == 0  # the end
    tom = Timeline(window_ps=50_000)
    _run("tom-ndp", "vadd", tom)
    marks = [e for e in tom.events() if e["ph"] == "i"]
    assert [m["name"] for m in marks] == ["launch 0: vadd", "TOM's learned mapping chosen"]
    assert marks[1]["args"]["stack_bit"] >= 0


def test_a_long_run_keeps_its_timeline_within_the_bound():
    timeline = Timeline(window_ps=1_000, max_events=20_000)
    _run("gpu-baseline", "bfs", timeline)
    tracks = sum(1 for e in timeline.events() if e["name"] == "process_sort_index")
    counters = [e for e in timeline.events() if e["ph"] == "C"]
    assert timeline.window_ps > 1_000  # it coarsened
    assert len(counters) <= 20_000 + 400  # the bound, and an end event per track
    assert tracks == 3  # SMs, links, DRAM channels: no offloading without stack processors


def test_the_timeline_document_runs_as_written(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    text = (ROOT / "docs" / "timelines.md").read_text()
    (code,) = [c for language, c in BLOCK.findall(text) if language == "python"]
    namespace: dict = {}
    exec(compile(code, "docs/timelines.md", "exec"), namespace)
    assert namespace["result"].time_ps > 0
    assert not problems(json.loads((tmp_path / "vadd.json").read_text()))
