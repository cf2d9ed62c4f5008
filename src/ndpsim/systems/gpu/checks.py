"""The invariants a GPU system checks after each launch and at the end of a run: nothing left
behind in a queue, every request and byte conserved from where it was sent to where it was
answered, no link or DRAM bus busier than it can be. The memory path's are the skeleton's
(:mod:`ndpsim.systems.skeleton.checks`); the crossbar's, the L2's, the SMs' and the offload
hardware's are here. A violation is a bug in the model, never a result: it stops the run
naming the component."""

from __future__ import annotations

import numpy as np

from ndpsim.hw import link as linkmod
from ndpsim.hw import requests as rq
from ndpsim.hw.core import sm as smmod
from ndpsim.hw.dram import controller as ctl
from ndpsim.hw.gpu import offload as ofl
from ndpsim.policy.offload import credit_capacity
from ndpsim.systems.gpu import model
from ndpsim.systems.gpu.layout import GpuLayout
from ndpsim.systems.skeleton import checks as skeleton
from ndpsim.systems.skeleton.checks import (
    dram_checks,
    memory_path_left,
    packet_errors,
    tsv_checks,
)
from ndpsim.trace.work import (
    LINE_BYTES,
)


def check_drained(layout: GpuLayout, sm, l1, l2, mem, vaults, dram, pool, off, trace) -> None:
    """A finished kernel leaves nothing behind: every request completed and every queue,
    MSHR and warp slot is empty. Anything else is a bug in the model, not a result."""
    left = {
        **memory_path_left(pool, dram, vaults),
        "L1 MSHRs in use": int(l1.mshr_used.sum()),
        "L2 MSHRs in use": int(l2.mshr_used.sum()),
        "requests waiting for an L2 MSHR": int((mem.mshr_wait_head >= 0).sum()),
        "occupied warp slots": int((sm.slot_state != smmod.FREE).sum()),
        "offloads not acknowledged": int(off.pending.sum()),
        "offloads waiting for a stack-SM slot": int((off.queue_head >= 0).sum()),
        "observed learning-phase instances unfinished": int(off.control[ofl.C_LEARN_RUNNING]),
    }
    sent = int(off.stats[:, ofl.K_OFFLOADED].sum())  # no rows without near-data units
    # each counted clock, each scheduler issues, offloads a block or names one reason
    outcomes = int(sm.stats[:, [smmod.T_ISSUED, *smmod.STALL_REASONS]].sum()) + sent
    schedulers = int(sm.params[smmod.S_SCHEDULERS])
    left["scheduler clocks miscounted"] = abs(
        schedulers * int(sm.stats[:, smmod.T_CLOCKS].sum()) - outcomes
    )
    if off.stats.shape[0]:
        capacity = credit_capacity(layout.config.ndp)
        acked = int(off.stats[:, ofl.K_ACKED].sum())
        left["offloads never acknowledged"] = sent - acked
        left["warps waiting for credits"] = int((off.credit_head >= 0).sum())
        left["packets in ready buffers"] = int(off.ready_packets.sum())
        left["overdrawn credits"] = int((off.credits_low < 0).sum())
        # every reserved buffer entry was given back (none is, without credits)
        left["stack buffer entries not returned"] = int((capacity - off.credits).sum())
        packets = int(off.stats[:, [ofl.K_RDF, ofl.K_WTA]].sum())
        left["RDF/WTA packets that never reached their NSU"] = packets - int(off.pos_arrived.sum())
    skeleton.check_drained(trace.info.kernel, left)


