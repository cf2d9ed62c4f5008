"""``ndpsim run``: one workload, own kernel or saved trace on one system, summarized, with every
counter written as JSON."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import typer
from rich.markup import escape
from rich.table import Table

from ndpsim.cli import options
from ndpsim.cli.limits import (
    MAX_DEVICE_GB,
    MAX_INSTRUCTIONS,
    MAX_LAUNCHES,
    MAX_TRACE_GB,
    limits_from,
)
from ndpsim.cli.main import app, console, reports_errors
from ndpsim.cli.paths import output_file, to_stdout, write_json
from ndpsim.cli.progress import stage
from ndpsim.compilation import COMPILING_NOTICE, watching_compilation
from ndpsim.config import parse_overrides
from ndpsim.engine.clock import PS_PER_NS
from ndpsim.engine.timeline import DEFAULT_MAX_EVENTS, DEFAULT_WINDOW_PS, Timeline
from ndpsim.experiments.inputs import choose_input
from ndpsim.provenance import code_provenance, now_utc
from ndpsim.systems import (
    RunResult,
    build_system,
    check_records_timeline,
    load_system_config,
    resolved_config,
    run_programs_on,
)
from ndpsim.workloads.params import parse_param_options


@app.command()
@reports_errors
def run(
    system: str = options.SYSTEM,
    workload: str = options.workload("none; give --workload, --ptx or --trace"),
    ptx: Path = typer.Option(
        None,
        "--ptx",
        metavar="FILE",
        help="PTX file of a kernel of your own, launched as --kernel, --grid, --block and --arg "
        "say (docs/workloads.md; default: none).",
    ),
    kernel: str = options.kernel("Kernel of --ptx to launch (default: its only one)."),
    grid: str = typer.Option(
        None, "--grid", metavar="X[,Y,Z]", help="CTAs of the --ptx launch (no default: required)."
    ),
    block: str = typer.Option(
        None,
        "--block",
        metavar="X[,Y,Z]",
        help="Threads per CTA of the --ptx launch (no default: required).",
    ),
    kernel_args: list[str] = typer.Option(
        [],
        "--arg",
        metavar="SPEC",
        help="One per --ptx kernel parameter, in order: buf:TYPE:COUNT[:INIT] or TYPE:VALUE, "
        "e.g. 'buf:f32:4096:uniform(0,1)', i32:4096 (docs/workloads.md; default: none).",
    ),
    trace: Path = typer.Option(
        None,
        "--trace",
        metavar="DIR",
        help="Saved-trace directory to replay (docs/traces.md; default: none).",
    ),
    size: str = options.OPTIONAL_SIZE,
    params: list[str] = options.params("--workload"),
    seed: int = options.OPTIONAL_SEED,
    overrides: list[str] = options.SYSTEM_OVERRIDES,
    json_path: Path = options.json_file(
        "Write every counter to FILE",
        "results/run-SYSTEM-WORKLOAD-SIZE-sSEED-HASH.json, HASH a digest of the resolved "
        "configuration and of any input other than a suite workload at one of its sizes",
    ),
    timeline_path: Path = typer.Option(
        None,
        "--timeline",
        metavar="FILE",
        help="Write the run's timeline to FILE: per window, each SM's issue and stall "
        "fractions, each link's utilization, each DRAM channel's row hits and misses, the "
        "offloading and the policies' decisions, as a Chrome trace-event file for Perfetto UI "
        "(docs/timelines.md; default: not written).",
    ),
    timeline_window_ns: float = typer.Option(
        DEFAULT_WINDOW_PS / PS_PER_NS,
        "--timeline-window-ns",
        metavar="NS",
        min=0.001,
        help="First window of --timeline, in ns; a long run doubles it until the file holds at "
        f"most {DEFAULT_MAX_EVENTS:,} counter events (default: "
        f"{DEFAULT_WINDOW_PS / PS_PER_NS:g}).",
        show_default=False,
    ),
    max_instructions: int = MAX_INSTRUCTIONS,
    max_launches: int = MAX_LAUNCHES,
    max_trace_gb: float = MAX_TRACE_GB,
    max_device_gb: float = MAX_DEVICE_GB,
) -> None:
    """Simulate a workload (of the suite or your own), a kernel of your own or a saved trace on
    a system preset and print a summary."""
    assignments = parse_overrides(overrides)
    config = load_system_config(system, assignments)
    # a system the model cannot build, or a bad input, fails before the long parts
    hardware = build_system(config)
    source = choose_input(workload=workload, ptx=ptx, kernel=kernel, grid=grid, block=block,
                          args=kernel_args, trace=trace, size=size, seed=seed,
                          params=parse_param_options(params))  # fmt: skip
    limits = limits_from(max_instructions, max_launches, max_trace_gb, max_device_gb)
    configuration = resolved_config(config)
    path = output_file(json_path or Path("results") / source.file_name(config.name, configuration),
                       "--json")  # fmt: skip
    timeline = None
    if timeline_path is not None:
        output_file(timeline_path, "--timeline")
        check_records_timeline(hardware)
        timeline = Timeline(round(timeline_window_ns * PS_PER_NS))
    with _status(source.activity):
        functional = source.interpret(limits)
    if functional.problem is not None:
        console.print(f"[yellow]warning:[/] {source.name} differs from its reference: "
                      f"{escape(functional.problem)}")  # fmt: skip
    with _status(f"simulating {source.name} on {config.name}"):
        result = run_programs_on(hardware, functional.programs(source.name), seed=source.seed,
                                 timeline=timeline)  # fmt: skip
    provenance = {**code_provenance(), "created": now_utc()}
    document = {
        **source.document(),
        "preset": system,
        "overrides": assignments,
        "configuration": configuration,
        "provenance": provenance,
        **result.as_dict(),
    }
    write_json(path, document)
    if timeline is not None:
        timeline.write(timeline_path, {**source.document(), "system": config.name,
                                       "provenance": provenance})  # fmt: skip
    _print_summary(config.name, source.name, source.described_size, result)
    if not to_stdout(path):
        console.print(f"full statistics: {escape(str(path))}")
    if timeline is not None:
        console.print(f"timeline ({timeline.window_ps / PS_PER_NS:g} ns windows): "
                      f"{escape(str(timeline_path))}")  # fmt: skip


@contextmanager
def _status(text: str) -> Iterator[None]:
    """Progress of one step, saying so when numba compiles during it."""
    with stage(text) as step, watching_compilation(lambda: step.note(COMPILING_NOTICE),
                                                    lambda: step.note("compiled")):  # fmt: skip
        yield


def _print_summary(system: str, workload: str, size: str, result: RunResult) -> None:
    table = Table(title=f"{workload} ({size}) on {system}", title_justify="left",
                  show_header=False)  # fmt: skip
    table.add_column("what")
    table.add_column("value", justify="right")
    for label, value in result.summary_rows():
        table.add_row(label, value)
    table.add_row("wall time", f"{result.wall_seconds:.2f} s")
    console.print(table)
