"""The DRAM controllers obey the DRAM protocol, checked from the outside on random traces.

The controller enforces timing through a compact machinery (readiness tables, windows, cached
candidates stamped with bank-group versions, refresh gates, and ticks skipped while nothing can
issue); a slip in any of them would not crash, only make a run subtly wrong. So these tests
watch a device from outside: every tick is driven from Python, the command it issued is read
off the state it changed, and the resulting command log is checked by a separate, plain
statement of the rules (row state, the JEDEC distances between commands, the data bus, the
four-activation window, refresh) and against the device's own counters.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, replace
from itertools import pairwise

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ndpsim.hw.dram import controller as ctl
from ndpsim.hw.dram.spec import Command, DramPreset, dram_preset_names, load_dram_preset

ACT, PRE, PREA, RD, WR, RDA, WRA, REF = Command
READS, WRITES, COLUMN = {RD, RDA}, {WR, WRA}, {RD, RDA, WR, WRA}


@dataclass(frozen=True)
class Request:
    arrive: int
    channel: int
    rank: int
    bankgroup: int
    bank: int
    row: int
    column: int
    write: bool


@dataclass(frozen=True)
class Issued:
    """One command as seen on a channel's command bus; rank-wide commands have no bank."""

    cycle: int
    command: Command
    channel: int
    rank: int
    bankgroup: int = -1
    bank: int = -1
    subarray: int = -1
    row: int = -1
    tag: int = -1  # the request a column command served


# ------------------------------------------------------------------------------ driving
def _coordinates(preset: DramPreset, index: int) -> tuple[int, int, int, int, int]:
    """(channel, rank, bank group, bank, subarray) of a subarray index of ``open_row``."""
    o = preset.organization
    index, subarray = divmod(index, o.subarrays)
    index, bank = divmod(index, o.banks)
    index, bankgroup = divmod(index, o.bankgroups)
    channel, rank = divmod(index, o.ranks)
    return channel, rank, bankgroup, bank, subarray


def _observe(preset, d, ch, now, before, requests) -> Issued | None:
    """The command channel ``ch`` issued in the tick that turned ``before`` into ``d``."""
    stats_before, open_before, pending_before, due_before, done_before = before
    stats = d.stats[ch]
    columns = int(d.done_count[0]) - done_before
    acts = int(stats[ctl.S_ACTS] - stats_before[ctl.S_ACTS])
    pres = int(stats[ctl.S_PRES] - stats_before[ctl.S_PRES])
    refs = int(stats[ctl.S_REFS] - stats_before[ctl.S_REFS])
    assert columns + acts + pres + refs <= 1, f"cycle {now}: more than one command on channel {ch}"
    changed = np.flatnonzero(open_before != d.open_row)
    closed = [s for s in changed if d.open_row[s] < 0]
    opened = [s for s in changed if d.open_row[s] >= 0]
    if columns:
        tag = int(d.done_tag[done_before])
        r = requests[tag]
        sub = r.row % preset.organization.subarrays
        auto = bool(closed)
        command = (WRA if auto else WR) if r.write else (RDA if auto else RD)
        assert bool(d.done_write[done_before]) == r.write
        return Issued(now, command, ch, r.rank, r.bankgroup, r.bank, sub, r.row, tag)
    if acts:
        assert len(opened) == 1 and not closed, f"cycle {now}: an ACT changed {opened, closed}"
        c, rank, bankgroup, bank, sub = _coordinates(preset, opened[0])
        assert c == ch
        return Issued(now, ACT, ch, rank, bankgroup, bank, sub, int(d.open_row[opened[0]]))
    ranks = range(ch * preset.organization.ranks, (ch + 1) * preset.organization.ranks)
    if pres:
        # while a refresh is pending, only its precharge (of the whole rank) issues
        if any(d.refresh_pending[rk] for rk in ranks):
            rank = _coordinates(preset, closed[0])[1]
            assert all(_coordinates(preset, s)[1] == rank for s in closed)
            return Issued(now, PREA, ch, rank)
        assert len(closed) == 1, f"cycle {now}: a PRE closed {closed}"
        c, rank, bankgroup, bank, sub = _coordinates(preset, closed[0])
        return Issued(now, PRE, ch, rank, bankgroup, bank, sub, int(open_before[closed[0]]))
    if refs:
        done = [rk for rk in ranks if not d.refresh_pending[rk]
                and (pending_before[rk] or d.refresh_due[rk] != due_before[rk])]  # fmt: skip
        assert len(done) == 1
        return Issued(now, REF, ch, done[0] - ch * preset.organization.ranks)
    assert not opened and not closed, f"cycle {now}: rows changed without a command"
    return None


