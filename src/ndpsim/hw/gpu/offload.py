"""Offloading code blocks from GPU warps to processors in the memory stacks, compiled.

Two ways to run a block near memory share this state:

* **TOM** (Hsieh et al., ISCA 2016, sec. 4.2): the whole block goes to the SM in the logic layer
  of one stack, which runs it, accessing memory itself, and acknowledges it with the live-outs.
* **SNDP** (Kim et al., SC 2017, sec. 4), *partitioned execution*: the GPU warp keeps computing
  the block's addresses. At ``OFLD.BEG`` it reserves buffer entries at the target stack's NSU
  (credits, sec. 4.3) and sends a command packet with the live-ins. Each load then becomes
  read-and-forward (RDF) packets: answered from the GPU's caches on a hit, else forwarded by
  the owning vault over the memory network to the NSU. Each store becomes write-address (WTA)
  packets. The NSU runs the value-computing instructions, writes through the owning vaults, and
  acknowledges the block once its writes are done.

What the model needs, found before the run (:mod:`ndpsim.systems.offload`):

* **instances**: every dynamic execution of a block by one warp, with where it starts and ends
  in the warp's instruction stream, its destination stack, its loop trip count as executed,
  and the registers to carry. ``pos_instance`` marks the stream positions where one starts,
  so a warp reaching that position consults the controller.
* **the offload controller** (:func:`decide`, :func:`admit`). Each scheme registers its
  compiled decision in :data:`DECISIONS` (:mod:`ndpsim.policy.offload.tom`: the three steps of
  TOM's sec. 4.2, with the destination learned at the block's first access, footnote 4, and
  :func:`admit` refusing a stack whose SM slots are all pending; :mod:`ndpsim.policy.offload.sndp`:
  every instance, a random fraction against a static ratio or Algorithm 1's, and with cache
  awareness never a block whose measured benefit does not beat its register traffic). This
  module keeps the hardware they share: the Channel Busy Monitor, the random draws, the
  counters.
* per stack, a FIFO of arrived offloads waiting for a free warp slot (TOM without control does
  not bound it; SNDP's credits bound it by the command buffer), and a FIFO of GPU warps waiting
  for credits.
* TOM's learning phase (sec. 4.3): while it lasts nothing is offloaded. The Memory Map Analyzer
  watches every instance a GPU warp runs (:func:`observe`; sec. 6.6 sizes it for every
  concurrent warp of an SM), and an instance counts as seen once its warp issued its last
  instruction (:func:`observed_progress`). When it has seen the wanted number, the run stops
  to choose the data mapping; instances still running then were not seen whole and do not
  count.

Slots and SMs live in :class:`ndpsim.hw.core.sm.SmState`; its ``stack`` array says which units
sit in a memory stack, ``stack_unit`` which unit runs each stack's offloaded blocks.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ndpsim.engine.dispatch import CompiledTable
from ndpsim.numba_cache import compiled

# parameters
(O_EXECUTION, O_CONTROL, O_LATENCY_PS, O_CAPACITY, O_HEADER, O_WINDOW_PS, O_THRESHOLD_PERMILLE,
 O_CUBES, O_REGISTER_BYTES, O_DECISION, O_CACHE_AWARE, O_READY_PACKETS, O_WARP_LIMIT,
 O_RUN_TO_FIRST_ACCESS, O_FLUSH_STACK_L1, O_POLICY) = range(16)  # fmt: skip
OFFLOAD_PARAMS = 16
# O_POLICY: the code of the offload scheme's decision in DECISIONS
# what the controller does with a block a warp reaches (TOM)
DECLINE, OFFLOAD, RUN_TO_FIRST_ACCESS = 0, 1, 2
# how a stack processor runs an offloaded block: whole (TOM's stack SM, sec. 4.2), or partitioned
# with the GPU warp, which keeps computing addresses (SNDP's NSU, sec. 4)
EXECUTE_WHOLE, EXECUTE_PARTITIONED = 0, 1
# SNDP decisions: every instance, or a random fraction (control[C_RATIO_PERMILLE])
DECIDE_ALWAYS, DECIDE_RATIO = 0, 1

# what an instruction of an SNDP block does (pc_role); 0: not in a block
ROLE_GPU, ROLE_NSU, ROLE_BOTH, ROLE_LOAD, ROLE_STORE = 1, 2, 3, 4, 5
ROLE_CODES = {"gpu": ROLE_GPU, "nsu": ROLE_NSU, "both": ROLE_BOTH, "load": ROLE_LOAD,
              "store": ROLE_STORE}  # fmt: skip

# NSU buffers reserved by credits (SNDP sec. 4.3): offload commands, read data, write addresses
CREDIT_COMMAND, CREDIT_READ_DATA, CREDIT_WRITE_ADDRESS = 0, 1, 2
CREDIT_NAMES = ("command", "read_data", "write_address")

# run-time control: the offload ratio Algorithm 1 sets, the random state, instructions of
# offload blocks completed (the throughput Algorithm 1 measures, offloaded or not); TOM's
# learning phase: whether it lasts, instances still to see whole, watched ones still running
(C_RATIO_PERMILLE, C_RANDOM, C_BLOCK_INSTRUCTIONS, C_LEARNING, C_LEARN_LEFT,
 C_LEARN_RUNNING) = range(6)  # fmt: skip
CONTROL_FIELDS = 6
#: inst_home of an instance the learning phase's analyzer has seen whole
SEEN = -2

# candidate tag bits (Eq. 3/4 signs): offloading saves TX / RX traffic
SAVES_TX, SAVES_RX = 1, 2

# per-stack counters
# (redundant_instructions / redundant_thread_instructions: warp (thread) instructions a GPU
# warp ran before its block's first memory access and the stack SM ran again, footnote 4;
# stack_l1_flushes: L1 invalidations of a stack SM before an offloaded block, sec. 4.4.2;
# rdf_cache_hits: RDF packets whose line the GPU's L1 or L2 held, rdf_l1_hits those of them
# the L1 held, which pass their L2 slice without looking it up)
(K_OFFLOADED, K_DECLINED_CONDITION, K_DECLINED_PENDING, K_DECLINED_BUSY, K_QUEUED,
 K_ACKED, K_INVALIDATIONS, K_DECLINED_RATIO, K_DECLINED_CACHE, K_CREDIT_WAITS, K_RDF,
 K_RDF_HITS, K_WTA, K_NSU_WRITES, K_REDUNDANT, K_REDUNDANT_THREADS,
 K_L1_FLUSHES, K_RDF_L1_HITS) = range(18)  # fmt: skip
OFFLOAD_STAT_NAMES = (
    "offloaded", "declined_condition", "declined_pending", "declined_busy",
    "waited_for_slot", "acknowledged", "invalidated_lines", "declined_ratio",
    "declined_cache", "waited_for_credits", "rdf_packets", "rdf_cache_hits", "wta_packets",
    "nsu_writes", "redundant_instructions", "redundant_thread_instructions",
    "stack_l1_flushes", "rdf_l1_hits",
)  # fmt: skip


class OffloadState(NamedTuple):
    params: np.ndarray  # int64[OFFLOAD_PARAMS]
    pos_instance: np.ndarray  # int64[instructions]: instance starting there, or -1 (empty
    # array: nothing to offload in this launch)
    inst_start: np.ndarray  # int64[instances]: stream position of the block's first instruction
    inst_end: np.ndarray  # stream position after its last
    inst_candidate: np.ndarray
    inst_dest: np.ndarray  # stack (cube) the block runs in, -1 if it touches no memory
    inst_trips: np.ndarray  # loop iterations the instance executes (its candidate's loop)
    inst_probe: np.ndarray  # stream position of its first global/local memory access, which
    # names the destination (footnote 4), or -1 if it touches no memory
    inst_next: np.ndarray  # link of the stacks' queues (engine.fifo): offloads waiting for a
    # slot, or GPU warps waiting for credits; an instance is in at most one of them
    inst_home: np.ndarray  # the GPU warp slot that offloaded it (sm * slots + slot), or, in
    # TOM's learning phase, that runs it under the analyzer's watch (SEEN once seen whole)
    inst_runner: np.ndarray  # the stack-SM slot running it (sm * slots + slot), or -1
    inst_acked: np.ndarray  # bool: acknowledged before its GPU warp finished its part (SNDP)
    cand_threshold: np.ndarray  # int64[candidates]: minimum trip count (0: unconditional)
    cand_tag: np.ndarray  # SAVES_TX | SAVES_RX
    cand_live_in_first: np.ndarray  # CSR of live-in registers (timing-model numbering)
    cand_live_in: np.ndarray
    cand_live_out_first: np.ndarray  # CSR of live-out registers
    cand_live_out: np.ndarray
    cand_loads: np.ndarray  # int64[candidates]: load / store instructions (the read-data and
    cand_stores: np.ndarray  # write-address entries an SNDP block reserves)
    cand_offloaded: np.ndarray  # int64[candidates]: instances offloaded so far (SNDP)
    cand_rdf: np.ndarray  # RDF packets they generated, and how many hit in the GPU's caches
    cand_rdf_hits: np.ndarray
    pc_role: np.ndarray  # int64[pcs]: ROLE_* of each instruction of an SNDP block, 0 outside
    pos_arrived: np.ndarray  # int64[instructions]: RDF data / WTA packets in the NSU's buffers
    # for the memory instruction at that stream position (SNDP)
    credits: np.ndarray  # int64[cubes, 3]: free NSU buffer entries the GPU may still reserve
    credits_low: np.ndarray  # int64[cubes, 3]: the fewest ever free (never below 0)
    credit_head: np.ndarray  # int64[cubes]: GPU warps waiting for credits (a queue of instances
    credit_tail: np.ndarray  # per stack, engine.fifo)
    ready_packets: np.ndarray  # int64[sms]: RDF/WTA packets in each GPU SM's ready buffer
    control: np.ndarray  # int64[CONTROL_FIELDS]
    pending: np.ndarray  # int64[cubes]: offloads sent to the stack and not acknowledged
    queue_head: np.ndarray  # int64[cubes]: arrived offloads waiting for a stack-SM slot (a
    queue_tail: np.ndarray  # queue per stack, engine.fifo)
    tx_link: np.ndarray  # int64[cubes]: GPU -> stack link (TX channel)
    rx_link: np.ndarray  # int64[cubes]: stack -> GPU link (RX channel)
    monitor: np.ndarray  # int64[2 + 2 * cubes]: window start, spare, busy ps of every channel
    # at the window start
    busy: np.ndarray  # bool[2 * cubes]: channel busy in the last window (TX of each stack,
    # then RX of each stack)
    stats: np.ndarray  # int64[cubes, len(OFFLOAD_STAT_NAMES)]
    # per warp slot of every unit (the SIMT core keeps none of this: hw/gpu/offload_execution)
    slot_instance: np.ndarray  # int64[sms, slots]: offloaded instance the slot waits for (GPU
    # SMs) or runs (stack processors), -1 if none
    slot_decided: np.ndarray  # int64[sms, slots]: stream position of the last offload decision
    slot_probe: np.ndarray  # int64[sms, slots]: instance a GPU warp runs up to its first memory
    # access, where the offload controller finishes its decision (TOM footnote 4), or -1
    stack_units: np.ndarray  # int64[stacks, most]: the processors in each stack's logic layer,
    # which run its offloaded blocks, padded with -1


def no_offload() -> OffloadState:
    """The state of a system without stack processors (or a launch without candidates)."""
    empty = np.zeros(0, dtype=np.int64)
    return OffloadState(
        params=np.zeros(OFFLOAD_PARAMS, dtype=np.int64),
        pos_instance=empty,
        inst_start=empty,
        inst_end=empty,
        inst_candidate=empty,
        inst_dest=empty,
        inst_trips=empty,
        inst_probe=empty,
        inst_next=empty,
        inst_home=empty,
        inst_runner=empty,
        inst_acked=np.zeros(0, dtype=np.bool_),
        cand_threshold=empty,
        cand_tag=empty,
        cand_live_in_first=np.zeros(1, dtype=np.int64),
        cand_live_in=empty,
        cand_live_out_first=np.zeros(1, dtype=np.int64),
        cand_live_out=empty,
        cand_loads=empty,
        cand_stores=empty,
        cand_offloaded=empty,
        cand_rdf=empty,
        cand_rdf_hits=empty,
        pc_role=empty,
        pos_arrived=empty,
        credits=np.zeros((0, 3), dtype=np.int64),
        credits_low=np.zeros((0, 3), dtype=np.int64),
        credit_head=empty,
        credit_tail=empty,
        ready_packets=empty,
        control=np.zeros(CONTROL_FIELDS, dtype=np.int64),
        pending=empty,
        queue_head=empty,
        queue_tail=empty,
        tx_link=empty,
        rx_link=empty,
        monitor=np.zeros(2, dtype=np.int64),
        busy=np.zeros(0, dtype=np.bool_),
        stats=np.zeros((0, len(OFFLOAD_STAT_NAMES)), dtype=np.int64),
        slot_instance=np.zeros((0, 0), dtype=np.int64),
        slot_decided=np.zeros((0, 0), dtype=np.int64),
        slot_probe=np.zeros((0, 0), dtype=np.int64),
        stack_units=np.zeros((0, 1), dtype=np.int64),
    )


@compiled(inline=True)
def watch_channels(off, links, now):
    """The Channel Busy Monitor: once a window has passed, each channel's utilization over it
    (busy time charged to its links) decides whether it is busy for the next window."""
    window = off.params[O_WINDOW_PS]
    start = off.monitor[0]
    if now < start + window:
        return
    cubes = off.params[O_CUBES]
    span = now - start
    for k in range(2 * cubes):
        link = off.tx_link[k] if k < cubes else off.rx_link[k - cubes]
        used = links.busy_ps[link] - off.monitor[2 + k]
        off.busy[k] = used * 1000 >= off.params[O_THRESHOLD_PERMILLE] * span
        off.monitor[2 + k] = links.busy_ps[link]
    off.monitor[0] = now


@compiled(inline=True)
def random_permille(off):
    """The next draw in [0, 1000) of a xorshift64 generator seeded per launch: the random
    per-instance choice that meets a static or dynamic offload ratio (SNDP sec. 7.1)."""
    x = off.control[C_RANDOM]
    x ^= x << 13
    x ^= (x >> 7) & 0x01FFFFFFFFFFFFFF  # a logical shift of the signed word
    x ^= x << 17
    off.control[C_RANDOM] = x
    return (x & 0x7FFFFFFFFFFFFFFF) % 1000


@compiled(inline=True)
def cache_aware_benefit(off, c):
    """SNDP sec. 7.3's measured benefit of offloading block ``c``, in bytes per warp, the unit
    of :func:`register_overhead`: the lines a warp instance would fetch from DRAM,
    ``ceil(AvgNumCacheLines x AvgCacheMissRate) x line``, plus its stores, ``stores x word x
    SIMD width``. AvgNumCacheLines counts a warp's RDF packets, one per line, so it is already
    a warp's figure; the SIMD width turns one thread's stored word into the warp's (as
    Equation 1 counts per thread what the block's loads and stores move). RDF packets per
    instance times their miss rate is the misses per instance, so the ceiling is taken over an
    exact ratio of integers."""
    n = off.cand_offloaded[c]
    misses = off.cand_rdf[c] - off.cand_rdf_hits[c]
    lines = (misses + n - 1) // n
    return lines * 128 + off.cand_stores[c] * 4 * 32


@compiled(inline=True)
def register_overhead(off, c):
    """Equation 1's OffloadOverhead of block ``c`` in bytes per warp: every live-in and
    live-out register of every lane."""
    regs = (off.cand_live_in_first[c + 1] - off.cand_live_in_first[c]
            + off.cand_live_out_first[c + 1] - off.cand_live_out_first[c])  # fmt: skip
    return regs * 4 * 32


def _never(off, links, i, pos, now):
    """The decision of a code nothing registered: run the block on the GPU."""
    return DECLINE


#: Each offload scheme's decision for an instance a warp reaches, registered by the scheme's
#: module (:mod:`ndpsim.policy.offload`): ``decision(off, links, i, pos, now)`` returns
#: ``OFFLOAD``, ``DECLINE`` or ``RUN_TO_FIRST_ACCESS`` and counts why in ``off.stats``.
DECISIONS = CompiledTable("offload decision", _never, ("ndpsim.policy.offload",))
_decide_by_scheme = DECISIONS.call


@compiled
def decide(off, links, i, pos, now):
    """What the controller does with instance ``i``, which a warp reaches at stream position
    ``pos``: ``OFFLOAD`` it now, ``DECLINE`` it (the warp runs it), or let the warp
    ``RUN_TO_FIRST_ACCESS``, where :func:`admit` decides. An instance that touches no memory
    has nothing to gain near it; any other, the scheme's registered decision judges."""
    if off.inst_dest[i] < 0:
        return DECLINE
    return _decide_by_scheme(off.params[O_POLICY], off, links, i, pos, now)


