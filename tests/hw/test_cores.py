"""The core contract: kinds placed in groups (host kinds first), each unit's clock, slots and
placement from its kind (on the host, several in a stack's logic layer, beside a channel's or a
bank group's banks), labels by group and place, refusals of what a system cannot run; and a
kind registered in a test drives the compiled model (its units' clock and counters) when an
offload scheme names it as its stack processor."""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
import pytest

from ndpsim.engine.clock import ClockDomain
from ndpsim.errors import ConfigError
from ndpsim.hw.core import contract
from ndpsim.hw.core.contract import (
    BANKS,
    CORES,
    LOGIC_LAYER,
    CoreKind,
    Placement,
    place_cores,
)
from ndpsim.hw.core.stack_processor import StackProcessor
from ndpsim.policy.offload.tom import Tom
from ndpsim.systems import load_system, load_system_config, system_preset_names
from ndpsim.workloads import kernel_module, run_workload

HOST = ClockDomain.from_ghz("sm", 1.4)


@pytest.fixture
def registered():
    """Register kinds for one test and forget them after it."""
    names = []

    def register(name, kind):
        CORES.register(name)(kind)
        names.append(name)

    yield register
    for name in names:
        CORES.unregister(name)


def test_host_kinds_come_first_and_every_unit_knows_its_clock_slots_and_stack():
    config = load_system_config("sndp-ndp")
    host = ClockDomain.from_ghz("sm", config.sm.clock_ghz)
    cores = place_cores(["nsu", "sm"], config, host)
    assert [g.name for g in cores.groups] == ["sm", "nsu"]
    gpu, nsu = cores.groups
    assert (gpu.first, gpu.count, nsu.first, nsu.count) == (0, 64, 64, 8)
    assert cores.host_units == 64 and cores.count == 72
    period, slots, stack = cores.period_ps(), cores.slots(), cores.stack()
    assert (period[:64] == host.period_ps).all()
    assert (period[64:] == ClockDomain.from_ghz("nsu", 0.35).period_ps).all()  # Table 2
    assert (slots[:64] == config.sm.warps).all() and (slots[64:] == 48).all()
    np.testing.assert_array_equal(stack, [-1] * 64 + list(range(8)))
    np.testing.assert_array_equal(cores.logic_layer_units(8), np.arange(64, 72)[:, None])
    assert (cores.channel() == -1).all()
    assert [cores.label(u) for u in (0, 63, 64, 71)] == ["sm0", "sm63", "nsu0", "nsu7"]
    assert gpu.instance_labels() is None
    assert nsu.instance_labels() == [f"stack{k}" for k in range(8)]


def test_every_registered_kind_builds_from_a_shipped_preset():
    systems = [load_system(p) for p in system_preset_names()]
    for name in CORES.names():
        kind = CORES.get(name)()
        assert isinstance(kind, CoreKind) and kind.stat_names
        config = next(s.config for s in systems if name in [g.name for g in s.cores.groups])
        cores = place_cores([name], config, HOST, models=(kind.model,))
        assert cores.count == kind.units(config) > 0
        assert (cores.slots() == kind.warp_slots(config)).all()


def test_a_kind_on_a_model_the_system_does_not_run_is_refused(registered):
    class CpuCore(CoreKind):
        model: ClassVar[str] = "out-of-order"
        stat_names = ("instructions",)

        def units(self, config: Any) -> int:
            return 4

        def warp_slots(self, config: Any) -> int:
            return 1

    registered("test_cpu", CpuCore)
    with pytest.raises(ConfigError, match="'test_cpu' runs on the 'out-of-order' model"):
        place_cores(["sm", "test_cpu"], load_system_config("gpu-baseline"), HOST)