def run_logged(preset: DramPreset, requests: list[Request], *, every_cycle: bool = False):
    """Drive a fresh device with ``requests`` (offered in arrival order; a full queue stalls
    the ones behind it). Ticks a channel when the controller asked to be, or, with
    ``every_cycle``, on every cycle. Returns the command log, the cycle each request entered
    its controller's queue and the cycle its data was done (by request), and the device."""
    d = ctl.build_dram_state(preset)
    channels = preset.organization.channels
    nodes = np.zeros(5, dtype=np.int64)
    wake = np.zeros(channels, dtype=np.int64)
    log: list[Issued] = []
    queued: dict[int, int] = {}
    done: dict[int, int] = {}
    order = sorted(range(len(requests)), key=lambda i: requests[i].arrive)
    now = 0
    while order or ctl.pending(d):
        assert now < 1_000_000, "the device stopped making progress"
        while order and requests[order[0]].arrive <= now:
            r = requests[order[0]]
            if not ctl.enqueue(d, r.channel, r.write, order[0], r.rank, r.bankgroup, r.bank,
                               r.row, r.column, now):  # fmt: skip
                break
            wake[r.channel] = now
            queued[order.pop(0)] = now
        for ch in range(channels):
            if wake[ch] > now and not every_cycle:
                continue
            before = (d.stats[ch].copy(), d.open_row.copy(), d.refresh_pending.copy(),
                      d.refresh_due.copy(), int(d.done_count[0]))  # fmt: skip
            wake[ch] = ctl.tick(d, ch, now, nodes)
            assert wake[ch] > now, "a channel asked to run again in the same cycle"
            issued = _observe(preset, d, ch, now, before, requests)
            if issued is not None:
                log.append(issued)
        for i in range(int(d.done_count[0])):
            done[int(d.done_tag[i])] = int(d.done_cycle[i])
        d.done_count[0] = 0
        now += 1
    return log, queued, done, d


