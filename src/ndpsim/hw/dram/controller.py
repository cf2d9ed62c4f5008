"""The DRAM controllers of one memory device, compiled.

Each channel has a controller with a read and a write queue. Once per DRAM cycle at most one
command issues per channel (the command bus), chosen by FR-FCFS:

1. a request whose row was opened for it and whose column command is ready, from either queue
   (so a row opened for a read is used even while writes drain, as Ramulator's active buffer);
2. otherwise, in the queue being served, the oldest request whose next command is a ready column
   access (a row hit);
3. otherwise the oldest request in that queue whose next command (ACT or PRE) is ready.

A precharge that would close a row another request already opened is never chosen (an
activated request's row is always its subarray's open row: a refresh's precharge sends it back
to waiting). Writes are buffered and drained in bursts between two watermarks. When a rank's
refresh falls due it takes priority and blocks the channel until the rank is precharged and
refreshed. Every timing check is a lookup in ``ready[node, command]``, kept up to date from the
constraint table (:func:`ndpsim.hw.dram.spec.constraint_table`) as commands issue.

The scheduler looks at every queued request each time it runs, so that look must be cheap. A
command changes timing only along its own path (channel, rank, bank group, bank, subarray), and
channel and rank readiness is looked up once per tick; so each request caches its next command,
the bank-group-and-below part of that command's readiness, its priority key and its
eligibility, stamped with a version of its bank group. Anything that changes a bank group's
timing or row state bumps that version, and a request whose stamp is stale recomputes.

All state lives in NumPy arrays of a :class:`DramState`, so one simulated device is one value
the compiled functions pass around (by reference, :mod:`ndpsim.engine.reference`); nothing here
allocates per request. The helpers of a tick are small and inlined into it by LLVM.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ndpsim.hw.dram.spec import NUM_COMMANDS, Command, DramPreset, constraint_table
from ndpsim.numba_cache import compiled

ACT, PRE, PREA, RD, WR, RDA, WRA, REF = (int(c) for c in Command)
NEVER = np.iinfo(np.int64).max // 4

# params indices
(P_CHANNELS, P_RANKS, P_BANKGROUPS, P_BANKS, P_SUBARRAYS, P_READ_QUEUE, P_WRITE_QUEUE,
 P_WRITE_HIGH, P_WRITE_LOW, P_CL, P_CWL, P_BL, P_REFI, P_RFC, P_REFRESH, P_CLOSED_PAGE,
 P_COLUMNS, P_ROWS, P_RCD, P_RP) = range(20)  # fmt: skip
NUM_PARAMS = 20

# per-channel statistics
(S_READS, S_WRITES, S_ROW_HITS, S_ROW_MISSES, S_ROW_CONFLICTS, S_ACTS, S_PRES, S_REFS,
 S_READ_LATENCY, S_READS_DONE, S_WRITES_DONE, S_BUSY_CYCLES, S_QUEUE_FULL, S_TICKS,
 S_EXAMINED) = range(15)  # fmt: skip
STAT_NAMES = (
    "reads", "writes", "row_hits", "row_misses", "row_conflicts", "activates", "precharges",
    "refreshes", "read_latency_cycles", "reads_done", "writes_done", "data_bus_cycles",
    "rejected_when_full", "scheduler_ticks", "scheduler_requests_examined",
)  # fmt: skip

# states of a queued request
WAITING, ACTIVATED = 1, 2

# Fields of a queued request record: one int64 row per request. The first eight are what the
# scheduler reads for every request on every tick (one 64-byte cache line): the state, the
# cached candidate (stamp, next command, its bank-group-level readiness, priority key, flags)
# and the rank whose gate applies. The rest are read only when the cache is stale.
(F_STATE, F_STAMP, F_BANKGROUP, F_CMD, F_READY, F_KEY, F_FLAGS, F_RANK, F_SUBARRAY, F_ROW,
 F_SEQ, F_NODE, F_TAG, F_COLUMN, F_ARRIVE, F_COUNTED) = (
    0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 16, 17, 18, 19)  # fmt: skip
NUM_FIELDS = 20  # F_NODE .. F_NODE + 4 hold the node ids of channel .. subarray
# F_FLAGS bits: the request's row is open for it (another queue may borrow it); its next
# command is a precharge that would close a row opened for someone else (never chosen)
LENDABLE, PRE_BLOCKED = 1, 2
TIER_SHIFT = 40  # F_KEY = tier << TIER_SHIFT | arrival sequence


class DramState(NamedTuple):
    """Every array of one DRAM device (all of its channels)."""

    params: np.ndarray  # int64[NUM_PARAMS]
    cons_start: np.ndarray  # int64[NUM_COMMANDS + 1]: plain constraints of each command
    cons_next: np.ndarray  # int64[k]: the following command
    cons_level: np.ndarray  # int64[k]
    cons_latency: np.ndarray  # int64[k]
    win_start: np.ndarray  # int64[NUM_COMMANDS + 1]: windowed constraints ("W most recent")
    win_next: np.ndarray
    win_level: np.ndarray
    win_latency: np.ndarray
    win_size: np.ndarray  # W
    level_base: np.ndarray  # int64[NUM_LEVELS]: first node id of each level
    ready: np.ndarray  # int64[nodes, NUM_COMMANDS]: earliest cycle each command may issue
    ring_times: np.ndarray  # int64[rings, nodes, W]: recent issue times for windows
    ring_pos: np.ndarray  # int64[rings, nodes]
    open_row: np.ndarray  # int64[subarrays]: open row, or -1
    activated: np.ndarray  # int64[subarrays]: queued requests whose row was opened for them
    version: np.ndarray  # int64[bank groups]: bumped when a bank group's timing or rows change
    q_activated: np.ndarray  # int64[channel, 2]: activated requests per queue
    # request queues: q[channel, 0 read / 1 write, position, field]; a queue's requests are
    # packed at positions 0 .. q_count - 1 (a finished one's place goes to the last), so the
    # scheduler scans only requests, never holes
    q: np.ndarray
    q_count: np.ndarray  # int64[channel, 2]
    gate: np.ndarray  # int64[ranks, NUM_COMMANDS]: scratch, channel+rank readiness per tick
    write_mode: np.ndarray  # bool[channel]
    refresh_due: np.ndarray  # int64[channel * ranks]
    refresh_pending: np.ndarray  # bool[channel * ranks]
    counters: np.ndarray  # int64[1]: arrival sequence numbers
    # completed requests, for the caller to collect: (tag, cycle data is done, is write)
    done_tag: np.ndarray
    done_cycle: np.ndarray
    done_write: np.ndarray
    done_count: np.ndarray  # int64[1]
    stats: np.ndarray  # int64[channel, len(STAT_NAMES)]
    # each rank (an HBM pseudo-channel) has its own data bus, which carries one burst at a time
    bus_free: np.ndarray  # int64[channel * ranks]: cycle the data bus is free after its bursts
    bus_overlap: np.ndarray  # int64[channel * ranks]: cycles two bursts drove it at once (a
    # timing-table bug: more than 100% busy)


def build_dram_state(preset: DramPreset, completion_capacity: int = 4096) -> DramState:
    """Allocate a device described by ``preset`` with all banks closed and queues empty."""
    o, t, c = preset.organization, preset.timing, preset.controller
    counts = [o.channels, o.ranks, o.bankgroups, o.banks, o.subarrays]
    sizes = np.cumprod(counts)
    level_base = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)
    num_nodes = int(sizes.sum())
    rows = constraint_table(t)
    by_command: list[list[tuple[int, int, int, int]]] = [[] for _ in range(NUM_COMMANDS)]
    for level, preceding, following, latency, window in rows:
        for p in preceding:
            for f in following:
                by_command[int(p)].append((int(f), int(level), int(latency), int(window)))

    def table(keep):
        start = np.zeros(NUM_COMMANDS + 1, dtype=np.int64)
        flat = []
        for cmd in range(NUM_COMMANDS):
            rows_of = [r for r in by_command[cmd] if keep(r)]
            start[cmd + 1] = start[cmd] + len(rows_of)
            flat.extend(rows_of)
        return start, np.array(flat, dtype=np.int64).reshape(-1, 4)

    cons_start, cons = table(lambda r: r[3] == 0)
    win_start, win = table(lambda r: r[3] > 0)
    max_window = int(win[:, 3].max()) if len(win) else 1
    params = np.zeros(NUM_PARAMS, dtype=np.int64)
    params[[P_CHANNELS, P_RANKS, P_BANKGROUPS, P_BANKS, P_SUBARRAYS]] = counts
    params[P_READ_QUEUE] = c.read_queue
    params[P_WRITE_QUEUE] = c.write_queue
    params[P_WRITE_HIGH] = int(np.ceil(c.write_high_watermark * c.write_queue))
    params[P_WRITE_LOW] = int(np.floor(c.write_low_watermark * c.write_queue))
    params[P_CL], params[P_CWL], params[P_BL] = t.CL, t.CWL, t.BL
    params[P_REFI], params[P_RFC] = t.REFI, t.RFC
    params[P_REFRESH] = int(c.refresh)
    params[P_CLOSED_PAGE] = int(c.row_policy == "closed")
    params[P_COLUMNS], params[P_ROWS] = o.columns, o.rows
    params[P_RCD], params[P_RP] = t.RCD, t.RP
    queue = max(c.read_queue, c.write_queue)
    shape = (o.channels, 2, queue)
    ranks = o.channels * o.ranks
    return DramState(
        params=params,
        cons_start=cons_start,
        cons_next=cons[:, 0].copy(),
        cons_level=cons[:, 1].copy(),
        cons_latency=cons[:, 2].copy(),
        win_start=win_start,
        win_next=win[:, 0].copy(),
        win_level=win[:, 1].copy(),
        win_latency=win[:, 2].copy(),
        win_size=win[:, 3].copy(),
        level_base=level_base,
        ready=np.zeros((num_nodes, NUM_COMMANDS), dtype=np.int64),
        ring_times=np.full((max(len(win), 1), num_nodes, max_window), -NEVER, np.int64),
        ring_pos=np.zeros((max(len(win), 1), num_nodes), dtype=np.int64),
        open_row=np.full(int(sizes[-1]), -1, dtype=np.int64),
        activated=np.zeros(int(sizes[-1]), dtype=np.int64),
        version=np.zeros(int(sizes[2]), dtype=np.int64),
        q_activated=np.zeros((o.channels, 2), dtype=np.int64),
        q=np.zeros((*shape, NUM_FIELDS), dtype=np.int64),
        q_count=np.zeros((o.channels, 2), dtype=np.int64),
        gate=np.zeros((o.ranks, NUM_COMMANDS), dtype=np.int64),
        write_mode=np.zeros(o.channels, dtype=np.bool_),
        refresh_due=np.full(ranks, t.REFI, dtype=np.int64),
        refresh_pending=np.zeros(ranks, dtype=np.bool_),
        counters=np.zeros(1, dtype=np.int64),
        done_tag=np.zeros(completion_capacity, dtype=np.int64),
        done_cycle=np.zeros(completion_capacity, dtype=np.int64),
        done_write=np.zeros(completion_capacity, dtype=np.bool_),
        done_count=np.zeros(1, dtype=np.int64),
        stats=np.zeros((o.channels, len(STAT_NAMES)), dtype=np.int64),
        bus_free=np.zeros(ranks, dtype=np.int64),
        bus_overlap=np.zeros(ranks, dtype=np.int64),
    )


# ------------------------------------------------------------------------------ nodes
@compiled(inline=True)
def _nodes(d, ch, rank, bankgroup, bank, subarray, out):
    """Node ids of the path channel -> rank -> bank group -> bank -> subarray."""
    p = d.params
    r = ch * p[P_RANKS] + rank
    g = r * p[P_BANKGROUPS] + bankgroup
    b = g * p[P_BANKS] + bank
    s = b * p[P_SUBARRAYS] + subarray
    base = d.level_base
    out[0] = base[0] + ch
    out[1] = base[1] + r
    out[2] = base[2] + g
    out[3] = base[3] + b
    out[4] = base[4] + s


@compiled(inline=True)
def _earliest(d, cmd, nodes, depth):
    """Earliest cycle ``cmd`` may issue on the path (down to level ``depth``)."""
    t = d.ready[nodes[0], cmd]
    for level in range(1, depth + 1):
        v = d.ready[nodes[level], cmd]
        if v > t:
            t = v
    return t


@compiled(inline=True)
def _apply_constraints(d, cmd, nodes, depth, now):
    """Record that ``cmd`` issued at ``now`` on the path: push back every following command.
    Constraints below ``depth`` are skipped (a rank-wide command touches no single bank)."""
    ready = d.ready
    for k in range(d.cons_start[cmd], d.cons_start[cmd + 1]):
        level = d.cons_level[k]
        if level <= depth:
            node = nodes[level]
            nxt = d.cons_next[k]
            ready[node, nxt] = max(ready[node, nxt], now + d.cons_latency[k])
    for k in range(d.win_start[cmd], d.win_start[cmd + 1]):
        level = d.win_level[k]
        if level <= depth:
            node = nodes[level]
            window = d.win_size[k]
            pos = d.ring_pos[k, node]
            d.ring_times[k, node, pos] = now
            pos = (pos + 1) % window
            d.ring_pos[k, node] = pos
            nxt = d.win_next[k]  # the W-th most recent issue plus the latency
            ready[node, nxt] = max(ready[node, nxt], d.ring_times[k, node, pos] + d.win_latency[k])


@compiled(inline=True)
def _rank_is_open(d, ch, rank):
    p = d.params
    per_rank = p[P_BANKGROUPS] * p[P_BANKS] * p[P_SUBARRAYS]
    first = (ch * p[P_RANKS] + rank) * per_rank
    for s in range(first, first + per_rank):
        if d.open_row[s] >= 0:
            return True
    return False


@compiled
def _close_rank(d, ch, rank):
    """Close every row of a rank; requests they were opened for must activate again."""
    p = d.params
    per_rank = p[P_BANKGROUPS] * p[P_BANKS] * p[P_SUBARRAYS]
    first = (ch * p[P_RANKS] + rank) * per_rank
    for s in range(first, first + per_rank):
        d.open_row[s] = -1
        d.activated[s] = 0
    groups = p[P_BANKGROUPS]
    for g in range((ch * p[P_RANKS] + rank) * groups, (ch * p[P_RANKS] + rank + 1) * groups):
        d.version[g] += 1
    for kind in range(2):
        for pos in range(d.q_count[ch, kind]):
            rec = d.q[ch, kind, pos]
            if rec[F_STATE] == ACTIVATED and first <= rec[F_SUBARRAY] < first + per_rank:
                rec[F_STATE] = WAITING
                d.q_activated[ch, kind] -= 1


# ---------------------------------------------------------------------------- requests
@compiled(inline=True)
def enqueue(d, ch, is_write, tag, rank, bankgroup, bank, row, column, now):
    """Add a request to channel ``ch``'s read or write queue; False if that queue is full."""
    kind = 1 if is_write else 0
    capacity = d.params[P_WRITE_QUEUE] if is_write else d.params[P_READ_QUEUE]
    if d.q_count[ch, kind] >= capacity:
        d.stats[ch, S_QUEUE_FULL] += 1
        return False
    rec = d.q[ch, kind, d.q_count[ch, kind]]
    rec[F_STATE] = WAITING
    rec[F_TAG] = tag
    _nodes(d, ch, rank, bankgroup, bank, row % d.params[P_SUBARRAYS], rec[F_NODE : F_NODE + 5])
    rec[F_SUBARRAY] = rec[F_NODE + 4] - d.level_base[4]
    rec[F_BANKGROUP] = rec[F_NODE + 2] - d.level_base[2]
    rec[F_STAMP] = -1  # no cached candidate yet
    rec[F_ROW] = row
    rec[F_RANK] = rank
    rec[F_COLUMN] = column
    rec[F_ARRIVE] = now
    rec[F_SEQ] = d.counters[0]
    rec[F_COUNTED] = 0
    d.counters[0] += 1
    d.q_count[ch, kind] += 1
    d.stats[ch, S_WRITES if is_write else S_READS] += 1
    return True


