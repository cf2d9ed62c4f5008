"""DRAM timing, scheduling and throughput, on a small device with distinct round timings."""

from __future__ import annotations

import numpy as np
import pytest

from ndpsim.errors import ConfigError, SimulationError
from ndpsim.hw.dram import controller as ctl
from ndpsim.hw.dram.mapping import AddressMapping, decode, interleaved_layout
from ndpsim.hw.dram.spec import (
    Command,
    DramPreset,
    Level,
    constraint_table,
    dram_preset_names,
    load_dram_preset,
)
from ndpsim.systems.dram_trace import run_dram_trace

TIMING = dict(
    tCK_ps=1000, CL=10, CWL=8, RCD=12, RP=14, RAS=30, RC=44, WR=15, RTP=6, BL=4, CCD_S=4,
    CCD_L=4, RRD_S=5, RRD_L=5, WTR_S=6, WTR_L=6, FAW=24, RFC=100, REFI=1000,
)  # fmt: skip


def small_preset(**changes) -> DramPreset:
    data = {
        "name": "test",
        "organization": dict(channels=1, banks=8, rows=1024, columns=16, access_bytes=64),
        "timing": dict(TIMING),
        "controller": dict(read_queue=16, write_queue=16, refresh=False),
    }
    for section, values in changes.items():
        data[section] = {**data[section], **values}
    return DramPreset.model_validate(data)


MAPPING = AddressMapping.from_layout(
    [("offset", 6), ("column", 4), ("bank", 3), ("row", 10)]
)  # one channel; consecutive 64 B blocks walk a row


def address(bank: int, row: int, column: int = 0) -> int:
    return (((row << 3) | bank) << 4 | column) << 6


def simulate(preset, requests, mapping=MAPPING, until=100_000):
    """Feed (arrival cycle, address, is_write) requests; returns done cycles by request index
    and the device state."""
    d = ctl.build_dram_state(preset)
    bits, xor = mapping.arrays()
    fields = np.zeros(7, dtype=np.int64)
    nodes = np.zeros(5, dtype=np.int64)
    channels = preset.organization.channels
    wake = np.zeros(channels, dtype=np.int64)
    done: dict[int, int] = {}
    pending = sorted(enumerate(requests), key=lambda r: r[1][0])
    now = 0
    while now < until and (pending or ctl.pending(d)):
        while pending and pending[0][1][0] <= now:
            tag, (_, addr, write) = pending[0]
            decode(bits, xor, addr, fields)
            ok = ctl.enqueue(d, fields[1], write, tag, fields[2], fields[3], fields[4],
                             fields[5], fields[6], now)  # fmt: skip
            if not ok:
                break
            wake[fields[1]] = now
            pending.pop(0)
        for ch in range(channels):
            if wake[ch] <= now:
                wake[ch] = ctl.tick(d, ch, now, nodes)
        for i in range(d.done_count[0]):
            done[int(d.done_tag[i])] = int(d.done_cycle[i])
        d.done_count[0] = 0
        now += 1
    return done, d


def test_a_read_to_a_closed_bank_costs_activate_plus_read():
    done, d = simulate(small_preset(), [(0, address(0, 5), False)])
    t = TIMING
    assert done[0] == t["RCD"] + t["CL"] + t["BL"]  # ACT at 0, RD at tRCD
    assert d.stats[0, ctl.S_ROW_MISSES] == 1


def test_a_row_hit_costs_only_the_column_latency():
    t = TIMING
    late = 200  # long after the row was opened
    done, d = simulate(small_preset(), [(0, address(0, 5, 0), False), (late, address(0, 5, 1),
                                                                        False)])  # fmt: skip
    assert done[1] - late == t["CL"] + t["BL"]
    assert d.stats[0, ctl.S_ROW_HITS] == 1


def test_a_row_conflict_costs_precharge_activate_and_read():
    t = TIMING
    late = 200
    done, d = simulate(small_preset(), [(0, address(0, 5), False), (late, address(0, 9), False)])
    assert done[1] - late == t["RP"] + t["RCD"] + t["CL"] + t["BL"]
    assert d.stats[0, ctl.S_ROW_CONFLICTS] == 1


def test_a_precharge_waits_for_tras_after_the_activate():
    t = TIMING
    done, _ = simulate(small_preset(), [(0, address(0, 5), False), (1, address(0, 9), False)])
    # ACT at 0, PRE no earlier than tRAS, then tRP + tRCD before the second read.
    assert done[1] == t["RAS"] + t["RP"] + t["RCD"] + t["CL"] + t["BL"]