class _BesideChannels(CoreKind):
    """A unit beside the banks of every channel of every cube (MPU's near-bank units' place),
    or of every bank group of them (``groups`` per channel)."""

    site = BANKS
    stat_names = ("instructions",)
    groups = 1

    def units(self, config: Any) -> int:
        return config.memory.cubes * 2 * self.groups

    def warp_slots(self, config: Any) -> int:
        return 4

    def place(self, unit: int, config: Any) -> Placement:
        group = unit % self.groups if self.groups > 1 else -1
        channel = unit // self.groups
        return Placement(BANKS, stack=channel // 2, channel=channel % 2, bank_group=group)


class _BesideBankGroups(_BesideChannels):
    groups = 4


class _ThreePerStack(StackProcessor):
    def units(self, config: Any) -> int:
        return 3 * config.memory.cubes

    def place(self, unit: int, config: Any) -> Placement:
        return Placement(LOGIC_LAYER, stack=unit // 3)


def test_every_placement_gives_each_unit_its_stack_channel_and_label(registered):
    registered("test_three_per_stack", _ThreePerStack)
    registered("test_by_channel", _BesideChannels)
    registered("test_by_bank_group", _BesideBankGroups)
    config = load_system_config("tom-ndp")  # 4 cubes
    cores = place_cores(["test_by_bank_group", "test_three_per_stack", "test_by_channel", "sm"],
                        config, HOST)  # fmt: skip
    sm, bank_groups, logic, channels = cores.groups
    assert sm.name == "sm"  # host kinds first
    assert [p.site for p in cores.placements()[: sm.count]] == [contract.HOST] * sm.count
    stack, channel = cores.stack(), cores.channel()
    logic_units = range(logic.first, logic.end)
    assert list(stack[logic_units]) == [0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3]
    assert (channel[logic_units] == -1).all()
    assert logic.instance_labels()[:4] == ["stack0.0", "stack0.1", "stack0.2", "stack1.0"]
    assert list(stack[channels.first : channels.end]) == [0, 0, 1, 1, 2, 2, 3, 3]
    assert list(channel[channels.first : channels.end]) == [0, 1] * 4
    assert channels.instance_labels()[:3] == ["stack0.ch0", "stack0.ch1", "stack1.ch0"]
    assert bank_groups.count == 32 and bank_groups.instance_labels()[:5] == [
        "stack0.ch0.bg0",
        "stack0.ch0.bg1",
        "stack0.ch0.bg2",
        "stack0.ch0.bg3",
        "stack0.ch1.bg0",
    ]
    # the units that run each stack's offloaded blocks: its logic layer's, not those by banks
    np.testing.assert_array_equal(cores.logic_layer_units(4),
                                  np.arange(logic.first, logic.end).reshape(4, 3))  # fmt: skip
    assert cores.placements()[channels.first].reaches() == "the banks of channel 0 of stack 0"
    assert cores.placements()[logic.first].reaches() == "stack 0's logic layer"
    assert cores.placements()[0].reaches() == "the host's links"


def test_host_units_take_a_launch_and_a_kind_may_say_otherwise(registered):
    """By default a host unit takes a launch's CTAs and a unit in a stack runs what is
    offloaded to it; a kind beside banks that runs whole kernels says ``takes_ctas``."""

    class RunsKernels(_BesideChannels):
        takes_ctas = True

    registered("test_runs_kernels", RunsKernels)
    registered("test_by_channel", _BesideChannels)
    config = load_system_config("tom-ndp")
    cores = place_cores(["test_by_channel", "test_runs_kernels", "nsu", "sm"], config, HOST)
    takes = {group.name: set(cores.take_ctas()[group.first : group.end]) for group in cores.groups}
    assert takes == {"sm": {1}, "test_by_channel": {0}, "nsu": {0}, "test_runs_kernels": {1}}


@pytest.mark.parametrize(("placement", "message"), [
    (dict(site="roof"), "unknown site 'roof'"),
    (dict(site=contract.HOST, stack=0), "needs no stack or channel"),
    (dict(site=LOGIC_LAYER), "needs a stack and no channel"),
    (dict(site=LOGIC_LAYER, stack=1, channel=2), "needs a stack and no channel"),
    (dict(site=BANKS, stack=1), "needs a stack and a channel"),
    (dict(site=LOGIC_LAYER, stack=1, bank_group=0), "only a unit beside banks"),
])  # fmt: skip
def test_a_placement_that_cannot_be_is_refused(placement, message):
    with pytest.raises(ConfigError, match=message):
        Placement(**placement)


def test_a_kind_beside_banks_must_say_where_each_unit_is(registered):
    class Vague(_BesideChannels):
        place = CoreKind.place

    registered("test_vague", Vague)
    with pytest.raises(ConfigError, match="must say which channel of which stack"):
        place_cores(["test_vague"], load_system_config("tom-ndp"), HOST)


def test_the_gpu_system_refuses_units_its_memory_path_does_not_reach(registered, monkeypatch):
    registered("test_by_channel", _BesideChannels)
    monkeypatch.setattr(Tom, "processor", "test_by_channel")
    with pytest.raises(ConfigError, match=r"'test_by_channel' has a unit at the banks of channel "
                       r"0 of stack 0; this system's memory path takes requests only from units "
                       r"at host, logic-layer"):  # fmt: skip
        load_system("tom-ndp")


def test_several_processors_in_a_logic_layer_share_its_offloaded_blocks():
    # two warp slots each: a stack's offloads overflow its first processor onto its second
    run = run_workload("bfs", "tiny", 0)
    module = kernel_module(run.workload.module_name)
    system = load_system("tom-ndp", {"ndp": {"stack_units": 2, "stack_warps": 2}})
    assert system.layout.stack_slots == 2 * 2  # the stack takes both units' slots at once
    result = system.run(run.traces, module, run.memory).as_dict()
    units = result["stats"]["stack_sm"]["instances"]
    assert list(units)[:3] == ["stack0.0", "stack0.1", "stack1.0"] and len(units) == 8
    assert all(units[f"stack{k}.{j}"]["warp_instructions"] > 0 for k in range(4) for j in (0, 1))


def test_an_unknown_kind_is_a_config_error_listing_the_registered():
    with pytest.raises(ConfigError, match=r"unknown core kind 'no-such-core'; registered: .*nsu"):
        place_cores(["no-such-core"], load_system_config("gpu-baseline"), HOST)


def test_a_kind_a_scheme_names_drives_the_compiled_model(registered, monkeypatch):
    """A stack SM at a third of the GPU's clock, registered here and named by TOM: the system
    clocks its units so (the run takes longer than with the shipped stack SM), and the results
    report their counters under its name."""

    class SlowStackSm(StackProcessor):
        def clock(self, config: Any, host: ClockDomain) -> ClockDomain:
            return ClockDomain("slow", 3 * host.period_ps)

    registered("test_slow_stack_sm", SlowStackSm)
    run = run_workload("bfs", "tiny", 0)
    module = kernel_module(run.workload.module_name)

    def result(processor: str):
        monkeypatch.setattr(Tom, "processor", processor)
        system = load_system("tom-ndp")
        return system, system.run(run.traces, module, run.memory).as_dict()

    system, normal = result("stack_sm")
    slow_system, slow = result("test_slow_stack_sm")
    host_period = system.cores.groups[0].period_ps
    assert [g.period_ps for g in system.cores.groups] == [host_period, host_period]
    assert slow_system.cores.groups[1].period_ps == 3 * host_period
    assert "stack_sm" in normal["stats"] and "test_slow_stack_sm" not in normal["stats"]
    assert "test_slow_stack_sm" in slow["stats"] and "stack_sm" not in slow["stats"]
    stack = slow["stats"]["test_slow_stack_sm"]["total"]
    assert stack["warp_instructions"] > 0, "bfs offloads to the stack processors"
    assert slow["time_ps"] > normal["time_ps"]


def test_a_stack_kinds_warp_slots_bound_its_stacks_offloads(registered, monkeypatch):
    """The offloads a stack takes at once (TOM sec. 3.3's hardware limit) are its processor
    kind's warp slots, not a config key read a second time."""

    class WideStackSm(StackProcessor):
        def warp_slots(self, config: Any) -> int:
            return 64

    registered("test_wide_stack_sm", WideStackSm)
    monkeypatch.setattr(Tom, "processor", "test_wide_stack_sm")
    system = load_system("tom-ndp")
    assert system.layout.stack_slots == 64
    assert int(system.cores.slots().max()) == 64
