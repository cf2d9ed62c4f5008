"""The interpreter's bounds as options of the commands that interpret workloads."""

from __future__ import annotations

import typer

from ndpsim.simt.limits import Limits

MAX_INSTRUCTIONS = typer.Option(
    None, "--max-instructions", min=1, metavar="N",
    help="Warp-instructions one launch may execute before it is stopped (default 2e9, TOM sec. 5).",
)  # fmt: skip
MAX_LAUNCHES = typer.Option(
    None, "--max-launches", min=1, metavar="N",
    help="Kernel launches one host program may make (default 100,000).",
)  # fmt: skip
MAX_DEVICE_GB = typer.Option(
    None, "--max-device-gb", min=1e-6, metavar="GIB",
    help="GiB of device memory one workload may allocate (default: half the machine's memory).",
)  # fmt: skip
MAX_TRACE_GB = typer.Option(
    None, "--max-trace-gb", min=1e-6, metavar="GIB",
    help="GiB of trace one workload may record (default: half the machine's memory).",
)  # fmt: skip


def limits_from(max_instructions: int | None, max_launches: int | None,
                max_trace_gb: float | None, max_device_gb: float | None) -> Limits:  # fmt: skip
    """Limits with the defaults, except what the options set."""
    given: dict[str, int] = {}
    if max_device_gb is not None:
        given["device_bytes"] = max(1, int(max_device_gb * 2**30))
    if max_instructions is not None:
        given["instructions_per_launch"] = max_instructions
    if max_launches is not None:
        given["launches"] = max_launches
    if max_trace_gb is not None:
        given["trace_bytes"] = max(1, int(max_trace_gb * 2**30))
    return Limits(**given)
