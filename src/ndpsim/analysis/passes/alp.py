"""ALP's segments (Oliveira et al., sec. 3.1): a kernel's basic blocks with the registers each
takes and hands on, and Equation 1's connectivity to each segment control goes on to."""

from ndpsim.analysis.alp import Segment, connectivity, segments
from ndpsim.analysis.passes import OFFLOAD_PASSES, OffloadPass, registers_text


def _connectivity(function) -> dict[str, dict[str, float]]:
    """Per segment, Equation 1's connectivity to each of its successors."""
    found = segments(function)
    out = {}
    for s in found:
        out[f"b{s.block}"] = {
            f"b{t}": connectivity(s.reg_in, s.reg_out, found[t].reg_in, found[t].reg_out)
            for t in s.successors
        }
    return out


def _row(s: Segment) -> tuple[str, ...]:
    return (f"b{s.block}", f"{s.begin}-{s.end}", registers_text(sorted(s.reg_in)),
            registers_text(sorted(s.reg_out)),
            " ".join(f"b{t}" for t in s.successors))  # fmt: skip


def _heading(function, found) -> str:
    pairs = [(a, b, c) for a, row in _connectivity(function).items() for b, c in row.items()]
    text = ", ".join(f"{a}->{b} {c:.2f}" for a, b, c in pairs if c > 0)
    return f"{len(found)} segments; connectivity (Equation 1): {text or 'none above 0'}"


OFFLOAD_PASSES.register("alp-segments")(OffloadPass(
    find=segments,
    noun="ALP segments",
    title="ALP segments (basic blocks) and the registers each takes and hands on",
    columns=(("segment", False), ("pcs", False), ("reg_in", False), ("reg_out", False),
             ("successors", False)),
    row=_row,
    json_key="alp_segments",
    heading=_heading,
    none_found="the kernel has no instructions",
    facts=lambda function: {"alp_connectivity": _connectivity(function)},
))  # fmt: skip
