"""The worked examples of docs/extending.md, executed as written: a newcomer's offload policy
(one file, one registration line) and system kind (one folder, one registration), each then
put through the contract every shipped member passes; and plug-ins found by entry point."""

from __future__ import annotations

import re
import sys
import textwrap
from pathlib import Path

import pytest

from ndpsim import registry
from ndpsim.engine.timeline import Timeline
from ndpsim.errors import ConfigError
from ndpsim.hw.core.contract import CORES
from ndpsim.hw.topologies import CUBE_TOPOLOGIES
from ndpsim.policy.mapping import ADDRESS_MAPPINGS
from ndpsim.policy.offload import OFFLOAD_SCHEMES
from ndpsim.systems import (
    SYSTEM_KINDS,
    RunResult,
    System,
    load_system,
    load_system_config,
    run_system,
)
from tests.platform.test_contracts import _result, test_an_offload_scheme_meets_the_contract

DOC = Path(__file__).resolve().parents[2] / "docs" / "extending.md"
BLOCK = re.compile(r"^```(python|toml)\n(.*?)^```", re.S | re.M)


def _section(title: str) -> str:
    for part in re.split(r"^## ", DOC.read_text(), flags=re.M)[1:]:
        if part.startswith(title):
            return part
    raise AssertionError(f"docs/extending.md has no section {title!r}")


