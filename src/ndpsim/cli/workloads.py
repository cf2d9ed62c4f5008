"""``ndpsim workloads``: list the kernel suite, or interpret it and check every output."""

from __future__ import annotations

from pathlib import Path

import typer
from rich import box
from rich.table import Table

from ndpsim.cli import options
from ndpsim.cli.commands import App
from ndpsim.cli.limits import (
    MAX_DEVICE_GB,
    MAX_INSTRUCTIONS,
    MAX_LAUNCHES,
    MAX_TRACE_GB,
    limits_from,
)
from ndpsim.cli.main import app, console, reports_errors
from ndpsim.cli.paths import output_directory, output_file, write_json
from ndpsim.cli.progress import tracking
from ndpsim.trace.work import LINE_BYTES
from ndpsim.workloads import SIZES, get_workload, run_workload, workload_names
from ndpsim.workloads.params import (
    name_suffix,
    params_for_each,
    parse_param_options,
    shown,
    shown_value,
)
from ndpsim.workloads.replay import save_run

workloads_app = App(help="The kernel suite.", no_args_is_help=True)
app.add_typer(workloads_app, name="workloads")


def _count(value: int) -> str:
    """A count in three significant figures (12.3k, 4.56M) so the table fits a terminal."""
    for scale, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if value >= scale:
            return f"{value / scale:.3g}{suffix}"
    return str(value)


def _selected(text: str | None) -> list[str]:
    chosen = options.names(text)
    if chosen is None:
        return workload_names()
    for name in chosen:
        get_workload(name)  # unknown names fail with the list of known ones
    return [name.lower() for name in chosen]


@workloads_app.command("list")
@reports_errors
def list_workloads() -> None:
    """List every workload with its kernels' module and the papers that use it."""
    table = Table()
    for column in ("workload", "title", "papers", "module"):
        table.add_column(column)
    for name in workload_names():
        cls = get_workload(name)
        table.add_row(name, cls.title, ", ".join(cls.papers), cls("tiny").ptx_file.name)
    console.print(table)


@workloads_app.command("show")
@reports_errors
def show(
    name: str = typer.Argument(..., metavar="NAME", help="A workload of the suite."),
) -> None:
    """Show a workload's parameters at each size: what --param may change."""
    cls = get_workload(name)
    table = Table(title=f"{cls.name}: {cls.title}", title_justify="left")
    table.add_column("parameter")
    for size in SIZES:
        table.add_column(size, justify="right")
    keys = list(dict.fromkeys(key for size in SIZES for key in cls.sizes[size]))
    for key in keys:
        table.add_row(key, *(shown_value(cls.sizes[size][key]) if key in cls.sizes[size] else "-"
                             for size in SIZES))  # fmt: skip
    console.print(table)


@workloads_app.command("run")
@reports_errors
def run(
    size: str = options.SIZE,
    workloads: str = options.workloads("every one"),
    only: str = options.deprecated("--only"),
    seed: int = options.SEED,
    params: list[str] = options.params("the workloads that have it"),
    save_traces_dir: Path = typer.Option(
        None,
        "--save-traces",
        metavar="DIR",
        help="Save each workload's run to DIR/NAME-SIZE/ (then -KEY=VALUE for each --param it "
        "takes) for `ndpsim run --trace` and "
        "`ndpsim dram-trace` (docs/traces.md; default: not saved).",
    ),
    json_path: Path = options.json_file("Write the table to FILE too"),
    max_instructions: int = MAX_INSTRUCTIONS,
    max_launches: int = MAX_LAUNCHES,
    max_trace_gb: float = MAX_TRACE_GB,
    max_device_gb: float = MAX_DEVICE_GB,
) -> None:
    """Interpret every workload, check it against its NumPy reference, and tabulate its work
    and the global data its kernels touch (data MiB)."""
    names = _selected(options.prefer(workloads, only, "--only"))
    asked = parse_param_options(params)
    given = params_for_each({name: get_workload(name).sizes[size] for name in names}, asked)
    for name in names:
        get_workload(name)(size, seed, given[name])  # a bad value fails before anything runs
    limits = limits_from(max_instructions, max_launches, max_trace_gb, max_device_gb)
    if save_traces_dir is not None:
        output_directory(save_traces_dir, "--save-traces")
    if json_path is not None:
        output_file(json_path, "--json")
    rows = []
    with tracking(f"interpreting {len(names)} workloads", len(names)) as progress:
        for name in names:
            result = run_workload(name, size, seed, params=given[name], limits=limits)
            if save_traces_dir is not None:
                suffix = name_suffix(result.workload.chosen)  # other inputs, another directory
                save_run(result, save_traces_dir / f"{name}-{size}{suffix}")
            rows.append(
                {
                    "workload": name,
                    "param": result.workload.chosen,
                    "launches": len(result.traces),
                    "threads": result.threads,
                    "warp_instructions": result.num_warp_instructions,
                    "thread_instructions": result.num_thread_instructions,
                    "memory_accesses": result.num_memory_accesses,
                    "touched_bytes": result.touched_bytes(LINE_BYTES),
                    "check": "ok" if result.check.passed else result.check.detail,
                    "seconds": round(result.seconds, 3),
                }
            )
            progress.advance(name)
    chosen = f", --param {shown(asked)}" if asked else ""
    table = Table(
        title=f"kernel suite at size {size!r} (seed {seed}{chosen})", title_justify="left",
        box=box.SIMPLE_HEAD, pad_edge=False,
    )  # fmt: skip
    for column, justify in (
        ("workload", "left"), ("threads", "right"),
        ("warp-instr", "right"), ("thread-instr", "right"), ("mem-acc", "right"),
        ("data MiB", "right"), ("sec", "right"),
    ):  # fmt: skip
        table.add_column(column, justify=justify, no_wrap=True)
    table.add_column("check", overflow="fold", min_width=5)
    for row in rows:
        ok = row["check"] == "ok"
        table.add_row(
            row["workload"], _count(row["threads"]),
            _count(row["warp_instructions"]), _count(row["thread_instructions"]),
            _count(row["memory_accesses"]), f"{row['touched_bytes'] / 2**20:.2f}",
            f"{row['seconds']:.2f}",
            "[green]ok[/]" if ok else f"[red]{row['check']}[/]",
        )  # fmt: skip
    console.print(table)
    if json_path is not None:
        write_json(json_path, {"size": size, "seed": seed, "workloads": rows})
    failed = [r["workload"] for r in rows if r["check"] != "ok"]
    if failed:
        console.print(f"[bold red]{len(failed)} workload(s) differ from their reference:[/] "
                      + ", ".join(failed))  # fmt: skip
        raise typer.Exit(1)