# ----------------------------------------------------------------------------- the rules
def protocol_violations(preset: DramPreset, requests, log, queued, done) -> list[str]:
    """Everything in a command log that a DRAM of ``preset`` forbids, in words."""
    t = preset.timing
    write_recovery = t.CWL + t.BL + t.WR
    # (scope, earlier commands, later commands, fewest cycles between them); a rank-wide
    # command (PREA, REF) is in rank scope only
    rules = [
        ("subarray", {ACT}, {ACT}, t.RC, "tRC"),
        ("subarray", {ACT}, {PRE}, t.RAS, "tRAS"),
        ("subarray", {PRE}, {ACT}, t.RP, "tRP"),
        ("subarray", {RDA}, {ACT}, t.RTP + t.RP, "tRTP+tRP"),
        ("subarray", {WRA}, {ACT}, write_recovery + t.RP, "write recovery+tRP"),
        ("bank", {ACT}, COLUMN, t.RCD, "tRCD"),
        ("bank", {RD}, {PRE}, t.RTP, "tRTP"),
        ("bank", {WR}, {PRE}, write_recovery, "write recovery"),
        ("bankgroup", READS, READS, t.CCD_L, "tCCD_L"),
        ("bankgroup", WRITES, WRITES, t.CCD_L, "tCCD_L"),
        ("bankgroup", WRITES, READS, t.CWL + t.BL + t.WTR_L, "tWTR_L"),
        ("bankgroup", {ACT}, {ACT}, t.RRD_L, "tRRD_L"),
        ("rank", READS, READS, max(t.BL, t.CCD_S), "tCCD_S"),
        ("rank", WRITES, WRITES, max(t.BL, t.CCD_S), "tCCD_S"),
        ("rank", READS, WRITES, t.CL + t.BL + 2 - t.CWL, "read-to-write turnaround"),
        ("rank", WRITES, READS, t.CWL + t.BL + t.WTR_S, "tWTR_S"),
        ("rank", {ACT}, {ACT}, t.RRD_S, "tRRD_S"),
        ("rank", {ACT}, {PREA}, t.RAS, "tRAS"),
        ("rank", {RD}, {PREA}, t.RTP, "tRTP"),
        ("rank", {WR}, {PREA}, write_recovery, "write recovery"),
        ("rank", {PREA}, {ACT}, t.RP, "tRP"),
        ("rank", {ACT}, {REF}, t.RC, "tRC"),
        ("rank", {PRE, PREA}, {REF}, t.RP, "tRP"),
        ("rank", {RDA}, {REF}, t.RTP + t.RP, "tRTP+tRP"),
        ("rank", {WRA}, {REF}, write_recovery + t.RP, "write recovery+tRP"),
        ("rank", {REF}, {ACT, REF}, t.RFC, "tRFC"),
    ]
    if t.two_cycle_activate:
        rules.append(("channel", {ACT}, {ACT, PRE, PREA, REF}, 2, "two-cycle ACT"))
    horizon = max(r[3] for r in rules)

    def scope(c: Issued, level: str):
        path = (c.channel, c.rank, c.bankgroup, c.bank, c.subarray)
        depth = {"channel": 1, "rank": 2, "bankgroup": 3, "bank": 4, "subarray": 5}[level]
        return path[:depth]

    bad: list[str] = []
    auto_precharge = {RDA, WRA} if preset.controller.row_policy == "closed" else {RD, WR}
    bad += [f"{c}: not the {preset.controller.row_policy}-page column command"
            for c in log if c.command in COLUMN and c.command not in auto_precharge]  # fmt: skip
    by_channel: dict[int, list[Issued]] = defaultdict(list)
    open_row: dict[tuple, int] = {}
    served: dict[int, Issued] = {}
    for c in log:
        history = by_channel[c.channel]
        if history and history[-1].cycle == c.cycle:
            bad.append(f"{c}: a second command on the channel in cycle {c.cycle}")
        for earlier in reversed(history):
            gap = c.cycle - earlier.cycle
            if gap > horizon:
                break
            for level, first, then, fewest, name in rules:
                if earlier.command not in first or c.command not in then:
                    continue
                rank_wide = {earlier.command, c.command} & {PREA, REF}
                if rank_wide and level not in ("rank", "channel"):
                    continue
                if scope(earlier, level) == scope(c, level) and gap < fewest:
                    bad.append(f"{c} only {gap} cycles after {earlier} ({name} = {fewest})")
        history.append(c)
        # row state
        key = scope(c, "subarray")
        rank_rows = [k for k in open_row if k[:2] == (c.channel, c.rank)]  # for PREA and REF
        if c.command == ACT:
            if key in open_row:
                bad.append(f"{c}: activates a subarray whose row {open_row[key]} is open")
            open_row[key] = c.row
        elif c.command == PRE:
            if key not in open_row:
                bad.append(f"{c}: precharges a closed subarray")
            open_row.pop(key, None)
        elif c.command == PREA:
            if not rank_rows:
                bad.append(f"{c}: precharges a rank with no open row")
            for k in rank_rows:
                del open_row[k]
        elif c.command == REF:
            if rank_rows:
                bad.append(f"{c}: refreshes a rank with rows open at {rank_rows}")
        else:
            r = requests[c.tag]
            if open_row.get(key) != r.row:
                bad.append(f"{c}: column access to row {r.row}, open row {open_row.get(key)}")
            if c.tag in served:
                bad.append(f"{c}: request {c.tag} served twice")
            served[c.tag] = c
            if c.cycle < queued[c.tag]:
                bad.append(f"{c}: request {c.tag} served before it was queued")
            latency = (t.CWL if r.write else t.CL) + t.BL
            if done.get(c.tag) != c.cycle + latency:
                bad.append(f"{c}: reported done at {done.get(c.tag)}, not {c.cycle + latency}")
            if c.command in (RDA, WRA):
                open_row.pop(key, None)
    # every request served; the data bus of a rank carries one burst at a time
    missing = sorted(set(range(len(requests))) - set(served))
    if missing:
        bad.append(f"requests never served: {missing[:10]}")
    bursts: dict[tuple, list[tuple[int, int]]] = defaultdict(list)
    for c in served.values():
        start = c.cycle + (t.CWL if c.command in WRITES else t.CL)
        bursts[(c.channel, c.rank)].append((start, start + t.BL))
    for rank, spans in bursts.items():
        spans.sort()
        for (_, end), (start, _) in pairwise(spans):
            if start < end:
                bad.append(f"rank {rank}: a data burst starts at {start}, the last ends at {end}")
    if t.FAW:
        acts: dict[tuple, list[int]] = defaultdict(list)
        for c in log:
            if c.command == ACT:
                acts[(c.channel, c.rank)].append(c.cycle)
        for rank, cycles in acts.items():
            for first, fifth in zip(cycles, cycles[4:], strict=False):
                if fifth - first < t.FAW:
                    bad.append(f"rank {rank}: five ACTs within {fifth - first} cycles (tFAW)")
    return bad