@compiled(inline=True)
def _finish(d, ch, kind, pos, now):
    """A request's column command issued: report when its data is done and drop it from its
    queue (the queue's last request takes its place)."""
    p = d.params
    rec = d.q[ch, kind, pos]
    if kind == 0:
        done = now + p[P_CL] + p[P_BL]
        d.stats[ch, S_READ_LATENCY] += done - rec[F_ARRIVE]
        d.stats[ch, S_READS_DONE] += 1
    else:
        done = now + p[P_CWL] + p[P_BL]
        d.stats[ch, S_WRITES_DONE] += 1
    d.stats[ch, S_BUSY_CYCLES] += p[P_BL]
    bus = ch * p[P_RANKS] + rec[F_RANK]
    free = d.bus_free[bus]
    d.bus_overlap[bus] += max(min(free, done) - (done - p[P_BL]), 0)
    d.bus_free[bus] = max(free, done)
    i = d.done_count[0]
    if i < d.done_tag.shape[0]:
        d.done_tag[i] = rec[F_TAG]
        d.done_cycle[i] = done
        d.done_write[i] = kind == 1
    d.done_count[0] = i + 1  # beyond capacity means the caller drained too rarely
    if rec[F_STATE] == ACTIVATED:
        d.activated[rec[F_SUBARRAY]] -= 1
        d.q_activated[ch, kind] -= 1
    last = d.q_count[ch, kind] - 1
    if pos != last:
        moved = d.q[ch, kind, last]
        for f in range(NUM_FIELDS):
            rec[f] = moved[f]
    d.q_count[ch, kind] = last