@compiled
def admit(off, i):
    """Step 3 of TOM's decision, once the destination is known: with control (or the warp
    limit), not to a stack with as many offloads pending as its SM has warp slots."""
    d = off.inst_dest[i]
    if (off.params[O_CONTROL] != 0 or off.params[O_WARP_LIMIT] != 0) and (
        off.pending[d] >= off.params[O_CAPACITY]
    ):
        off.stats[d, K_DECLINED_PENDING] += 1
        return False
    off.pending[d] += 1
    off.stats[d, K_OFFLOADED] += 1
    return True


@compiled
def observe(off, i, slot):
    """TOM's learning phase: instance ``i``, reached by GPU warp slot ``slot``, runs on the GPU;
    the analyzer watches it if it touches memory."""
    if off.control[C_LEARN_LEFT] <= 0 or off.inst_dest[i] < 0:
        return
    off.control[C_LEARN_RUNNING] += 1
    off.inst_home[i] = slot


@compiled
def observed_progress(off, i, pos):
    """A warp running instance ``i`` (or past it) issues its instruction at stream position
    ``pos``: if ``i`` is watched and that is its last instruction, the analyzer has now seen
    all of its accesses and counts it, while it still wants instances (an issue that fails and
    is retried finds it already ``SEEN``)."""
    if i >= 0 and off.inst_home[i] >= 0 and off.inst_end[i] == pos + 1:
        off.control[C_LEARN_RUNNING] -= 1
        if off.control[C_LEARN_LEFT] > 0:
            off.control[C_LEARN_LEFT] -= 1
            off.inst_home[i] = SEEN
        else:
            off.inst_home[i] = -1


