"""SNDP's offload blocks for partitioned execution (Kim et al., SC 2017, sec. 4)."""

from ndpsim.analysis.passes import OFFLOAD_PASSES, OffloadPass, registers_text
from ndpsim.analysis.sndp import SndpBlock, sndp_blocks


def _row(b: SndpBlock) -> tuple[str, ...]:
    return (f"{b.begin}-{b.end}", str(b.nsu_instructions), registers_text(b.live_in),
            registers_text(b.live_out), str(b.n_ld), str(b.n_st), str(b.score),
            "yes" if b.indirect else "")  # fmt: skip


def _heading(function, blocks) -> str:
    covered = sum(b.num_instructions for b in blocks)
    indirect = sum(b.indirect for b in blocks)
    return (
        f"{len(blocks)} SNDP offload blocks ({indirect} indirect loads), {covered} of "
        f"{len(function.instructions)} instructions"
    )


OFFLOAD_PASSES.register("sndp")(OffloadPass(
    find=sndp_blocks,
    noun="SNDP offload blocks",
    title="SNDP offload blocks (score in bytes per thread)",
    columns=(("pcs", False), ("NSU instr", True), ("live in", False), ("live out", False),
             ("N_LD", True), ("N_ST", True), ("score", True), ("indirect", False)),
    row=_row,
    json_key="sndp_blocks",
    heading=_heading,
    none_found="no block has a positive score under SNDP's Equation 1",
))  # fmt: skip
