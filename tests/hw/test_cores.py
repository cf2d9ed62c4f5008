"""The core contract: kinds placed in groups (host kinds first), each unit's clock, slots and
stack from its kind, labels by group, refusals of what a system cannot run; and a kind
registered in a test drives the compiled model (its units' clock and counters) when an offload
scheme names it as its stack processor."""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
import pytest

from ndpsim.engine.clock import ClockDomain
from ndpsim.errors import ConfigError
from ndpsim.hw.core.contract import CORES, CoreKind, place_cores
from ndpsim.hw.core.stack_processor import StackProcessor
from ndpsim.policy.offload.tom import Tom
from ndpsim.systems import load_system, load_system_config
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
    np.testing.assert_array_equal(cores.stack_unit(8), np.arange(64, 72))
    assert [cores.label(u) for u in (0, 63, 64, 71)] == ["sm0", "sm63", "nsu0", "nsu7"]
    assert gpu.instance_labels() is None
    assert nsu.instance_labels() == [f"stack{k}" for k in range(8)]


def test_every_registered_kind_builds_from_a_shipped_preset():
    for name in CORES.names():
        kind = CORES.get(name)()
        assert isinstance(kind, CoreKind) and kind.stat_names
        config = load_system_config("sndp-ndp" if kind.in_stack else "gpu-baseline")
        cores = place_cores([name], config, HOST)
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


def test_two_stack_units_in_one_stack_cannot_both_take_its_offloads(registered):
    class TwoPerStack(StackProcessor):
        def units(self, config: Any) -> int:
            return 2 * config.memory.cubes

        def stack_of(self, unit: int, config: Any) -> int:
            return unit // 2

    registered("test_two_per_stack", TwoPerStack)
    cores = place_cores(["sm", "test_two_per_stack"], load_system_config("tom-ndp"), HOST)
    with pytest.raises(ConfigError, match="stack 0 has two stack processors"):
        cores.stack_unit(4)


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