# -------------------------------------------------------------------------------- tick
@compiled(inline=True)
def _candidate(d, rec, k, closed_page):
    """Recompute a request's cached candidate: its next command, when the bank group, bank and
    subarray allow it, its priority key and flags; stamp it with its bank group's version."""
    ready = d.ready
    sub = rec[F_SUBARRAY]
    row_open = d.open_row[sub]
    hit = row_open == rec[F_ROW]
    if hit:
        cmd = (WRA if k == 1 else RDA) if closed_page else (WR if k == 1 else RD)
    else:
        cmd = PRE if row_open >= 0 else ACT
    activated = rec[F_STATE] == ACTIVATED
    rec[F_CMD] = cmd
    rec[F_READY] = max(ready[rec[F_NODE + 4], cmd], ready[rec[F_NODE + 3], cmd],
                       ready[rec[F_NODE + 2], cmd])  # fmt: skip
    tier = (0 if activated else 1) if hit else 2
    rec[F_KEY] = (tier << TIER_SHIFT) + rec[F_SEQ]
    flags = 0
    if activated and hit:
        flags |= LENDABLE
    if cmd == PRE and d.activated[sub] > 0:
        flags |= PRE_BLOCKED
    rec[F_FLAGS] = flags
    rec[F_STAMP] = d.version[rec[F_BANKGROUP]]