def counter_mismatches(preset, requests, log, queued, done, d) -> list[str]:
    """Where the device's counters disagree with the commands it was seen to issue."""
    s = dict(zip(ctl.STAT_NAMES, d.stats.sum(axis=0).tolist(), strict=True))
    count = defaultdict(int)
    for c in log:
        count[c.command] += 1
    reads = [i for i, r in enumerate(requests) if not r.write]
    expected = {
        "reads": len(reads),
        "writes": len(requests) - len(reads),
        "reads_done": count[RD] + count[RDA],
        "writes_done": count[WR] + count[WRA],
        "activates": count[ACT],
        "precharges": count[PRE] + count[PREA],
        "refreshes": count[REF],
        "data_bus_cycles": preset.timing.BL * sum(count[c] for c in COLUMN),
        "read_latency_cycles": sum(done[i] - queued[i] for i in reads),
    }
    wrong = [f"{k}: counted {s[k]}, seen {v}" for k, v in expected.items() if s[k] != v]
    outcomes = s["row_hits"] + s["row_misses"] + s["row_conflicts"]
    if outcomes != len(requests):
        wrong.append(f"{outcomes} row-buffer outcomes for {len(requests)} requests")
    if s["row_misses"] > count[ACT] or s["row_conflicts"] > count[PRE]:
        wrong.append(f"more misses/conflicts than ACT/PRE commands: {s}")
    return wrong


# ------------------------------------------------------------------------------ the tests
def shrunk(name: str, row_policy: str, queue: int) -> DramPreset:
    """A preset's timing and bank structure on a device small enough to drive from Python:
    two channels at most, a handful of rows, refresh every few hundred cycles."""
    p = load_dram_preset(name)
    t = p.timing
    return load_dram_preset(name, {
        "organization": {"channels": min(2, p.organization.channels), "rows": 64},
        "timing": {"REFI": t.RFC + t.RC + 300},
        "controller": {"row_policy": row_policy, "read_queue": queue, "write_queue": queue,
                       "refresh": True},
    })  # fmt: skip


