"""``ndpsim dram-trace``: the DRAM model alone, driven by a memory trace."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.table import Table

from ndpsim.cli import options
from ndpsim.cli.main import app, console, reports_errors
from ndpsim.cli.paths import output_file, write_json
from ndpsim.config import parse_overrides
from ndpsim.hw.dram.footprint import check_fits_in_memory
from ndpsim.hw.dram.spec import dram_preset_names, load_dram_preset
from ndpsim.systems.dram_trace import run_dram_trace
from ndpsim.trace.dram_requests import read_requests


@app.command("dram-trace")
@reports_errors
def dram_trace(
    trace: Path = typer.Argument(
        ...,
        metavar="TRACE",
        help="Ramulator LD/ST text trace, .npz (addr, is_write), or saved-trace directory.",
    ),
    preset: str = typer.Option(
        "hbm2",
        "--preset",
        "-p",
        metavar="PRESET",
        help=f"DRAM preset: {', '.join(dram_preset_names())}, or a .toml file of your own.",
    ),
    inject_per_cycle: int = typer.Option(
        8, "--inject-per-cycle", min=1, metavar="N", help="Requests the front end offers per cycle."
    ),
    overrides: list[str] = options.overrides(
        "Override a key of the DRAM preset, e.g. --set controller.refresh=false"
    ),
    json_path: Path = options.json_file("Write the figures to FILE too"),
) -> None:
    """Run a trace through one DRAM device and print cycles, row-buffer outcomes, latency."""
    config = load_dram_preset(preset, parse_overrides(overrides))
    check_fits_in_memory(config)
    if json_path is not None:
        output_file(json_path, "--json")
    addresses, writes = read_requests(trace, config.organization.access_bytes)
    result = run_dram_trace(config, addresses, writes, inject_per_cycle=inject_per_cycle)
    s = result.stats
    figures = {
        "trace": str(trace),
        "preset": config.name,
        "requests": result.requests,
        "inject_per_cycle": inject_per_cycle,
        "cycles": result.cycles,
        "row_hits": s["row_hits"],
        "row_misses": s["row_misses"],
        "row_conflicts": s["row_conflicts"],
        "average_read_latency_cycles": result.average_read_latency_cycles,
        "bandwidth_gbps": result.bandwidth_gbps(config.organization.access_bytes),
        "refreshes": s["refreshes"],
        "wall_seconds": result.wall_seconds,
        "requests_per_second": result.requests_per_second,
    }
    table = Table(title=f"{trace.name} on {config.name} (K = {inject_per_cycle})",
                  title_justify="left", show_header=False)  # fmt: skip
    table.add_column("what")
    table.add_column("value", justify="right")
    table.add_row("requests", f"{result.requests:,}")
    table.add_row("DRAM cycles", f"{result.cycles:,}")
    table.add_row("row hits / misses / conflicts",
                  f"{s['row_hits']:,} / {s['row_misses']:,} / {s['row_conflicts']:,}")  # fmt: skip
    table.add_row("average read latency", f"{result.average_read_latency_cycles:.1f} cycles")
    table.add_row("bandwidth", f"{figures['bandwidth_gbps']:.1f} GB/s")
    table.add_row("simulated requests per wall second", f"{result.requests_per_second:,.0f}")
    console.print(table)
    if json_path is not None:
        write_json(json_path, figures)
