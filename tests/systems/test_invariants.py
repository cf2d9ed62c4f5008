"""What every GPU-system run checks of itself: no link busier than 100% over any utilization
window, no DRAM data bus carrying two bursts at once, every request and packet accounted for
where it was sent and where it was answered, every offload acknowledged. Each check is shown
to hold on every shipped system, and to stop a run, naming the component, once the state it
reads is corrupted."""

from __future__ import annotations

import inspect

import numpy as np
import pytest

from ndpsim.errors import SimulationError
from ndpsim.hw import link as linkmod
from ndpsim.hw.dram import controller as ctl
from ndpsim.hw.gpu import offload as ofl
from ndpsim.systems import load_system_config, system_preset_names
from ndpsim.systems.gpu import GpuSystem, model
from ndpsim.systems.gpu import system as gpu_system
from ndpsim.systems.skeleton.program import Launched
from ndpsim.workloads import kernel_module, run_workload


@pytest.fixture(scope="module")
def workloads():
    runs = {name: run_workload(name, "tiny", 0) for name in ("vadd", "bfs")}
    return {name: (run, kernel_module(run.workload.module_name)) for name, run in runs.items()}


def _run(workloads, preset="tom-baseline", workload="vadd"):
    run, module = workloads[workload]
    return GpuSystem(load_system_config(preset)).run(run.traces, module, run.memory)


def _tamper(monkeypatch, name, corrupt, before=False):
    """Have ``corrupt`` change the state the function ``name`` is given (a dict of its
    arguments by name, the compiled model's components among them when it is given a launch),
    before it runs, or after it returned (with the launch it returned): a method of
    ``GpuRun`` (``launch`` returns a launch about to run, ``launch_end`` is given one that
    ran, before any check), or a function the system module calls (an invariant check)."""
    owner = gpu_system.GpuRun if hasattr(gpu_system.GpuRun, name) else gpu_system
    original = getattr(owner, name)
    signature = inspect.signature(original)

    def with_state(state, launched):
        if isinstance(launched, Launched):
            state.update(launched.model.state._asdict())
        return state

    def tampered(*args, **kwargs):
        state = dict(signature.bind(*args, **kwargs).arguments)
        if before:
            corrupt(with_state(state, state.get("launched")))
        result = original(*args, **kwargs)
        if not before:
            corrupt(with_state(state, result))
        return result

    monkeypatch.setattr(owner, name, tampered)


@pytest.mark.parametrize("workload", ["vadd", "bfs"])
@pytest.mark.parametrize(
    "preset", [p for p in system_preset_names() if load_system_config(p).kind == "gpu"]
)
def test_every_shipped_system_keeps_its_invariants_and_no_channel_is_over_full(
    workloads, preset, workload
):
    result = _run(workloads, preset, workload)  # raises if any invariant broke
    for name, channel in result.summary["links"].items():
        assert 0 <= channel["utilization"] <= 1, name


def test_a_window_busier_than_its_length_stops_the_run_naming_the_link(workloads, monkeypatch):
    def overfill(state):
        links = state["links"]
        links.peak_window_busy_ps[1] = links.window_ps[0] + 1  # the first cube's link back

    _tamper(monkeypatch, "launch_end", overfill, before=True)
    with pytest.raises(SimulationError, match=r"busier than 100%: cube0->gpu busy 100001 ps in"):
        _run(workloads)


def test_packets_overlapping_on_a_link_stop_the_run_naming_the_link(workloads, monkeypatch):
    def free_mid_packet(state):
        links = state["links"]
        size = int(0.6 * links.window_ps[0] * 1024 / links.ps_per_kb[0])  # 60% of a window
        linkmod.send(links, 0, 0, size, linkmod.OTHER)
        links.busy_until[0] = 0  # what ending TOM's learning phase once did
        linkmod.send(links, 0, 0, size, linkmod.OTHER)

    _tamper(monkeypatch, "launch", free_mid_packet)
    with pytest.raises(SimulationError, match=r"gpu->cube0 busy \d+ ps in a 100000 ps window"):
        _run(workloads)


def test_two_bursts_at_once_on_a_dram_data_bus_stop_the_run_naming_the_channel(
    workloads, monkeypatch
):
    def overlap(state):
        state["dram"].bus_overlap[-1] = 2

    _tamper(monkeypatch, "launch_end", overlap, before=True)
    system = GpuSystem(load_system_config("tom-baseline"))
    channels = system.system_dram.organization.channels
    ranks = system.dram_preset.organization.ranks
    vault = channels // system.config.memory.cubes - 1
    cube = system.config.memory.cubes - 1
    with pytest.raises(SimulationError, match=rf"DRAM channel cube{cube}-vault{vault} rank "
                       rf"{ranks - 1} data bus carrying two bursts at once"):  # fmt: skip
        _run(workloads)


