"""The invariants a GPU system checks after each launch and at the end of a run: nothing left
behind in a queue, every request and byte conserved from where it was sent to where it was
answered, no link or DRAM bus busier than it can be. A violation is a bug in the model, never a
result: it stops the run naming the component."""

from __future__ import annotations

import numpy as np

from ndpsim.errors import SimulationError
from ndpsim.hw import link as linkmod
from ndpsim.hw import requests as rq
from ndpsim.hw.core import sm as smmod
from ndpsim.hw.dram import controller as ctl
from ndpsim.hw.gpu import offload as ofl
from ndpsim.policy.offload import credit_capacity
from ndpsim.systems.gpu import model
from ndpsim.systems.gpu.layout import GpuLayout
from ndpsim.trace.work import (
    LINE_BYTES,
)


def check_drained(layout: GpuLayout, sm, l1, l2, mem, vaults, dram, pool, off, trace) -> None:
    """A finished kernel leaves nothing behind: every request completed and every queue,
    MSHR and warp slot is empty. Anything else is a bug in the model, not a result."""
    left = {
        "requests in flight": rq.in_use(pool),
        "L1 MSHRs in use": int(l1.mshr_used.sum()),
        "L2 MSHRs in use": int(l2.mshr_used.sum()),
        "requests waiting for an L2 MSHR": int((mem.mshr_wait_head >= 0).sum()),
        "requests in DRAM queues": int(dram.q_count.sum()),
        "channel backlogs": int((vaults.backlog_head >= 0).sum()),
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
    broken = {name: n for name, n in left.items() if n}
    if broken:
        raise SimulationError(
            f"kernel {trace.info.kernel!r} finished but left "
            + ", ".join(f"{n} {name}" for name, n in broken.items())
        )


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
    served = d[:, ctl.S_READS_DONE] + d[:, ctl.S_WRITES_DONE]
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
    for ch, st in enumerate(d):
        where = f"DRAM channel {layout.channel_label(ch)}"
        checks += [
            (where, "reads served", int(st[ctl.S_READS_DONE]), int(st[ctl.S_READS])),
            (where, "writes served", int(st[ctl.S_WRITES_DONE]), int(st[ctl.S_WRITES])),
            (where, "row hits, misses and conflicts",
             int(st[[ctl.S_ROW_HITS, ctl.S_ROW_MISSES, ctl.S_ROW_CONFLICTS]].sum()),
             int(served[ch])),
        ]  # fmt: skip
    per_cube = layout.channels_per_cube
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
    for k in range(c.memory.cubes):
        if vaults.tsv[k] >= 0:  # every access of the cube's vaults crosses its TSVs
            checks.append((layout.link_label(int(vaults.tsv[k])), "DRAM accesses",
                           int(packets[vaults.tsv[k]].sum()),
                           int(served[k * per_cube : (k + 1) * per_cube].sum())))  # fmt: skip
    wrong = [f"{where}: {what} {found}, expected {expected}"
             for where, what, found, expected in checks if found != expected]  # fmt: skip
    # every packet carries at least its header (a crossbar flit's, a memory packet's, or a
    # line and its header back from the L2); TSVs move bare data
    smallest = np.full(len(links.busy_ps), c.links.header_bytes, dtype=np.int64)
    smallest[sm_ports] = sm_header_bytes
    smallest[slice_ports] = c.links.header_bytes + LINE_BYTES
    smallest[vaults.tsv[vaults.tsv >= 0]] = 1
    short = links.traffic[:, :, 0] < packets * smallest[:, None]
    for i, k in zip(*np.nonzero(short), strict=True):
        wrong.append(f"{layout.link_label(int(i))}: {int(packets[i, k])} "
                     f"{linkmod.CLASS_NAMES[k]} packets in {int(links.traffic[i, k, 0])} "
                     "bytes")  # fmt: skip
    for i in linkmod.misaccounted(links):
        wrong.append(f"{layout.link_label(int(i))}: busy {int(links.busy_ps[i])} ps, not "
                     "the time its bytes take on the wire")  # fmt: skip
    if wrong:
        raise SimulationError(
            f"after kernel {trace.info.kernel!r} the counters disagree: " + "; ".join(wrong[:8])
        )


def check_busy(layout: GpuLayout, links, dram) -> None:
    """No link was busier than 100% over any utilization window, nor longer than it existed,
    and no DRAM data bus carried two bursts at once."""
    window = int(links.window_ps[0])
    busiest = linkmod.busiest_window_ps(links)
    wrong = [f"{layout.link_label(int(i))} busy {int(busiest[i])} ps in a {window} ps window"
             for i in np.flatnonzero(busiest > window)]  # fmt: skip
    wrong += [f"{layout.link_label(int(i))} busy {int(links.busy_ps[i])} ps by "
              f"{int(links.busy_until[i])} ps" for i in linkmod.overdrawn(links)]  # fmt: skip
    ranks = layout.dram_preset.organization.ranks
    wrong += [f"DRAM channel {layout.channel_label(int(b) // ranks)} rank {int(b) % ranks} "
              f"data bus carrying two bursts at once for {int(dram.bus_overlap[b])} cycles"
              for b in np.flatnonzero(dram.bus_overlap)]  # fmt: skip
    if wrong:
        raise SimulationError("busier than 100%: " + "; ".join(wrong[:8]))


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
