"""The CPU host's coherent cache hierarchy (issue 49, items 3 and 6): each level's latency
measured by a pointer chase, MESI between cores, inclusion, MSHR merging and the stream
prefetcher, with a memory of fixed latency behind the LLC."""

from __future__ import annotations

import numpy as np

from ndpsim.hw import cache as cachemod
from ndpsim.hw.core.cpu_config import CpuCoreConfig
from ndpsim.hw.cpu import caches as cc
from ndpsim.hw.cpu import core as cpu
from ndpsim.trace.cpu_work import K_INT, K_LOAD, CpuWork, stream_work

PERIOD_PS = 1000
LINE = 64
#: ALP Table 1's latencies on caches scaled down (1 KB, 4 KB, 16 KB) so a test walks past each.
L1, L2, LLC = (1024, 2, 4), (4096, 4, 7), (16384, 8, 27)
MEMORY_CYCLES = 100


def hierarchy(cores=1, prefetch_degree=0, llc=LLC, coherence_cycles=20):
    return cc.build_caches(cores, PERIOD_PS, LINE, L1, L2, llc, llc_mshrs=16,
                           coherence_cycles=coherence_cycles, streams=16,
                           prefetch_degree=prefetch_degree)  # fmt: skip


def chase(lines: np.ndarray, repeat: int, extra: int = 0) -> CpuWork:
    """A pointer chase over ``lines`` (each load's address comes from the previous load),
    ``repeat`` times round, each load followed by ``extra`` independent instructions."""
    order = np.tile(lines, repeat)
    pcs = np.tile(np.array([0] + [1] * extra), len(order))
    return stream_work(pcs, [K_LOAD, K_INT], [[0], []], [[0], [1]], addresses=order * LINE)


def run(work: CpuWork, h: cc.CpuCaches):
    """``work``'s threads on cores in front of ``h``, memory answering ``MEMORY_CYCLES`` after a
    read; returns the cycles and the memory reads."""
    config = CpuCoreConfig()
    cores = cpu.build_cores(work, config.params(PERIOD_PS), config.latencies())
    pending: list[tuple[int, str, tuple]] = []  # (time, what, details)
    waiting: dict[int, list[tuple[int, int, bool]]] = {}  # LLC MSHR -> (core, entry, write)
    prefetched: set[tuple[int, int]] = set()  # (core, line) on their way from memory
    reads = 0
    now = 0

    def answer(c, e, write, t):
        if write:
            pending.append((t, "written", (c,)))
        else:
            cpu.load_done(cores, work, c, e, t)

    def fetch(c, line, m, t):
        nonlocal reads
        reads += 1
        pending.append((t + MEMORY_CYCLES * PERIOD_PS, "filled", (c, line, m)))

    while not all(cpu.finished(cores, c) for c in range(work.threads)):
        for item in sorted(p for p in pending if p[0] <= now):
            pending.remove(item)
            t, what, details = item
            if what == "written":
                cpu.store_written(cores, details[0])
                continue
            c, line, m = details
            cc.fill_from_memory(h, c, line, m)
            for cw, e, write in waiting.pop(m, []):
                answer(cw, e, write, cc.complete_miss(h, cw, line, write, t))
            if (c, line) in prefetched:
                prefetched.remove((c, line))
                cc.fill_prefetched(h, c, line)
        cpu.tick(cores, work, now)
        k = 0
        while k < cores.req_used[0]:
            c, e = int(cores.req_core[k]), int(cores.req_entry[k])
            write = int(cores.req_kind[k]) == cpu.REQ_STORE
            line = int(cores.req_address[k]) // LINE
            t, outcome, m = cc.access(h, c, line, write, int(cores.req_time[k]))
            if outcome == cc.HIT:
                answer(c, e, write, t)
            elif outcome == cc.MISS:
                waiting.setdefault(m, []).append((c, e, write))
                fetch(c, line, m, t)
            elif outcome == cc.MERGED:
                waiting.setdefault(m, []).append((c, e, write))
            else:
                raise AssertionError("the test's LLC has MSHRs enough")
            for n in range(int(h.prefetch_used[0])):
                c_p, line_p = int(h.prefetch_core[n]), int(h.prefetch_line[n])
                prefetched.add((c_p, line_p))
                fetch(c_p, line_p, int(h.prefetch_mshr[n]), t)
            h.prefetch_used[0] = 0
            k += 1
        cores.req_used[0] = 0
        now += PERIOD_PS
        assert now < 10**10
    return now // PERIOD_PS, reads