def test_a_dram_request_taken_and_never_served_stops_the_run_naming_the_channel(
    workloads, monkeypatch
):
    def lose(state):
        state["dram"].stats[5, ctl.S_READS] += 1

    _tamper(monkeypatch, "launch_end", lose, before=True)
    with pytest.raises(SimulationError, match=r"the counters disagree: DRAM: requests taken"):
        _run(workloads)
    with pytest.raises(SimulationError, match=r"DRAM channel cube0-vault5: reads served"):
        _run(workloads)


def test_a_lost_fill_stops_the_run_naming_the_l2(workloads, monkeypatch):
    def lose(state):
        state["mem"].stats[0, model.L_FILLS] -= 1

    _tamper(monkeypatch, "launch_end", lose, before=True)
    with pytest.raises(SimulationError, match=r"L2: fills \d+, expected \d+"):
        _run(workloads)


def test_read_data_lost_on_its_way_back_stops_the_run_naming_the_links(workloads, monkeypatch):
    def lose(state):
        state["links"].traffic[1, linkmod.READ_DATA, 1] -= 1

    _tamper(monkeypatch, "launch_end", lose, before=True)
    with pytest.raises(SimulationError, match=r"GPU links: reads answered"):
        _run(workloads)


def test_busy_time_not_from_the_bytes_sent_stops_the_run_naming_the_link(workloads, monkeypatch):
    def forge(state):
        state["links"].busy_ps[0] += 1_000

    _tamper(monkeypatch, "launch_end", forge, before=True)
    with pytest.raises(SimulationError, match=r"gpu->cube0: busy \d+ ps, not the time its bytes"):
        _run(workloads)


def test_packets_smaller_than_their_header_stop_the_run_naming_the_link(workloads, monkeypatch):
    def shrink(state):
        state["links"].traffic[0, linkmod.READ_REQUEST, 0] = 1

    _tamper(monkeypatch, "launch_end", shrink, before=True)
    with pytest.raises(SimulationError, match=r"gpu->cube0: \d+ read_request packets in 1 bytes"):
        _run(workloads)


# TOM's learning phase takes all of a tiny VADD: nothing is offloaded
OFFLOADING = [("tom-ndp", "bfs"), ("sndp-ndp", "vadd")]


@pytest.mark.parametrize(("preset", "workload"), OFFLOADING)
def test_an_acknowledgement_lost_on_its_link_stops_the_run_naming_the_link(
    workloads, monkeypatch, preset, workload
):
    def lose(state):  # in the first launch that acknowledged an offload
        off, links = state["off"], state["links"]
        if not off.stats[:, ofl.K_ACKED].any():
            return
        lose.stack = int(np.argmax(off.stats[:, ofl.K_ACKED]))
        links.traffic[off.rx_link[lose.stack], linkmod.OFFLOAD, 1] -= 1

    _tamper(monkeypatch, "launch_end", lose, before=True)
    with pytest.raises(SimulationError, match=r"cube\d->gpu: offload acknowledgements") as caught:
        _run(workloads, preset, workload)
    assert f"cube{lose.stack}->gpu" in str(caught.value)


@pytest.mark.parametrize(("preset", "workload"), OFFLOADING)
def test_an_offload_never_acknowledged_stops_the_kernel(workloads, monkeypatch, preset, workload):
    def unacknowledge(state):  # the first launch that offloaded
        off = state["off"]
        if not off.stats[:, ofl.K_ACKED].any():
            return
        stack = int(np.argmax(off.stats[:, ofl.K_ACKED]))
        off.stats[stack, ofl.K_ACKED] -= 1
        off.pending[stack] += 1

    _tamper(monkeypatch, "check_drained", unacknowledge, before=True)
    with pytest.raises(SimulationError, match=r"1 offloads not acknowledged.*1 offloads never"):
        _run(workloads, preset, workload)


def test_an_rdf_packet_that_never_reached_its_nsu_stops_the_kernel(workloads, monkeypatch):
    def lose(state):
        off = state["off"]
        assert off.stats[:, ofl.K_RDF].sum() > 0
        off.pos_arrived[np.flatnonzero(off.pos_arrived)[0]] -= 1

    _tamper(monkeypatch, "check_drained", lose, before=True)
    with pytest.raises(SimulationError, match=r"1 RDF/WTA packets that never reached their NSU"):
        _run(workloads, "sndp-ndp")
