"""Analysis results of a function as plain data (for ``ndpsim analyze --json`` and the tables)."""

from __future__ import annotations

from collections import Counter
from typing import Any

from ndpsim.analysis import EXIT, analyze
from ndpsim.analysis.loops import LoopValue
from ndpsim.frontend.ir import Function, Space


def _value(value: LoopValue) -> int | str:
    return value.constant if value.constant is not None else str(value.register)


def function_report(function: Function, *, instructions: bool = True) -> dict[str, Any]:
    """Blocks, loops, liveness and instruction classes of one function, JSON-ready."""
    a = analyze(function)
    cfg, dom, live = a.cfg, a.dominance, a.liveness
    blocks = []
    for block in cfg:
        ipdom = dom.ipdom[block.index]
        blocks.append(
            {
                "index": block.index,
                "label": block.label,
                "start_pc": block.start,
                "end_pc": block.end,
                "successors": list(block.successors),
                "predecessors": list(block.predecessors),
                "idom": dom.idom[block.index],
                "ipdom": "exit" if ipdom == EXIT else ipdom,
                "reconvergence_pc": dom.reconvergence_pc(block.index),
                "loop_depth": a.loop_depth(block.index),
                "live_in": sorted(live.live_in_block[block.index]),
                "live_out": sorted(live.live_out_block[block.index]),
            }
        )
    loops = []
    for loop in a.loops:
        iv = loop.induction
        loops.append(
            {
                "index": loop.index,
                "header": loop.header,
                "blocks": sorted(loop.blocks),
                "start_pc": loop.start_pc,
                "end_pc": loop.end_pc,
                "depth": loop.depth,
                "parent": loop.parent,
                "trip_count": loop.trip_count_kind.value,
                "static_trip_count": loop.static_trip_count,
                "induction": None
                if iv is None
                else {
                    "register": iv.register,
                    "start": _value(iv.start),
                    "step": _value(iv.step),
                    "bound": _value(iv.bound),
                    "comparison": iv.comparison,
                    "tested_after_step": iv.tested_after_step,
                },
            }
        )
    report: dict[str, Any] = {
        "name": function.name,
        "kernel": function.is_kernel,
        "num_instructions": len(function.instructions),
        "num_registers": len(function.registers),
        "params": [
            {"name": p.name, "type": p.type.name, "offset": p.offset} for p in function.params
        ],
        "shared_bytes": sum(v.size_bytes for v in function.variables_in(Space.SHARED)),
        "instruction_mix": dict(sorted(Counter(str(c) for c in a.classes).items())),
        "blocks": blocks,
        "loops": loops,
    }
    if instructions:
        report["instructions"] = [
            {
                "pc": inst.pc,
                "line": inst.location.line,
                "text": inst.text,
                "block": cfg.block_of_pc[inst.pc],
                "class": str(a.classes[inst.pc]),
                "defs": list(inst.defs),
                "uses": list(inst.uses),
                "live_in": sorted(live.live_before(inst.pc)),
                "live_out": sorted(live.live_after(inst.pc)),
            }
            for inst in function.instructions
        ]
    return report