def check_conserved(layout: GpuLayout, trace, sm_stats, offload_stats, mem, vaults, dram,
                    links, sm_header_bytes) -> None:  # fmt: skip
    """Every request and packet of the run so far is accounted for, where it was sent and
    where it was answered; a counter that disagrees names the component that lost or
    invented one. The counters are the run's, so each launch checks the run up to its end."""
    c = layout.config
    net = layout.network
    l2, d = mem.stats.sum(axis=0), dram.stats
    off = offload_stats.sum(axis=0)
    packets = links.traffic[:, :, 1]
    sm_ports = np.arange(len(net.links), len(net.links) + c.sm.count)
    slice_ports = np.arange(sm_ports[-1] + 1, sm_ports[-1] + 1 + c.l2.slices)
    to_cube, from_cube, ports = layout.host
    host_tx, host_rx = np.unique(to_cube), np.unique(from_cube)  # each link once
    cube_links = [i for i, kind in enumerate(net.kinds) if kind == "cube"]
    requests = [smmod.T_LOADS, smmod.T_STORES, smmod.T_ATOMICS]  # those that left an SM
    gpu_sent = int(sm_stats[: layout.gpu_sms, requests].sum())
    stack_sent = int(sm_stats[layout.gpu_sms :, requests].sum())
    rdf, wta = int(off[ofl.K_RDF]), int(off[ofl.K_WTA])
    rdf_at_l2 = rdf - int(off[ofl.K_RDF_L1_HITS])  # those the L2 looked up
    rdf_missed = rdf - int(off[ofl.K_RDF_HITS])  # the owning vault forwards their data
    invalidating = mem.params[model.M_WRITE_INVALIDATIONS] != 0
    ideal = bool(c.ndp and c.ndp.ideal)
    checks = [  # (component, what, found, expected)
        ("crossbar", "requests from the SMs", int(packets[sm_ports].sum()),
         gpu_sent + rdf + wta),
        ("L2", "accesses and packets passing by", int(l2[model.L_ACCESSES]) + wta
         + rdf - rdf_at_l2, int(packets[sm_ports].sum())),
        ("L2", "loads and atomics answered", int(packets[slice_ports].sum()),
         int(l2[model.L_ACCESSES] - l2[model.L_WRITES] + l2[model.L_ATOMICS]) - rdf_at_l2),
        ("L2", "fills", int(l2[model.L_FILLS]), int(l2[model.L_DRAM_READS]) - rdf_missed),
        ("DRAM", "requests taken", int(d[:, ctl.S_READS].sum() + d[:, ctl.S_WRITES].sum()),
         int(l2[model.L_DRAM_READS] + l2[model.L_DRAM_WRITES]) + stack_sent),
        ("GPU links", "reads answered", int(packets[host_rx, linkmod.READ_DATA].sum())
         + rdf_missed, int(packets[host_tx, linkmod.READ_REQUEST].sum())),
        ("GPU links", "invalidations of NSU writes",
         int(packets[host_rx, linkmod.OTHER].sum()),
         int(off[ofl.K_NSU_WRITES]) if invalidating else 0),
        ("cube network", "writes acknowledged",
         int(packets[cube_links, linkmod.WRITE_ACK].sum()),
         int(packets[cube_links, linkmod.WRITE_REQUEST].sum())),
    ]  # fmt: skip
    for s in range(layout.sms):
        st = sm_stats[s]
        checks.append((layout.processor_label(s), "L1 hits and misses",
                       int(st[smmod.T_L1_HITS] + st[smmod.T_L1_MISSES]),
                       int(st[smmod.T_L1_ACCESSES])))  # fmt: skip
    for i, st in enumerate(mem.stats):
        checks.append((f"L2 slice {i}", "hits and misses",
                       int(st[model.L_HITS] + st[model.L_MISSES]),
                       int(st[model.L_ACCESSES])))  # fmt: skip
    checks += dram_checks(dram, layout.channel_label)
    for port in np.unique(ports):  # each host link pair, and the cubes reached through it
        behind = ports == port
        tx, rx = int(to_cube[port]), int(from_cube[port])
        checks.append((f"{layout.link_label(tx)} and back", "writes acknowledged",
                       int(packets[rx, linkmod.WRITE_ACK]),
                       int(packets[tx, linkmod.WRITE_REQUEST])))  # fmt: skip
        if c.ndp:  # the offload requests (and SNDP's WTA packets) out, acknowledgements back
            stacks = offload_stats[behind].sum(axis=0)
            checks += [
                (layout.link_label(tx), "offload packets", int(packets[tx, linkmod.OFFLOAD]),
                 (0 if ideal else int(stacks[ofl.K_OFFLOADED])) + int(stacks[ofl.K_WTA])),
                (layout.link_label(rx), "offload acknowledgements",
                 int(packets[rx, linkmod.OFFLOAD]), 0 if ideal else int(stacks[ofl.K_ACKED])),
            ]  # fmt: skip
    checks += tsv_checks(vaults, links, dram, layout.channels_per_cube, layout.link_label)
    # every packet carries at least its header (a crossbar flit's, a memory packet's, or a
    # line and its header back from the L2); TSVs move bare data
    smallest = np.full(len(links.busy_ps), c.links.header_bytes, dtype=np.int64)
    smallest[sm_ports] = sm_header_bytes
    smallest[slice_ports] = c.links.header_bytes + LINE_BYTES
    smallest[vaults.tsv[vaults.tsv >= 0]] = 1
    skeleton.check_conserved(trace.info.kernel, checks,
                             packet_errors(links, smallest, layout.link_label))  # fmt: skip


def check_busy(layout: GpuLayout, links, dram) -> None:
    """No link or DRAM data bus was busier than it can be (:func:`skeleton.check_busy`)."""
    skeleton.check_busy(links, dram, layout.dram_preset.organization.ranks, layout.link_label,
                        layout.channel_label)  # fmt: skip


def diagnose(sm, vaults, dram, pool, trace, now) -> str:
    """What a launch that stopped making progress was waiting for, for the watchdog's error."""
    waiting = int((sm.slot_state == smmod.ACTIVE).sum())
    at_barrier = int((sm.slot_state == smmod.BARRIER).sum())
    queued = int(dram.q_count.sum())
    backlog = int((vaults.backlog_head >= 0).sum())
    idle_channels = [
        int(ch) for ch in np.flatnonzero(dram.q_count.sum(axis=1) > 0)
        if vaults.tick_at[ch] >= smmod.NEVER
    ]  # fmt: skip
    parts = [
        f"kernel {trace.info.kernel!r} stopped making progress at {now} ps",
        f"{int(sm.counters[3])} of {trace.info.num_ctas} CTAs finished",
        f"{waiting} warps waiting for operands, {at_barrier} at a barrier",
        f"{rq.in_use(pool)} memory requests in flight",
        f"{queued} in DRAM queues, {backlog} channels with a backlog",
    ]
    if idle_channels:
        parts.append(f"DRAM channels {idle_channels[:8]} hold requests but never tick")
    return "; ".join(parts)