@compiled(inline=True)
def _refresh(d, ch, now, nodes):
    """Serve due refreshes of the channel's ranks. Returns (issued a command, block until):
    a pending refresh that cannot issue yet blocks the channel until the returned cycle."""
    p = d.params
    for rank in range(p[P_RANKS]):
        rk = ch * p[P_RANKS] + rank
        behind = (now - d.refresh_due[rk]) // p[P_REFI]
        if behind > 0 and not d.refresh_pending[rk]:
            # A channel with nothing queued sleeps until a request comes: the refreshes that
            # fell due meanwhile were done then, on idle banks (which they left precharged),
            # and delay nobody now.
            d.refresh_due[rk] += behind * p[P_REFI]
            d.stats[ch, S_REFS] += behind
            _close_rank(d, ch, rank)
        if not d.refresh_pending[rk] and now >= d.refresh_due[rk]:
            d.refresh_pending[rk] = True
            d.refresh_due[rk] += p[P_REFI]
        if not d.refresh_pending[rk]:
            continue
        _nodes(d, ch, rank, 0, 0, 0, nodes)
        cmd = PREA if _rank_is_open(d, ch, rank) else REF
        t = _earliest(d, cmd, nodes, 1)
        if t > now:
            return False, t
        _apply_constraints(d, cmd, nodes, 1, now)
        _close_rank(d, ch, rank)
        if cmd == REF:
            d.refresh_pending[rk] = False
            d.stats[ch, S_REFS] += 1
        else:
            d.stats[ch, S_PRES] += 1
        return True, now + 1
    return False, 0