@pytest.fixture
def workdir(tmp_path, monkeypatch):
    """A directory on sys.path to write the example's files in, cleaned up after."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    before = set(sys.modules)
    yield tmp_path
    for name in set(sys.modules) - before:
        if (
            getattr(sys.modules[name], "__file__", "")
            and str(tmp_path) in sys.modules[name].__file__
        ):
            del sys.modules[name]


def _execute(title: str, where: Path) -> None:
    """Write the section's ``# file:`` blocks under ``where`` and run its other Python blocks,
    in order."""
    blocks = BLOCK.findall(_section(title))
    assert blocks
    for language, code in blocks:
        first = code.splitlines()[0]
        if first.startswith("# file: "):
            path = where / first.removeprefix("# file: ")
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(code)
        elif language == "python":
            exec(compile(code, f"{DOC}: {title}", "exec"), {"__name__": "docs_example"})


@pytest.fixture
def functional():
    from ndpsim.workloads import kernel_module, run_workload

    run = run_workload("bfs", "tiny", 0)
    return run, kernel_module(run.workload.module_name)


def test_adding_an_offload_policy(workdir, capsys, functional):
    try:
        _execute("Adding an offload policy", workdir)
        printed = capsys.readouterr().out
        assert int(printed.split()[0]) > 0  # "N blocks offloaded"
        assert "tom-majority" in OFFLOAD_SCHEMES.names()
        test_an_offload_scheme_meets_the_contract("tom-majority", functional)
        overrides = {"ndp": {"run_to_first_access": False}}
        tom = _result("tom-ndp", overrides, functional)
        mine = _result("tom-ndp", {"ndp": {**overrides["ndp"], "offload": "tom-majority"}},
                       functional)  # fmt: skip
        assert mine["summary"] != tom["summary"]  # the destinations moved
    finally:
        OFFLOAD_SCHEMES.unregister("tom-majority")


def test_adding_a_cube_topology(workdir, capsys):
    try:
        _execute("Adding a cube topology", workdir)
        assert capsys.readouterr().out.split()[0] == "2"  # 0 -> 1 -> 2 on a ring of 4
        assert "ring" in CUBE_TOPOLOGIES.names()
        with pytest.raises(ConfigError, match="unknown cube topology 'rign'; registered: "):
            load_system_config("tom-ndp", {"links": {"cube_topology": "rign"}})
    finally:
        CUBE_TOPOLOGIES.unregister("ring")


def test_adding_a_core_kind(workdir):
    from ndpsim.engine.clock import ClockDomain
    from ndpsim.hw.core.contract import CORES, place_cores

    try:
        _execute("Adding a core kind", workdir)
        config = load_system_config("tom-ndp")  # 4 stacks of 16 vaults
        cores = place_cores(["sm", "beside_each_channel"], config, ClockDomain("sm", 714))
        near = cores.groups[1]
        assert near.count == 4 * 16 * 4
        assert near.instance_labels()[:5] == [
            "stack0.ch0.0",
            "stack0.ch0.1",
            "stack0.ch0.2",
            "stack0.ch0.3",
            "stack0.ch1.0",
        ]
        assert near.placements[-1].reaches() == "the banks of channel 15 of stack 3"
        with pytest.raises(ConfigError, match="memory path takes requests only from units at "
                           "host, logic-layer"):  # fmt: skip
            place_cores(["sm", "beside_each_channel"], config, ClockDomain("sm", 714),
                        sites=("host", "logic-layer"))  # fmt: skip
    finally:
        for name in ("slow_stack_sm", "beside_each_channel"):
            if name in CORES.names():
                CORES.unregister(name)


def test_adding_a_system_kind(workdir, capsys, functional):
    try:
        _execute("Adding a system kind", workdir)
        assert "simulated time" in capsys.readouterr().out
        system = load_system("roofline-demo.toml")
        assert isinstance(system, System)
        run, module = functional
        first = system.run(run.traces, module, run.memory)
        assert isinstance(first, RunResult) and first.time_ps > 0
        again = load_system("roofline-demo.toml").run(run.traces, module, run.memory)
        assert (again.time_ps, again.summary) == (first.time_ps, first.summary)
        assert run_system(system, run.traces, module, run.memory).time_ps == first.time_ps
        with pytest.raises(ConfigError, match="'roofline' records no timeline"):
            run_system(system, run.traces, module, run.memory, timeline=Timeline())
        preset = workdir / "roofline-demo.toml"
        preset.write_text(preset.read_text().replace("sms = 68", "sms = 0"))
        with pytest.raises(ConfigError, match=r"'sms': .* \(line 4\)"):
            load_system_config(str(preset))
    finally:
        SYSTEM_KINDS.unregister("roofline")


def test_a_kind_on_the_skeleton(workdir, capsys, functional):
    """The near-bank kind of docs/extending.md: units beside the banks take a launch's CTAs,
    its runs are checked by the skeleton, deterministic, and a stepped run ends as an
    uninterrupted one."""
    try:
        _execute("Adding a system kind on the skeleton", workdir)
        assert "simulated time" in capsys.readouterr().out
        run, module = functional
        system = load_system("nearbank-demo.toml")
        assert isinstance(system, System)
        first = _result("nearbank-demo.toml", {}, functional)
        assert first == _result("nearbank-demo.toml", {}, functional)
        units = first["stats"]["near_bank_unit"]["instances"]  # one row per unit
        assert len(units) == system.cores.count == 2 * 16
        widest = max(trace.info.num_ctas for trace in run.traces)  # breadth-first over units
        assert sum(u["ctas"] > 0 for u in units.values()) == min(widest, len(units)) > 1
        assert first["stats"]["dram"]["total"]["reads"] > 0
        stepped = system.start(run.traces, module, run.memory)
        while not stepped.advance(events=5_000):
            pass
        again = stepped.result.as_dict()
        again.pop("wall_seconds")
        assert again == first
    finally:
        SYSTEM_KINDS.unregister("nearbank")
        CORES.unregister("near_bank_unit")


def test_an_installed_plug_in_registers_before_the_first_lookup(workdir, monkeypatch):
    (workdir / "my_mapping.py").write_text(textwrap.dedent('''
        from ndpsim.policy.mapping import ADDRESS_MAPPINGS
        from ndpsim.policy.mapping.interleaved import Interleaved

        ADDRESS_MAPPINGS.register("plugged")(type("Plugged", (Interleaved,), {}))
    '''))  # fmt: skip
    info = workdir / "my_study-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: my-study\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[ndpsim.plugins]\nplugged = my_mapping\n")
    monkeypatch.setattr(registry, "_plugins_loaded", False)
    try:
        assert "plugged" in ADDRESS_MAPPINGS
        assert load_system_config("gpu-baseline", {"memory": {"mapping": "plugged"}})
    finally:
        ADDRESS_MAPPINGS.unregister("plugged")


def test_a_plug_in_that_fails_to_import_is_named(workdir, monkeypatch):
    info = workdir / "broken-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: broken\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[ndpsim.plugins]\nbroken = no_such_module_here\n")
    monkeypatch.setattr(registry, "_plugins_loaded", False)
    with pytest.raises(ConfigError, match=r"plug-in 'broken' .*no_such_module_here.* failed"):
        ADDRESS_MAPPINGS.get("interleaved")


def test_the_readme_simulates_from_python_as_written():
    readme = DOC.parents[1] / "README.md"
    (code,) = [c for lang, c in BLOCK.findall(readme.read_text())
               if lang == "python" and "load_system" in c]  # fmt: skip
    namespace: dict = {}
    exec(compile(code, f"{readme}", "exec"), namespace)
    assert namespace["result"].time_ps > 0 and namespace["system"].config.sm.count == 32
