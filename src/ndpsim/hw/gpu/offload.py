"""Offloading code blocks from GPU warps to SMs in the memory stacks' logic layer, compiled.

What the timing model needs to offload a block (TOM, Hsieh et al. ISCA 2016, sec. 4.2):

* **instances**: every dynamic execution of a candidate block by one warp — where it starts and
  ends in the warp's instruction stream, its destination stack (the stack of its first memory
  access, footnote 4), its loop trip count as executed, and the registers to carry. They are
  found before the run (:mod:`ndpsim.systems.offload`); ``pos_instance`` marks the stream
  positions where one starts, so a warp reaching that position consults the controller.
* **the offload controller**: whether this instance goes (:func:`decide`) — a conditional
  candidate only when its trip count clears the break-even threshold; with dynamic control,
  not when the destination stack already has as many offloads pending as its SM has warp
  slots, nor when the block would add traffic to a TX/RX channel that the Channel Busy
  Monitor reports busy (utilization over the last window at or above the threshold).
* per stack, a FIFO of arrived offloads waiting for a free warp slot of the stack SM (without
  control the pending count is not bounded, so they queue there).

Slots and SMs live in :class:`ndpsim.hw.gpu.sm.SmState`; SMs ``0 .. gpu_sms-1`` are the GPU's,
the next ones the stacks' (one per stack).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

# parameters
(O_ENABLED, O_GPU_SMS, O_CONTROL, O_LATENCY_PS, O_CAPACITY, O_IDEAL, O_HEADER,
 O_WINDOW_PS, O_THRESHOLD_PERMILLE, O_CUBES, O_REGISTER_BYTES) = range(11)  # fmt: skip
OFFLOAD_PARAMS = 11

# candidate tag bits (Eq. 3/4 signs): offloading saves TX / RX traffic
SAVES_TX, SAVES_RX = 1, 2

# per-stack counters
(K_OFFLOADED, K_DECLINED_CONDITION, K_DECLINED_PENDING, K_DECLINED_BUSY, K_QUEUED,
 K_ACKED, K_INVALIDATIONS) = range(7)  # fmt: skip
OFFLOAD_STAT_NAMES = (
    "offloaded", "declined_condition", "declined_pending", "declined_busy",
    "waited_for_slot", "acknowledged", "invalidated_lines",
)  # fmt: skip


class OffloadState(NamedTuple):
    params: np.ndarray  # int64[OFFLOAD_PARAMS]
    pos_instance: np.ndarray  # int64[instructions]: instance starting there, or -1 (empty
    # array: nothing to offload in this launch)
    inst_start: np.ndarray  # int64[instances]: stream position of the block's first instruction
    inst_end: np.ndarray  # stream position after its last
    inst_candidate: np.ndarray
    inst_dest: np.ndarray  # stack (cube) of the first memory access, -1 if none
    inst_trips: np.ndarray  # loop iterations the instance executes (its candidate's loop)
    inst_next: np.ndarray  # link in a stack's queue of offloads waiting for a slot
    inst_home: np.ndarray  # the GPU warp slot that offloaded it (sm * slots + slot)
    cand_threshold: np.ndarray  # int64[candidates]: minimum trip count (0: unconditional)
    cand_tag: np.ndarray  # SAVES_TX | SAVES_RX
    cand_live_in_first: np.ndarray  # CSR of live-in registers (timing-model numbering)
    cand_live_in: np.ndarray
    cand_live_out_first: np.ndarray  # CSR of live-out registers
    cand_live_out: np.ndarray
    pending: np.ndarray  # int64[cubes]: offloads sent to the stack and not acknowledged
    queue_head: np.ndarray  # int64[cubes]: arrived offloads waiting for a stack-SM slot
    queue_tail: np.ndarray
    tx_link: np.ndarray  # int64[cubes]: GPU -> stack link (TX channel)
    rx_link: np.ndarray  # int64[cubes]: stack -> GPU link (RX channel)
    monitor: np.ndarray  # int64[2 + 2 * cubes]: window start, spare, busy ps of every channel
    # at the window start
    busy: np.ndarray  # bool[2 * cubes]: channel busy in the last window (TX of each stack,
    # then RX of each stack)
    stats: np.ndarray  # int64[cubes, len(OFFLOAD_STAT_NAMES)]


def no_offload() -> OffloadState:
    """The state of a system without stack SMs (or a launch without candidates)."""
    empty = np.zeros(0, dtype=np.int64)
    return OffloadState(
        params=np.zeros(OFFLOAD_PARAMS, dtype=np.int64),
        pos_instance=empty,
        inst_start=empty,
        inst_end=empty,
        inst_candidate=empty,
        inst_dest=empty,
        inst_trips=empty,
        inst_next=empty,
        inst_home=empty,
        cand_threshold=empty,
        cand_tag=empty,
        cand_live_in_first=np.zeros(1, dtype=np.int64),
        cand_live_in=empty,
        cand_live_out_first=np.zeros(1, dtype=np.int64),
        cand_live_out=empty,
        pending=empty,
        queue_head=empty,
        queue_tail=empty,
        tx_link=empty,
        rx_link=empty,
        monitor=np.zeros(2, dtype=np.int64),
        busy=np.zeros(0, dtype=np.bool_),
        stats=np.zeros((0, len(OFFLOAD_STAT_NAMES)), dtype=np.int64),
    )


@njit(cache=True, inline="always")
def _watch_channels(off, links, now):
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


@njit(cache=True)
def decide(off, links, i, now):
    """Whether instance ``i`` is offloaded now (the controller's decision, sec. 4.2)."""
    d = off.inst_dest[i]
    if d < 0:
        return False  # touches no memory: nothing to gain near it
    c = off.inst_candidate[i]
    st = off.stats[d]
    if off.inst_trips[i] < off.cand_threshold[c]:
        st[K_DECLINED_CONDITION] += 1
        return False
    if off.params[O_CONTROL] != 0:
        if off.pending[d] >= off.params[O_CAPACITY]:
            st[K_DECLINED_PENDING] += 1
            return False
        _watch_channels(off, links, now)
        tag = off.cand_tag[c]
        cubes = off.params[O_CUBES]
        if (off.busy[d] and tag & SAVES_TX == 0) or (off.busy[cubes + d] and tag & SAVES_RX == 0):
            st[K_DECLINED_BUSY] += 1
            return False
    off.pending[d] += 1
    st[K_OFFLOADED] += 1
    return True


@njit(cache=True, inline="always")
def live_ins_ready(off, reg_ready, s, w, i):
    """When every live-in register of instance ``i`` (held by slot ``w`` of SM ``s``) has its
    value: the request packet carries them."""
    c = off.inst_candidate[i]
    t = 0
    for k in range(off.cand_live_in_first[c], off.cand_live_in_first[c + 1]):
        t = max(t, reg_ready[s, w, off.cand_live_in[k]])
    return t


@njit(cache=True, inline="always")
def request_bytes(off, c):
    """An offload request: header, begin/end PCs and active mask, and each live-in register of
    every lane (Eq. 3 counts REG_TX x warp-size words)."""
    live_ins = off.cand_live_in_first[c + 1] - off.cand_live_in_first[c]
    return off.params[O_HEADER] + 16 + live_ins * off.params[O_REGISTER_BYTES]


@njit(cache=True, inline="always")
def ack_bytes(off, c, written_lines):
    """An acknowledgement: header, each live-out register of every lane, and the address of
    every line the block wrote (the GPU invalidates them, sec. 4.4.2)."""
    live_outs = off.cand_live_out_first[c + 1] - off.cand_live_out_first[c]
    return off.params[O_HEADER] + live_outs * off.params[O_REGISTER_BYTES] + 8 * written_lines


__all__ = ["OFFLOAD_STAT_NAMES", "OffloadState", "ack_bytes", "decide", "no_offload",
           "request_bytes"]  # fmt: skip