@compiled(inline=True)
def learning_done(off):
    """The analyzer has seen as many instances whole as the learning phase wanted."""
    return off.control[C_LEARNING] != 0 and off.control[C_LEARN_LEFT] == 0


@compiled
def reserve_credits(off, i):
    """Reserve the NSU buffer entries instance ``i`` needs at its target stack (a command, a
    read-data entry per load, a write-address entry per store); False, reserving nothing, if
    there are not enough credits (SNDP sec. 4.3)."""
    d = off.inst_dest[i]
    c = off.inst_candidate[i]
    need_rd = off.cand_loads[c]
    need_wa = off.cand_stores[c]
    cr = off.credits[d]
    if (cr[CREDIT_COMMAND] < 1 or cr[CREDIT_READ_DATA] < need_rd
            or cr[CREDIT_WRITE_ADDRESS] < need_wa):  # fmt: skip
        return False
    cr[CREDIT_COMMAND] -= 1
    cr[CREDIT_READ_DATA] -= need_rd
    cr[CREDIT_WRITE_ADDRESS] -= need_wa
    low = off.credits_low[d]
    for k in range(3):
        if cr[k] < low[k]:
            low[k] = cr[k]
    return True


@compiled(inline=True)
def live_ins_ready(off, reg_ready, s, w, i):
    """When every live-in register of instance ``i`` (held by slot ``w`` of SM ``s``) has its
    value: the request packet carries them."""
    c = off.inst_candidate[i]
    t = 0
    for k in range(off.cand_live_in_first[c], off.cand_live_in_first[c + 1]):
        t = max(t, reg_ready[s, w, off.cand_live_in[k]])
    return t


@compiled(inline=True)
def request_bytes(off, c, lanes):
    """An offload request: header, pcs and active mask, and each live-in register of the
    ``lanes`` it carries (TOM's Eq. 3 counts every lane of the warp; SNDP sends only the
    active threads' values, sec. 4.4)."""
    live_ins = off.cand_live_in_first[c + 1] - off.cand_live_in_first[c]
    return off.params[O_HEADER] + 16 + live_ins * off.params[O_REGISTER_BYTES] * lanes


@compiled(inline=True)
def ack_bytes(off, c, lanes, written_lines):
    """An acknowledgement: header, each live-out register of ``lanes`` lanes, and (TOM) the
    address of every line the block wrote, which the GPU invalidates (sec. 4.4.2)."""
    live_outs = off.cand_live_out_first[c + 1] - off.cand_live_out_first[c]
    return (off.params[O_HEADER] + live_outs * off.params[O_REGISTER_BYTES] * lanes
            + 8 * written_lines)  # fmt: skip


__all__ = ["OFFLOAD_STAT_NAMES", "OffloadState", "ack_bytes", "admit", "decide", "learning_done",
           "no_offload", "observe", "observed_progress", "request_bytes",
           "reserve_credits"]  # fmt: skip