@compiled
def tick(d, ch, now, nodes):
    """Issue at most one command on channel ``ch`` at DRAM cycle ``now``.

    Returns the next cycle at which the channel may have something to do (``NEVER`` when idle
    with nothing queued and refresh off). ``nodes`` is an int64[5] scratch array.
    """
    p = d.params
    d.stats[ch, S_TICKS] += 1
    if p[P_REFRESH]:
        issued, until = _refresh(d, ch, now, nodes)
        if issued:
            return now + 1
        if until > now:
            return until
    # Which queue: drain writes between the watermarks, or when there is nothing to read.
    reads, writes = d.q_count[ch, 0], d.q_count[ch, 1]
    if d.write_mode[ch]:
        if writes <= p[P_WRITE_LOW] and reads > 0:
            d.write_mode[ch] = False
    elif writes >= p[P_WRITE_HIGH] or (reads == 0 and writes > 0):
        d.write_mode[ch] = True
    kind = 1 if d.write_mode[ch] else 0
    if d.q_count[ch, kind] == 0:
        kind = 1 - kind
        if d.q_count[ch, kind] == 0:
            return _idle_until(d, ch, now)
    best_kind = -1
    best_pos = -1
    best_cmd = 0
    wake = NEVER
    ready, version = d.ready, d.version
    closed_page = p[P_CLOSED_PAGE] != 0
    # Channel- and rank-level readiness is shared by every request of a rank: look it up once.
    gate = d.gate
    channel_node = d.level_base[0] + ch
    read_cmd = RDA if closed_page else RD
    write_cmd = WRA if closed_page else WR
    for rank in range(p[P_RANKS]):
        rank_node = d.level_base[1] + ch * p[P_RANKS] + rank
        for c in (ACT, PRE, read_cmd, write_cmd):
            gate[rank, c] = max(ready[channel_node, c], ready[rank_node, c])
    examined = 0
    ready_now = 0  # candidates whose command could issue this cycle
    best_key = NEVER  # tier * 2**40 + arrival sequence: lower is better
    for k in range(2):
        lend_only = k != kind
        if lend_only and d.q_activated[ch, k] == 0:
            continue  # the other queue lends only rows opened for its requests
        queue = d.q[ch, k]
        count = d.q_count[ch, k]
        examined += count
        for pos in range(count):
            rec = queue[pos]
            if rec[F_STAMP] != version[rec[F_BANKGROUP]]:
                _candidate(d, rec, k, closed_page)
            local = rec[F_READY]
            if local > now:  # its bank is not ready: no need to look at the channel or rank
                wake = min(wake, local)
                continue
            cmd = rec[F_CMD]
            t = max(gate[rec[F_RANK], cmd], local)
            flags = rec[F_FLAGS]
            # The other queue lends only rows opened for its requests; a row opened for a
            # waiting request is never precharged.
            eligible = (not lend_only or (flags & LENDABLE) != 0) and (flags & PRE_BLOCKED) == 0
            is_ready = t <= now
            wake = min(wake, t if not is_ready else NEVER)
            ready_now += is_ready
            key = rec[F_KEY] if (is_ready and eligible) else NEVER
            if key < best_key:
                best_key, best_kind, best_pos, best_cmd = key, k, pos, cmd
    d.stats[ch, S_EXAMINED] += examined
    if best_key >= NEVER:
        return min(wake, _idle_until(d, ch, now))
    kind, pos, cmd = best_kind, best_pos, best_cmd
    rec = d.q[ch, kind, pos]
    s_index = rec[F_SUBARRAY]
    if not rec[F_COUNTED]:
        rec[F_COUNTED] = 1
        if cmd == ACT:
            d.stats[ch, S_ROW_MISSES] += 1
        elif cmd == PRE:
            d.stats[ch, S_ROW_CONFLICTS] += 1
        else:
            d.stats[ch, S_ROW_HITS] += 1
    _apply_constraints(d, cmd, rec[F_NODE : F_NODE + 5], 4, now)
    version[rec[F_BANKGROUP]] += 1
    if cmd == ACT:
        d.open_row[s_index] = rec[F_ROW]
        rec[F_STATE] = ACTIVATED
        d.activated[s_index] += 1
        d.q_activated[ch, kind] += 1
        d.stats[ch, S_ACTS] += 1
        reopened = now + p[P_RCD]  # requests to the opened row read no earlier
    elif cmd == PRE:
        d.open_row[s_index] = -1
        d.stats[ch, S_PRES] += 1
        reopened = now + p[P_RP]  # requests to the closed subarray activate no earlier
    else:
        if cmd in (RDA, WRA):
            d.open_row[s_index] = -1
        _finish(d, ch, kind, pos, now)
        return now + 1  # queue counts changed: the write/read mode may switch next cycle
    if ready_now > 1:
        return now + 1
    # It was the only ready candidate: commands only ever push others later, so nothing can
    # issue before the earliest of the others, the requests whose row state just changed, and
    # the next refresh.
    return max(min(wake, reopened, _idle_until(d, ch, now)), now + 1)


@compiled(inline=True)
def _idle_until(d, ch, now):
    """The next cycle a refresh of the channel falls due (never without refresh)."""
    p = d.params
    if not p[P_REFRESH]:
        return NEVER
    due = NEVER
    for rank in range(p[P_RANKS]):
        t = d.refresh_due[ch * p[P_RANKS] + rank]
        if t < due:
            due = t
    return max(due, now + 1)


def pending(d: DramState) -> int:
    """Requests still queued in any channel."""
    return int(d.q_count.sum())
