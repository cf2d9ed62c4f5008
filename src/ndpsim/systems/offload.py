"""From a launch's offload plan to the compiled model's offload state: the instances with their
destinations, the blocks' registers in the model's numbering, and the near-memory buffers."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ndpsim.hw.gpu import offload as ofl
from ndpsim.trace.instances import Instances, OffloadCandidate
from ndpsim.trace.work import KernelWork, csr


def build_offload_state(work: KernelWork, candidates: Sequence[OffloadCandidate],
                        instances: Instances, dest: np.ndarray, registers: dict[str, int],
                        params: np.ndarray, tx_link: np.ndarray, rx_link: np.ndarray,
                        sms: int, credits: Sequence[int] = (0, 0, 0), random_state: int = 1,
                        observe: int = 0, probe: np.ndarray | None = None,
                        stack_units: np.ndarray | None = None, slots: int = 1,
                        ) -> ofl.OffloadState:  # fmt: skip
    """The compiled model's view of one launch: instances with their destination stacks
    (``dest``, -1 when an instance touches no memory) and the stream position of their first
    memory access (``probe``, where TOM learns the destination), candidates with their
    registers in the timing model's numbering. For SNDP (partitioned execution) also each block
    instruction's role, the NSU buffers' ``credits`` per stack (command, read data, write
    address) and the nonzero ``random_state`` of the random offload-ratio draws (a
    :func:`ndpsim.seeding.state63`). ``observe`` > 0 starts the
    launch in TOM's learning phase, which still wants that many instances. ``stack_units``
    (int64[stacks, most], :meth:`ndpsim.hw.core.contract.Cores.logic_layer_units`) are the
    processors that run each stack's blocks, and the units have ``slots`` warp slots at most."""
    cubes = int(params[ofl.O_CUBES])
    partitioned = params[ofl.O_EXECUTION] == ofl.EXECUTE_PARTITIONED
    pos_instance = np.full(len(work.inst), -1, dtype=np.int64)
    pos_instance[instances.start] = np.arange(len(instances))
    live_in = csr([[registers[r] for r in c.live_in] for c in candidates])
    live_out = csr([[registers[r] for r in c.live_out] for c in candidates])
    n = len(instances)
    empty = np.zeros(0, dtype=np.int64)
    pc_role = empty
    if partitioned:
        pc_role = np.zeros(len(work.pc_class), dtype=np.int64)
        for c in candidates:
            pc_role[c.begin : c.end + 1] = [ofl.ROLE_CODES[r] for r in c.roles]
    credit_table = np.tile(np.asarray(credits, dtype=np.int64), (cubes, 1))
    control = np.zeros(ofl.CONTROL_FIELDS, dtype=np.int64)
    control[ofl.C_RATIO_PERMILLE] = 1000
    if not 0 < random_state < 1 << 63:
        raise ValueError(f"the offload draws' state must be in [1, 2**63), got {random_state}")
    control[ofl.C_RANDOM] = random_state  # a xorshift: never zero
    control[ofl.C_LEARNING] = int(observe > 0)
    control[ofl.C_LEARN_LEFT] = observe
    default_units = np.full((cubes, 1), -1, dtype=np.int64)
    return ofl.OffloadState(
        params=params,
        pos_instance=pos_instance,
        inst_start=instances.start,
        inst_end=instances.end,
        inst_candidate=instances.candidate,
        inst_dest=dest.astype(np.int64),
        inst_trips=instances.trips,
        inst_probe=np.full(n, -1, dtype=np.int64) if probe is None else probe.astype(np.int64),
        inst_next=np.full(n, -1, dtype=np.int64),
        inst_home=np.full(n, -1, dtype=np.int64),
        inst_runner=np.full(n, -1, dtype=np.int64),
        inst_acked=np.zeros(n, dtype=np.bool_),
        cand_threshold=np.array([c.threshold or 0 for c in candidates], dtype=np.int64),
        cand_tag=np.array([c.tag for c in candidates], dtype=np.int64),
        cand_live_in_first=live_in[0],
        cand_live_in=live_in[1],
        cand_live_out_first=live_out[0],
        cand_live_out=live_out[1],
        cand_loads=np.array([c.n_ld for c in candidates], dtype=np.int64),
        cand_stores=np.array([c.n_st for c in candidates], dtype=np.int64),
        cand_offloaded=np.zeros(len(candidates), dtype=np.int64),
        cand_rdf=np.zeros(len(candidates), dtype=np.int64),
        cand_rdf_hits=np.zeros(len(candidates), dtype=np.int64),
        pc_role=pc_role,
        pos_arrived=np.zeros(len(work.inst) if partitioned else 0, dtype=np.int64),
        credits=credit_table,
        credits_low=credit_table.copy(),
        credit_head=np.full(cubes, -1, dtype=np.int64),
        credit_tail=np.full(cubes, -1, dtype=np.int64),
        ready_packets=np.zeros(sms, dtype=np.int64),
        control=control,
        pending=np.zeros(cubes, dtype=np.int64),
        queue_head=np.full(cubes, -1, dtype=np.int64),
        queue_tail=np.full(cubes, -1, dtype=np.int64),
        tx_link=tx_link,
        rx_link=rx_link,
        monitor=np.zeros(2 + 2 * cubes, dtype=np.int64),
        busy=np.zeros(2 * cubes, dtype=np.bool_),
        stats=np.zeros((cubes, len(ofl.OFFLOAD_STAT_NAMES)), dtype=np.int64),
        slot_instance=np.full((sms, slots), -1, dtype=np.int64),
        slot_decided=np.full((sms, slots), -1, dtype=np.int64),
        slot_probe=np.full((sms, slots), -1, dtype=np.int64),
        stack_units=default_units if stack_units is None else stack_units.astype(np.int64),
    )
