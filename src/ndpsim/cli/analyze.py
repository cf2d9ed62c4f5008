"""``ndpsim analyze``: what the static analyses see in a PTX file."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.markup import escape
from rich.table import Table

from ndpsim import api
from ndpsim.analysis.passes import OFFLOAD_PASSES, OffloadPass, registers_text
from ndpsim.analysis.report import function_report
from ndpsim.analysis.tom import BLOCK_RULES
from ndpsim.cli import options
from ndpsim.cli.main import app, console, reports_errors
from ndpsim.cli.paths import output_file, write_json


def _print_function(report: dict, show_instructions: bool) -> None:
    console.rule(
        f"[bold]{report['name']}[/]  {report['num_instructions']} instructions, "
        f"{report['num_registers']} registers, {len(report['params'])} params, "
        f"{report['shared_bytes']} B shared"
    )
    blocks = Table(title="basic blocks", title_justify="left")
    for column in ("block", "label", "pcs", "succ", "ipdom", "loop", "live in", "live out"):
        blocks.add_column(column, overflow="fold")
    for b in report["blocks"]:
        blocks.add_row(
            str(b["index"]), b["label"] or "", f"{b['start_pc']}-{b['end_pc'] - 1}",
            ",".join(map(str, b["successors"])) or "exit", str(b["ipdom"]),
            str(b["loop_depth"] or ""), registers_text(b["live_in"]), registers_text(b["live_out"]),
        )  # fmt: skip
    console.print(blocks)
    if report["loops"]:
        loops = Table(title="loops", title_justify="left")
        for column in ("loop", "header", "blocks", "pcs", "depth", "induction", "trip count"):
            loops.add_column(column, overflow="fold")
        for loop in report["loops"]:
            iv = loop["induction"]
            induction = (
                f"{iv['register']} from {iv['start']} step {iv['step']} while {iv['comparison']} "
                f"{iv['bound']}" if iv else "-"
            )  # fmt: skip
            count = loop["trip_count"]
            if loop["static_trip_count"] is not None:
                count += f" ({loop['static_trip_count']})"
            loops.add_row(
                str(loop["index"]), str(loop["header"]), ",".join(map(str, loop["blocks"])),
                f"{loop['start_pc']}-{loop['end_pc'] - 1}", str(loop["depth"]), induction, count,
            )  # fmt: skip
        console.print(loops)
    mix = Table(title="instruction classes", title_justify="left")
    mix.add_column("class")
    mix.add_column("count", justify="right")
    for name, count in report["instruction_mix"].items():
        mix.add_row(name, str(count))
    console.print(mix)
    if show_instructions:
        listing = Table(title="instructions", title_justify="left")
        for column in ("pc", "block", "instruction", "class", "live after"):
            listing.add_column(column, overflow="fold")
        for inst in report["instructions"]:
            listing.add_row(
                str(inst["pc"]), str(inst["block"]), inst["text"], inst["class"],
                registers_text(inst["live_out"], 6),
            )  # fmt: skip
        console.print(listing)


def _print_blocks(function, found, offload_pass: OffloadPass) -> None:
    console.rule(
        f"[bold]{escape(function.name)}[/]  {escape(offload_pass.heading(function, found))}"
    )
    if not found:
        console.print(offload_pass.none_found)
        return
    table = Table(title=offload_pass.title, title_justify="left")
    for column, right in offload_pass.columns:
        table.add_column(column, overflow="fold", justify="right" if right else "left")
    for block in found:
        table.add_row(*map(escape, offload_pass.row(block)))
    console.print(table)


@app.command()
@reports_errors
def analyze(
    ptx: Path = typer.Argument(..., metavar="PTX", help="PTX file to analyse."),
    kernel: str = options.kernel("Only this function of the file (default: every one)."),
    json_path: Path = options.json_file(
        "Write the analysis to FILE instead of printing tables", tables=False
    ),
    instructions: bool = typer.Option(
        False, "--instructions", "-i", help="Also list every instruction with its class."
    ),
    pass_name: str = typer.Option(
        None,
        "--pass",
        metavar="PASS",
        help="Show the blocks of a registered offload pass instead: "
        f"{', '.join(OFFLOAD_PASSES.names())} (default: none; see docs/offload.md).",
    ),
    tom: bool = typer.Option(False, "--tom", help="Short for --pass tom-RULE (TOM sec. 3.1)."),
    sndp: bool = typer.Option(False, "--sndp", help="Short for --pass sndp (SNDP sec. 3.1-3.2)."),
    blocks_rule: str = typer.Option(
        "loops",
        "--blocks",
        metavar="RULE",
        help=f"TOM's block rule with --tom: {' or '.join(BLOCK_RULES)} (see docs/offload.md).",
    ),
) -> None:
    """Print the basic blocks, loops, liveness and instruction classes of each kernel."""
    if blocks_rule not in BLOCK_RULES:
        raise typer.BadParameter(f"expected one of {', '.join(BLOCK_RULES)}, got "
                                 f"{blocks_rule!r}", param_hint="--blocks")  # fmt: skip
    asked = [name for name, on in ((pass_name, pass_name is not None),
                                   (f"tom-{blocks_rule}", tom), ("sndp", sndp)) if on]  # fmt: skip
    if len(asked) > 1:
        raise typer.BadParameter("give one of --pass, --tom and --sndp, not both",
                                 param_hint="--pass")  # fmt: skip
    offload_pass = asked[0] if asked else None
    if json_path is not None:
        output_file(json_path, "--json")
        document = api.analyze(ptx, kernel=kernel, offload_pass=offload_pass)
        write_json(json_path, document)
        return
    functions = api.ptx_functions(ptx, kernel)
    if offload_pass is not None:  # an offload pass: its blocks, and nothing else
        found = OFFLOAD_PASSES.get(offload_pass)
        for f in functions:
            _print_blocks(f, found(f), found)
        return
    for f in functions:
        _print_function(function_report(f, instructions=instructions), instructions)
