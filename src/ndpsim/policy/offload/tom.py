"""TOM (Hsieh et al., ISCA 2016): compiler-chosen candidate blocks run whole on the SM in the
logic layer of the stack holding their first access (sec. 3.1, 4.2 and footnote 4), under
the dynamic offload aggressiveness control (sec. 3.3), optionally with the learned data
mapping (sec. 3.2)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ndpsim.analysis.tom import thread_live_registers
from ndpsim.errors import ConfigError
from ndpsim.hw.gpu import offload as ofl
from ndpsim.policy.offload import OFFLOAD_SCHEMES, OffloadScheme
from ndpsim.trace.instances import first_access


def _decide(off, links, i, pos, now):
    """Sec. 4.2's controller for instance ``i`` of a block, reached at stream position
    ``pos``: (1) a conditional candidate goes only when its trip count clears the break-even
    threshold; (2) with dynamic control, not when it would add traffic to a channel the Channel
    Busy Monitor reports busy; (3) footnote 4: the warp runs the block up to its first memory
    access, whose stack is the destination, and :func:`ndpsim.hw.gpu.offload.admit` then
    refuses a stack with as many offloads pending as its SM has warp slots. Compiled into the
    timing model (``ofl.DECISIONS``)."""
    d = off.inst_dest[i]
    c = off.inst_candidate[i]
    st = off.stats[d]
    if off.inst_trips[i] < off.cand_threshold[c]:  # step 1: the condition
        st[ofl.K_DECLINED_CONDITION] += 1
        return ofl.DECLINE
    if off.params[ofl.O_CONTROL] != 0:  # step 2: the Channel Busy Monitor
        ofl.watch_channels(off, links, now)
        tag = off.cand_tag[c]
        cubes = off.params[ofl.O_CUBES]
        if (off.busy[d] and tag & ofl.SAVES_TX == 0) or (
            off.busy[cubes + d] and tag & ofl.SAVES_RX == 0
        ):
            st[ofl.K_DECLINED_BUSY] += 1
            return ofl.DECLINE
    if off.params[ofl.O_RUN_TO_FIRST_ACCESS] != 0 and off.inst_probe[i] != pos:
        return ofl.RUN_TO_FIRST_ACCESS
    return ofl.OFFLOAD if ofl.admit(off, i) else ofl.DECLINE


@OFFLOAD_SCHEMES.register("tom")
class Tom(OffloadScheme):
    execution = ofl.EXECUTE_WHOLE
    decision = ofl.DECISIONS.register(_decide, "tom")
    processor = "stack_sm"

    def check(self, config: Any) -> None:
        if config.ndp.mapping == "learned" and config.memory.mapping != "interleaved":
            raise ConfigError("ndp.mapping = 'learned' needs memory.mapping = 'interleaved'")

    def offload_pass(self, ndp: Any) -> str:
        return f"tom-{ndp.blocks}"

    def note_kernel(self, kernels, function, candidates) -> None:
        if function.name not in kernels:
            kernels[function.name] = (candidates, thread_live_registers(function))

    def destinations(self, tx_owner, tx_position, tx_line, line_stacks, stack_of, instances,
                     config) -> np.ndarray:  # fmt: skip
        """The stack of the block's first access (footnote 4)."""
        lines = first_access(tx_owner, tx_line, instances)
        touching = lines >= 0
        dest = np.full(instances, -1, dtype=np.int64)
        dest[touching] = stack_of(lines[touching])
        return dest

    def configure(self, params, ndp) -> None:
        # footnote 4 and sec. 4.4.2 are overheads of offloading, which the ideal system has not
        params[ofl.O_RUN_TO_FIRST_ACCESS] = int(ndp.run_to_first_access and not ndp.ideal)
        params[ofl.O_FLUSH_STACK_L1] = int(ndp.flush_stack_l1 and not ndp.ideal)

    def summary(self, plan, totals, controller, fewest_credits, time_ps, ndp) -> dict[str, Any]:
        out: dict[str, Any] = {"candidates": _candidate_statistics(ndp.blocks, plan.kernels)}
        learning = plan.learning
        if learning is None:
            out["mapping"] = {"bits": "baseline"}
            return out
        out["learning_us"] = learning.end_ps / 1e6  # when the phase ended
        out["mapping"] = learning.choice.as_dict()
        return out


def _candidate_statistics(rule: str, kernels: dict[str, tuple[Any, int]]) -> dict[str, Any]:
    """TOM's candidate blocks of the kernels a run launched, in the terms of the paper's
    statistics: how many (sec. 6.6), how long, and the most registers one holds live against
    a whole thread's (sec. 6.4)."""
    blocks = [c for candidates, _ in kernels.values() for c in candidates]
    sizes = [c.num_instructions for c in blocks]
    return {
        "rule": rule,
        "blocks": len(blocks),
        "instructions_mean": float(np.mean(sizes)) if sizes else 0.0,
        "instructions_max": max(sizes, default=0),
        "live_registers_max": max((c.live_registers for c in blocks), default=0),
        "thread_live_registers_max": max((t for _, t in kernels.values()), default=0),
    }