@st.composite
def made_up_devices(draw, row_policy: str, queue: int) -> DramPreset:
    """A device no preset describes: random bank structure and timing, so that every rule
    binds somewhere (no preset has tCCD_L above the burst, for one)."""
    n = st.integers
    cl, bl, ras, rp, rc, rfc = (draw(n(2, 12)), draw(n(1, 8)), draw(n(4, 30)), draw(n(2, 12)),
                                draw(n(0, 6)), draw(n(20, 120)))  # fmt: skip
    ccd, rrd, wtr = draw(n(1, 4)), draw(n(1, 6)), draw(n(1, 6))
    timing = dict(
        tCK_ps=1000, CL=cl, CWL=draw(n(1, cl)), RCD=draw(n(2, 12)), RP=rp, RAS=ras,
        RC=ras + rp + rc, WR=draw(n(2, 12)), RTP=draw(n(2, 8)), BL=bl, CCD_S=ccd,
        CCD_L=ccd + draw(n(0, 6)), RRD_S=rrd, RRD_L=rrd + draw(n(0, 4)), WTR_S=wtr,
        WTR_L=wtr + draw(n(0, 4)), FAW=draw(st.sampled_from([0, 12, 24])), RFC=rfc,
        REFI=rfc + ras + rp + rc + draw(n(100, 400)), two_cycle_activate=draw(st.booleans()),
    )  # fmt: skip
    organization = dict(
        channels=draw(n(1, 2)), ranks=draw(n(1, 2)), bankgroups=draw(n(1, 4)),
        banks=draw(n(1, 4)), subarrays=draw(n(1, 2)), rows=64, columns=16, access_bytes=64,
    )  # fmt: skip
    controller = dict(row_policy=row_policy, read_queue=queue, write_queue=queue, refresh=True)
    return DramPreset.model_validate({"name": "made-up", "organization": organization,
                                      "timing": timing, "controller": controller})  # fmt: skip


@st.composite
def devices_and_traces(draw):
    row_policy = draw(st.sampled_from(["open", "closed"]))
    queue = draw(st.integers(2, 16))
    preset = draw(st.one_of(
        st.sampled_from(dram_preset_names()).map(lambda name: shrunk(name, row_policy, queue)),
        made_up_devices(row_policy, queue),
    ))  # fmt: skip
    o = preset.organization
    rows = draw(st.integers(1, 4))  # few rows: hits, misses and conflicts all happen
    n = draw(st.integers(1, 120))
    write_share = draw(st.sampled_from([0.0, 0.3, 0.7]))
    most_cycles_apart = draw(st.sampled_from([0, 2, 6]))  # 0: a burst that fills the queues
    requests, now = [], 0
    for _ in range(n):
        now += draw(st.integers(0, most_cycles_apart))
        requests.append(Request(
            arrive=now,
            channel=draw(st.integers(0, o.channels - 1)),
            rank=draw(st.integers(0, o.ranks - 1)),
            bankgroup=draw(st.integers(0, o.bankgroups - 1)),
            bank=draw(st.integers(0, min(o.banks, 8) - 1)),
            row=draw(st.integers(0, rows * o.subarrays - 1)),
            column=draw(st.integers(0, o.columns - 1)),
            write=draw(st.floats(0, 1)) < write_share,
        ))  # fmt: skip
    return preset, requests


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])  # fmt: skip
@given(devices_and_traces())
def test_random_traces_obey_the_dram_protocol_and_counters_match_the_commands(case):
    preset, requests = case
    log, queued, done, d = run_logged(preset, requests)
    assert protocol_violations(preset, requests, log, queued, done) == []
    assert counter_mismatches(preset, requests, log, queued, done, d) == []


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(devices_and_traces())
def test_skipping_the_cycles_a_controller_sleeps_through_changes_no_command(case):
    preset, requests = case
    asleep = run_logged(preset, requests)[0]
    awake = run_logged(preset, requests, every_cycle=True)[0]
    assert asleep == awake


def test_the_checker_catches_a_command_issued_too_early():
    preset = shrunk("ddr3-1600", "open", 8)
    requests = [Request(0, 0, 0, 0, 0, 1, 0, False), Request(0, 0, 0, 0, 0, 2, 0, False)]
    log, queued, done, _ = run_logged(preset, requests)
    assert protocol_violations(preset, requests, log, queued, done) == []
    early = [replace(c, cycle=c.cycle - 1) if c.command == PRE else c for c in log]
    assert any("tRAS" in v or "tRTP" in v for v in protocol_violations(preset, requests, early,
                                                                       queued, done))  # fmt: skip
    assert any("served twice" in v for v in
               protocol_violations(preset, requests, log + log[-1:], queued, done))  # fmt: skip