def test_a_pointer_chase_measures_each_levels_latency():
    rng = np.random.default_rng(0)
    per_load = []
    for lines in (8, 48, 200, 2048):  # in L1, L2, LLC, beyond the LLC
        working_set = rng.permutation(lines)
        h = hierarchy()
        warm, _ = run(chase(working_set, 1), h)  # cold misses, then warm
        both, _ = run(chase(working_set, 5), hierarchy())
        per_load.append((both - warm) / (4 * lines))
    l1, l2, llc, memory = per_load
    assert abs(l1 - 4) < 1
    assert abs(l2 - (4 + 7)) < 1.5
    assert abs(llc - (4 + 7 + 27)) < 2
    assert abs(memory - (4 + 7 + 27 + MEMORY_CYCLES)) < 3


def test_a_line_written_by_one_core_and_read_by_another_moves_through_the_directory():
    h = hierarchy(cores=2)
    t, outcome, m = cc.access(h, 0, 5, True, 0)  # core 0 writes line 5: a miss
    assert outcome == cc.MISS
    cc.fill_from_memory(h, 0, 5, m)
    cc.complete_miss(h, 0, 5, True, t)
    t, outcome, _ = cc.access(h, 1, 5, False, 10**6)  # core 1 reads it: 0 is downgraded
    assert outcome == cc.HIT
    assert h.stats[1, cc.X_DOWNGRADES] == 1
    assert t == 10**6 + (4 + 7 + 27 + 20) * PERIOD_PS  # the levels plus a coherence round
    s, w = cachemod.way_of(h.llc, 0, 5)
    assert h.llc.dirty[0, s, w]  # core 0's data went to the LLC
    _, outcome, _ = cc.access(h, 1, 5, True, 2 * 10**6)  # core 1 writes: an upgrade
    assert outcome == cc.HIT
    assert h.stats[1, cc.X_UPGRADES] == 1 and h.stats[1, cc.X_INVALIDATIONS] == 1
    assert not cachemod.probe(h.l1, 0, 5) and not cachemod.probe(h.l2, 0, 5)
    assert h.owner[s, w] == 1 and h.sharers[s, w] == 0b10


def test_a_write_to_a_line_the_core_owns_exclusively_needs_no_directory():
    h = hierarchy(cores=2)
    t, _, m = cc.access(h, 0, 9, False, 0)
    cc.fill_from_memory(h, 0, 9, m)
    cc.complete_miss(h, 0, 9, False, t)  # nobody else has it: Exclusive
    t, outcome, _ = cc.access(h, 0, 9, True, 10**6)
    assert outcome == cc.HIT and t == 10**6 + 4 * PERIOD_PS
    assert h.stats[0, cc.X_UPGRADES] == 0


def test_inclusive_llc_evictions_invalidate_private_copies():
    h = hierarchy(llc=(2 * LINE, 2, 27))  # an LLC of two lines
    for line in (1, 2, 3):
        t, outcome, m = cc.access(h, 0, line, line == 1, 0)
        assert outcome == cc.MISS
        cc.fill_from_memory(h, 0, line, m)
        cc.complete_miss(h, 0, line, line == 1, t)
    assert h.stats[0, cc.X_BACK_INVALIDATIONS] == 1
    assert not cachemod.probe(h.l1, 0, 1) and not cachemod.probe(h.l2, 0, 1)
    assert list(h.writeback_line[: h.writeback_used[0]]) == [1]  # it was dirty


def test_a_second_miss_to_a_line_in_flight_merges_into_its_mshr():
    h = hierarchy(cores=2)
    _, first, m = cc.access(h, 0, 7, False, 0)
    _, second, m2 = cc.access(h, 1, 7, False, 0)
    assert (first, second, m2) == (cc.MISS, cc.MERGED, m)
    assert h.stats[1, cc.X_LLC_MERGED] == 1


def test_the_stream_prefetcher_hides_a_sequential_walk():
    walk = np.arange(600)
    plain, plain_reads = run(chase(walk, 1, extra=20), hierarchy())
    fetched, fetched_reads = run(chase(walk, 1, extra=20), hierarchy(prefetch_degree=4))
    assert fetched < 0.7 * plain
    assert abs(fetched_reads - plain_reads) <= 4 + 1  # the same lines, read ahead