def test_conflicting_rows_of_one_bank_are_served_one_per_trc():
    t = TIMING
    n = 40
    requests = [(0, address(0, row), False) for row in range(n)]
    done, d = simulate(small_preset(controller={"read_queue": 64}), requests)
    finish = max(done.values())
    assert (n - 1) * t["RC"] <= finish <= n * t["RC"] + t["RCD"] + t["CL"] + t["BL"]
    assert d.stats[0, ctl.S_ACTS] == n


def test_five_activates_in_one_rank_respect_the_four_activation_window():
    t = TIMING
    requests = [(0, address(bank, 1), False) for bank in range(5)]
    done, _ = simulate(small_preset(), requests)
    fifth = sorted(done.values())[4]
    assert fifth >= t["FAW"] + t["RCD"] + t["CL"] + t["BL"]


def test_streaming_reads_reach_peak_bandwidth_within_five_percent():
    preset = load_dram_preset("hbm2-anchor", {"controller": {"refresh": False}})
    n = 200_000
    addresses = np.arange(n, dtype=np.uint64) * 64
    result = run_dram_trace(preset, addresses, np.zeros(n, np.uint8))
    peak_cycles = n * preset.timing.BL / (preset.organization.channels * preset.organization.ranks)
    assert peak_cycles <= result.cycles <= 1.05 * peak_cycles
    assert result.bandwidth_gbps(64) >= 0.95 * preset.peak_bandwidth_gbps


def test_every_request_completes_and_writes_drain():
    rng = np.random.default_rng(1)
    n = 20_000
    addresses = rng.integers(0, 1 << 26, n, dtype=np.uint64) * 64 % (1 << 32)
    writes = (rng.random(n) < 0.4).astype(np.uint8)
    result = run_dram_trace(load_dram_preset("hbm2-anchor"), addresses, writes)
    s = result.stats
    assert s["reads_done"] == n - writes.sum() and s["writes_done"] == writes.sum()
    assert s["row_hits"] + s["row_misses"] + s["row_conflicts"] == n


