"""SNDP (Kim et al., SC 2017): partitioned execution of blocks by the NSU of a target stack
(sec. 4), every instance (naive, sec. 6), a random ratio of them (sec. 7.1) or a ratio Algorithm
1 adapts every epoch (sec. 7.2), optionally cache-aware (sec. 7.3). Data is placed by
``memory.mapping`` (random pages, sec. 5), never by a learned mapping."""

from __future__ import annotations

from typing import Any

import numpy as np

from ndpsim.errors import ConfigError
from ndpsim.hw.gpu import offload as ofl
from ndpsim.policy.offload import OFFLOAD_SCHEMES, OffloadScheme, credit_capacity
from ndpsim.policy.sndp_ratio import INITIAL_RATIO, RatioController, time_weighted_ratio


def _decide(off, links, i, pos, now):
    """SNDP's controller for instance ``i``: with cache awareness (sec. 7.3), never a block
    whose measured benefit does not beat its register traffic; with a ratio (sec. 7.1-7.2), a
    random draw against it. Compiled into the timing model (``ofl.DECISIONS``)."""
    d = off.inst_dest[i]
    c = off.inst_candidate[i]
    st = off.stats[d]
    if (off.params[ofl.O_CACHE_AWARE] != 0 and off.cand_offloaded[c] > 0
            and ofl.cache_aware_benefit(off, c) - ofl.register_overhead(off, c) <= 0):  # fmt: skip
        st[ofl.K_DECLINED_CACHE] += 1
        return ofl.DECLINE
    if (off.params[ofl.O_DECISION] == ofl.DECIDE_RATIO
            and ofl.random_permille(off) >= off.control[ofl.C_RATIO_PERMILLE]):  # fmt: skip
        st[ofl.K_DECLINED_RATIO] += 1
        return ofl.DECLINE
    off.cand_offloaded[c] += 1
    off.pending[d] += 1
    st[ofl.K_OFFLOADED] += 1
    return ofl.OFFLOAD


@OFFLOAD_SCHEMES.register("sndp")
class Sndp(OffloadScheme):
    execution = ofl.EXECUTE_PARTITIONED
    decision = ofl.DECISIONS.register(_decide, "sndp")
    processor = "nsu"
    stack_writes_invalidate = True  # sec. 4.2: an NSU write invalidates the GPU's copy

    def check(self, config: Any) -> None:
        if config.ndp.mapping != "baseline":
            raise ConfigError("ndp.mapping = 'learned' is TOM's; SNDP places data by "
                              "memory.mapping (random 4 KB pages)")  # fmt: skip

    def offload_pass(self, ndp: Any) -> str:
        return "sndp"

    def destinations(self, tx_owner, tx_position, tx_line, line_stacks, stack_of, instances,
                     config) -> np.ndarray:  # fmt: skip
        return target_stacks(tx_owner, tx_position, line_stacks, instances,
                             config.memory.cubes, config.ndp.target)  # fmt: skip

    def check_blocks(self, candidates, ndp) -> None:
        """A block needing more buffer entries than an NSU has would wait for credits forever."""
        read_data, write_address = ndp.read_data_entries, ndp.write_address_entries
        for b in candidates:
            if b.n_ld > read_data or b.n_st > write_address:
                raise ConfigError(
                    f"SNDP block at pcs {b.begin}-{b.end} has {b.n_ld} loads and {b.n_st} "
                    f"stores; ndp.read_data_entries ({read_data}) and "
                    f"ndp.write_address_entries ({write_address}) must hold them"
                )

    def controller(self, ndp: Any, core: Any) -> RatioController:
        if ndp.decision == "dynamic":
            return RatioController(INITIAL_RATIO, core.time(ndp.epoch_cycles))
        return RatioController(ndp.ratio if ndp.decision == "ratio" else 1.0)

    def summary(self, plan, totals, controller, fewest_credits, time_ps, ndp) -> dict[str, Any]:
        capacity = credit_capacity(ndp)
        return {
            "rdf_hit_rate": (totals["rdf_cache_hits"] / totals["rdf_packets"]
                             if totals["rdf_packets"] else 0.0),
            "ratio_timeline": [list(point) for point in controller.timeline],
            "ratio_mean": time_weighted_ratio(controller.timeline, time_ps / 1e6),
            "credits": {
                **{name: {"most_reserved": int(capacity[k] - fewest_credits[k]),
                          "capacity": int(capacity[k])}
                   for k, name in enumerate(ofl.CREDIT_NAMES)},
                "overdrawn": int((fewest_credits < 0).sum()),
            },
        }  # fmt: skip


def target_stacks(tx_owner: np.ndarray, tx_position: np.ndarray, tx_stack: np.ndarray,
                  instances: int, stacks: int, policy: str) -> np.ndarray:  # fmt: skip
    """SNDP's target NSU of each instance (sec. 4.1): the stack its first memory instruction
    touches most (``"first"``), or the stack holding most of all its accesses (``"optimal"``,
    Figure 5's comparison); -1 for an instance without accesses. The transactions come in
    stream order (:func:`instance_lines`), and a tie goes to the tied stack the block touches
    first: breaking ties towards the lower-numbered stack would send an unfair share of the
    blocks to the first HMCs (of the blocks whose three accesses fall in three different random
    HMCs of eight, HMC 0 would get 3/8 instead of 1/8)."""
    out = np.full(instances, -1, dtype=np.int64)
    if not len(tx_owner):
        return out
    keep = np.ones(len(tx_owner), dtype=bool)
    if policy == "first":
        owners, first = np.unique(tx_owner, return_index=True)
        first_position = np.full(instances, -1, dtype=np.int64)
        first_position[owners] = tx_position[first]
        keep = tx_position == first_position[tx_owner]
    cell = tx_owner[keep] * stacks + tx_stack[keep]
    n = len(cell)
    counts = np.bincount(cell, minlength=instances * stacks)
    cells, first_seen = np.unique(cell, return_index=True)
    earliest = np.full(instances * stacks, n, dtype=np.int64)
    earliest[cells] = first_seen
    # most accesses first, then the earliest first access
    score = (counts * (n + 1) + (n - earliest)).reshape(instances, stacks)
    touched = counts.reshape(instances, stacks).sum(axis=1) > 0
    out[touched] = score[touched].argmax(axis=1)
    return out
