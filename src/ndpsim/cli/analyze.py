"""``ndpsim analyze``: what the static analyses see in a PTX file."""

from __future__ import annotations

import json
from pathlib import Path

import typer
from rich.table import Table

from ndpsim.analysis.report import function_report
from ndpsim.analysis.sndp import SndpBlock, sndp_blocks
from ndpsim.analysis.tom import (
    BLOCK_RULES,
    TomCandidate,
    thread_live_registers,
    tom_candidates,
)
from ndpsim.cli.main import app, console, reports_errors
from ndpsim.errors import PTXError
from ndpsim.frontend.parser import parse_ptx_file


def _registers(names: list[str], limit: int = 8) -> str:
    if len(names) <= limit:
        return " ".join(names)
    return " ".join(names[:limit]) + f" (+{len(names) - limit})"


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
            str(b["loop_depth"] or ""), _registers(b["live_in"]), _registers(b["live_out"]),
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
                _registers(inst["live_out"], 6),
            )  # fmt: skip
        console.print(listing)


def _loop_text(candidate: TomCandidate) -> str:
    if candidate.loop_kind == "none":
        return "-"
    if candidate.loop_kind == "static":
        return f"static x{candidate.trips}"
    return candidate.loop_kind


def _print_tom(function, candidates) -> None:
    covered = sum(c.num_instructions for c in candidates)
    console.rule(
        f"[bold]{function.name}[/]  {len(candidates)} TOM offload candidates, "
        f"{covered} of {len(function.instructions)} instructions; a thread has up to "
        f"{thread_live_registers(function)} live registers"
    )
    if not candidates:
        console.print("no block saves bandwidth under TOM's estimate")
        return
    table = Table(title="TOM offload candidates (words per warp; live: the most 32-bit "
                  "registers of the block live at once)", title_justify="left")  # fmt: skip
    for column in ("pcs", "live in", "live out", "live", "N_LD", "N_ST", "loop", "BW_TX",
                   "BW_RX", "tag", "condition"):  # fmt: skip
        right = column in ("live", "N_LD", "N_ST", "BW_TX", "BW_RX")
        table.add_column(column, overflow="fold", justify="right" if right else "left")
    for c in candidates:
        table.add_row(
            f"{c.begin}-{c.end}", _registers(list(c.live_in)), _registers(list(c.live_out)),
            str(c.live_registers), str(c.n_ld), str(c.n_st), _loop_text(c), f"{c.bw_tx:g}",
            f"{c.bw_rx:g}", c.tag_text, c.condition,
        )  # fmt: skip
    console.print(table)


def _print_sndp(function, blocks: tuple[SndpBlock, ...]) -> None:
    covered = sum(b.num_instructions for b in blocks)
    indirect = sum(b.indirect for b in blocks)
    console.rule(
        f"[bold]{function.name}[/]  {len(blocks)} SNDP offload blocks ({indirect} indirect "
        f"loads), {covered} of {len(function.instructions)} instructions"
    )
    if not blocks:
        console.print("no block has a positive score under SNDP's Equation 1")
        return
    table = Table(title="SNDP offload blocks (score in bytes per thread)", title_justify="left")
    for column in ("pcs", "NSU instr", "live in", "live out", "N_LD", "N_ST", "score",
                   "indirect"):  # fmt: skip
        justify = "right" if column in ("NSU instr", "N_LD", "N_ST", "score") else "left"
        table.add_column(column, overflow="fold", justify=justify)
    for b in blocks:
        table.add_row(
            f"{b.begin}-{b.end}", str(b.nsu_instructions), _registers(list(b.live_in)),
            _registers(list(b.live_out)), str(b.n_ld), str(b.n_st), str(b.score),
            "yes" if b.indirect else "",
        )  # fmt: skip
    console.print(table)


@app.command()
@reports_errors
def analyze(
    ptx: Path = typer.Argument(..., help="PTX file to analyse."),
    kernel: str = typer.Option(None, "--kernel", "-k", help="Only this function."),
    as_json: bool = typer.Option(False, "--json", help="Print machine-readable JSON instead."),
    instructions: bool = typer.Option(
        False, "--instructions", "-i", help="Also list every instruction with its class."
    ),
    tom: bool = typer.Option(
        False, "--tom", help="Show TOM's offload candidate blocks instead (TOM sec. 3.1)."
    ),
    sndp: bool = typer.Option(
        False, "--sndp", help="Show SNDP's offload blocks instead (SNDP sec. 3.1-3.2)."
    ),
    blocks_rule: str = typer.Option(
        "loops",
        "--blocks",
        help=f"TOM's block rule with --tom: {' or '.join(BLOCK_RULES)} (see docs/offload.md).",
    ),
) -> None:
    """Print the basic blocks, loops, liveness and instruction classes of each kernel."""
    if tom and sndp:
        raise typer.BadParameter("give one of --tom and --sndp, not both", param_hint="--sndp")
    if blocks_rule not in BLOCK_RULES:
        raise typer.BadParameter(f"expected one of {', '.join(BLOCK_RULES)}, got "
                                 f"{blocks_rule!r}", param_hint="--blocks")  # fmt: skip
    module = parse_ptx_file(ptx)
    functions = list(module.functions.values())
    if kernel is not None:
        functions = [module.function(kernel)]
    if not functions:
        raise PTXError(f"{ptx}: defines no function")
    if tom or sndp:  # an offload pass: its blocks, and nothing else
        if tom:
            found = [(f, tom_candidates(f, blocks_rule)) for f in functions]
            key, show = "tom_candidates", _print_tom
        else:
            found = [(f, sndp_blocks(f)) for f in functions]
            key, show = "sndp_blocks", _print_sndp
        if as_json:
            reports = [
                {"name": f.name, "kernel": f.is_kernel, "num_instructions": len(f.instructions),
                 **({"blocks": blocks_rule, "thread_live_registers": thread_live_registers(f)}
                    if tom else {}),
                 key: [block.as_dict() for block in blocks]}
                for f, blocks in found
            ]  # fmt: skip
            typer.echo(json.dumps({"module": str(ptx), "functions": reports}, indent=2))
            return
        for f, blocks in found:
            show(f, blocks)
        return
    reports = [function_report(f, instructions=as_json or instructions) for f in functions]
    if as_json:
        typer.echo(json.dumps({"module": str(ptx), "functions": reports}, indent=2))
        return
    for report in reports:
        _print_function(report, instructions)