def test_refresh_happens_every_trefi_per_rank_and_costs_time():
    preset = small_preset(controller={"refresh": True})
    n = 3000
    requests = [(i, address(i % 8, (i * 7) % 64), False) for i in range(n)]
    done, d = simulate(preset, requests)
    finish = max(done.values())
    assert d.stats[0, ctl.S_REFS] in (finish // TIMING["REFI"], finish // TIMING["REFI"] + 1)
    without, _ = simulate(small_preset(), requests)
    assert finish > max(without.values())


def test_a_channel_woken_after_a_long_idle_owes_no_refreshes():
    """A channel sleeps while nothing is queued; the refreshes that fell due then were done on
    idle banks: its first request pays at most one refresh, not every one it slept through."""
    t = TIMING
    late = 20 * t["REFI"] + t["REFI"] // 2  # mid-interval, after twenty refreshes fell due
    done, d = simulate(small_preset(controller={"refresh": True}), [(late, address(0, 5), False)],
                       until=late + 10_000)  # fmt: skip
    assert done[0] - late <= t["RFC"] + t["RCD"] + t["CL"] + t["BL"]
    assert d.stats[0, ctl.S_REFS] in (20, 21)


def test_a_dram_seen_in_longer_requests_keeps_its_rows_and_bandwidth():
    mpu = load_dram_preset("mpu")
    lines = mpu.in_accesses_of(128)
    assert lines.organization.row_bytes == mpu.organization.row_bytes
    assert lines.organization.capacity_bytes == mpu.organization.capacity_bytes
    assert lines.peak_bandwidth_gbps == pytest.approx(
        mpu.organization.access_bytes / max(mpu.timing.BL, mpu.timing.CCD_S)
        * mpu.organization.channels)  # fmt: skip
    with pytest.raises(ConfigError, match="whole number"):
        mpu.in_accesses_of(48)


def test_more_row_buffers_turn_alternating_rows_into_hits():
    requests = [(i * 100, address(0, 1 + (i % 2), i % 16), False) for i in range(20)]
    _, one = simulate(small_preset(), requests)
    _, two = simulate(small_preset(organization={"subarrays": 2}), requests)
    assert one.stats[0, ctl.S_ROW_HITS] == 0
    assert two.stats[0, ctl.S_ROW_HITS] == 18


def test_same_trace_gives_identical_statistics_twice():
    rng = np.random.default_rng(7)
    addresses = rng.integers(0, 1 << 20, 5000, dtype=np.uint64) * 64
    writes = (rng.random(5000) < 0.3).astype(np.uint8)
    preset = load_dram_preset("hbm2-anchor")
    a = run_dram_trace(preset, addresses, writes)
    b = run_dram_trace(preset, addresses, writes)
    assert (a.cycles, a.stats) == (b.cycles, b.stats)


def test_constraint_table_has_the_standard_rows():
    table = constraint_table(small_preset().timing)
    rows = {(lvl, pre, fol): (lat, win) for lvl, pres, fols, lat, win in table
            for pre in pres for fol in fols}  # fmt: skip
    assert rows[(Level.BANK, Command.ACT, Command.RD)] == (TIMING["RCD"], 0)
    assert rows[(Level.SUBARRAY, Command.PRE, Command.ACT)] == (TIMING["RP"], 0)
    assert rows[(Level.RANK, Command.RD, Command.RD)] == (TIMING["BL"], 0)
    assert (TIMING["FAW"], 4) in [
        (lat, win) for lvl, pres, fols, lat, win in table if win and Command.ACT in pres
    ]
    hbm = constraint_table(load_dram_preset("hbm2-anchor").timing)
    assert any(lvl == Level.CHANNEL and lat == 2 for lvl, _, _, lat, _ in hbm)


@pytest.mark.parametrize("name", dram_preset_names())
def test_every_preset_loads_and_builds(name):
    preset = load_dram_preset(name)
    state = ctl.build_dram_state(preset)
    assert state.open_row.size == preset.organization.total_banks * preset.organization.subarrays
    assert preset.peak_bandwidth_gbps > 0


def test_bad_presets_and_overrides_are_config_errors_naming_the_key():
    with pytest.raises(ConfigError, match="unknown dram preset 'nope'"):
        load_dram_preset("nope")
    with pytest.raises(ConfigError, match=r"unknown key 'timing\.tXYZ'"):
        load_dram_preset("ddr3-1600", {"timing": {"tXYZ": 3}})
    with pytest.raises(ConfigError, match=r"'organization\.banks'"):
        load_dram_preset("ddr3-1600", {"organization": {"banks": 0}})
    with pytest.raises(ConfigError, match="watermark"):
        load_dram_preset("ddr3-1600", {"controller": {"write_low_watermark": 0.9}})


def test_interleaved_mapping_spreads_consecutive_accesses_over_channels():
    preset = load_dram_preset("hbm2-anchor")
    mapping = interleaved_layout(preset.organization)
    fields = mapping.decode(np.arange(16, dtype=np.uint64) * 64)
    assert list(fields["channel"][:8]) == list(range(8))
    assert list(fields["column"][:16:8]) == [0, 1]
    assert mapping.decode(np.array([(1 << 32) - 64], dtype=np.uint64))["row"][0] == 16383


def test_moving_a_field_keeps_the_mapping_a_bijection():
    base = AddressMapping.from_layout([("offset", 7), ("cube", 2), ("channel", 4), ("row", 10)])
    moved = base.with_field_at("cube", 12)
    assert moved.bits["cube"] == (12, 13)
    all_bits = sorted(b for bits in moved.bits.values() for b in bits)
    assert all_bits == sorted(b for bits in base.bits.values() for b in bits)
    addresses = np.arange(1 << 16, dtype=np.uint64) << np.uint64(7)
    f = moved.decode(addresses)
    packed = f["cube"] | f["channel"] << 2 | f["row"] << 6
    assert len(np.unique(packed)) == len(addresses)


@pytest.mark.parametrize("name", dram_preset_names())
def test_no_data_bus_ever_carries_two_bursts_at_once(name):
    preset = load_dram_preset(name)
    rng = np.random.default_rng(3)
    n = 5_000
    addresses = rng.integers(0, preset.organization.capacity_bytes // 64, n, dtype=np.uint64) * 64
    addresses[: n // 2] = np.arange(n // 2, dtype=np.uint64) * 64  # row hits back to back
    writes = (rng.random(n) < 0.4).astype(np.uint8)
    result = run_dram_trace(preset, addresses, writes)  # raises if two bursts overlapped
    buses = preset.organization.channels * preset.organization.ranks
    assert result.stats["data_bus_cycles"] <= result.cycles * buses


def _reads_every_cycle(d):
    """The device with a read allowed every cycle: its bursts of BL cycles overlap."""
    for cmd in (ctl.RD, ctl.RDA):
        for k in range(d.cons_start[cmd], d.cons_start[cmd + 1]):
            if d.cons_next[k] in (ctl.RD, ctl.RDA):
                d.cons_latency[k] = 1
    return d


def test_a_timing_table_that_lets_bursts_overlap_is_a_simulation_error(monkeypatch):
    build = ctl.build_dram_state
    monkeypatch.setattr(ctl, "build_dram_state", lambda preset: _reads_every_cycle(build(preset)))
    n = 64
    addresses = np.arange(n, dtype=np.uint64) * 64  # one row, hit after hit
    with pytest.raises(SimulationError, match=r"'test'.*channel 0 rank 0 carried two bursts"):
        run_dram_trace(small_preset(), addresses, np.zeros(n, np.uint8), mapping=MAPPING)
