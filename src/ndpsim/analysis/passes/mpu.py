"""MPU's location annotation (Xie et al., MICRO 2021, Algorithm 1): a kernel's instructions in
runs of one location (near-bank, far-bank, both, or unknown), and its register split."""

from ndpsim.analysis.mpu import NAMES, LocationRun, location_runs, register_split
from ndpsim.analysis.passes import OFFLOAD_PASSES, OffloadPass


def _row(run: LocationRun) -> tuple[str, ...]:
    pcs = f"{run.begin}-{run.end}" if run.end > run.begin else str(run.begin)
    return pcs, f"{run.location} ({NAMES[run.location]})", "\n".join(run.instructions)


def _heading(function, runs) -> str:
    split = register_split(function)
    ours = " / ".join(f"{100 * v:.1f}" for v in split["shares"].values())
    paper = " / ".join(f"{100 * v:.1f}" for v in split["paper_shares"].values())
    unknown = split["registers"]["unknown"]
    return (f"registers near / far / both: {ours}% (paper {paper}%)"
            + (f", {unknown} unknown" if unknown else ""))  # fmt: skip


OFFLOAD_PASSES.register("mpu-locations")(OffloadPass(
    find=location_runs,
    noun="MPU location runs",
    title="MPU locations (N near-bank, F far-bank, B both, U left to the hardware)",
    columns=(("pcs", False), ("location", False), ("instructions", False)),
    row=_row,
    json_key="mpu_location_runs",
    heading=_heading,
    none_found="the kernel has no instructions",
    facts=lambda function: {"mpu_register_split": register_split(function)},
))  # fmt: skip
