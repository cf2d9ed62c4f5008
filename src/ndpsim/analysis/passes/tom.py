"""TOM's offload candidates (Hsieh et al., ISCA 2016, sec. 3.1), one pass per block rule."""

from functools import partial

from ndpsim.analysis.passes import OFFLOAD_PASSES, OffloadPass, registers_text
from ndpsim.analysis.tom import BLOCK_RULES, TomCandidate, thread_live_registers, tom_candidates


def _loop(candidate: TomCandidate) -> str:
    if candidate.loop_kind == "none":
        return "-"
    if candidate.loop_kind == "static":
        return f"static x{candidate.trips}"
    return candidate.loop_kind


def _row(c: TomCandidate) -> tuple[str, ...]:
    return (f"{c.begin}-{c.end}", registers_text(c.live_in), registers_text(c.live_out),
            str(c.live_registers), str(c.n_ld), str(c.n_st), _loop(c), f"{c.bw_tx:g}",
            f"{c.bw_rx:g}", c.tag_text, c.condition)  # fmt: skip


def _heading(function, candidates) -> str:
    covered = sum(c.num_instructions for c in candidates)
    return (f"{len(candidates)} TOM offload candidates, {covered} of "
            f"{len(function.instructions)} instructions; a thread has up to "
            f"{thread_live_registers(function)} live registers")  # fmt: skip


for _rule in BLOCK_RULES:
    OFFLOAD_PASSES.register(f"tom-{_rule}")(OffloadPass(
        find=partial(tom_candidates, blocks=_rule),
        noun="TOM offload candidates",
        title="TOM offload candidates (words per warp; live: the most 32-bit registers of the "
        "block live at once)",
        columns=(("pcs", False), ("live in", False), ("live out", False), ("live", True),
                 ("N_LD", True), ("N_ST", True), ("loop", False), ("BW_TX", True),
                 ("BW_RX", True), ("tag", False), ("condition", False)),
        row=_row,
        json_key="tom_candidates",
        heading=_heading,
        none_found="no block saves bandwidth under TOM's estimate",
        facts=lambda function, rule=_rule: {
            "blocks": rule, "thread_live_registers": thread_live_registers(function)},
    ))  # fmt: skip
