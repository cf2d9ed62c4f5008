"""``ndpsim results STUDY_OR_DIR``: the stored runs of a sweep or a reproduction, queried with
SQL and plotted."""

from __future__ import annotations

import difflib
from pathlib import Path
from typing import Any

import typer
from rich.markup import escape
from rich.table import Table

from ndpsim.cli import options
from ndpsim.cli.main import app, console, reports_errors
from ndpsim.cli.paths import output_directory, output_file, to_stdout, write_json
from ndpsim.errors import ConfigError
from ndpsim.reports.sweep_plot import sweep_plot
from ndpsim.sweeps.api import results as open_results

#: The most rows printed as a table (``--json`` writes them all).
SHOWN_ROWS = 100
_PLOT_PARTS = ("x", "y", "hue")


@app.command("results")
@reports_errors
def results(
    target: Path = typer.Argument(
        ...,
        metavar="STUDY_OR_DIR",
        help="A result directory (a sweep's, results/sweep-NAME, or a reproduction's "
        "--out), or a study file.",
    ),
    query: str = typer.Option(
        None,
        "--query",
        "-q",
        metavar="SQL",
        help="SQL over the view `runs` (DuckDB), e.g. 'SELECT system, "
        'avg("summary.ipc") FROM runs GROUP BY system\'; dotted column names are quoted '
        "(default: every row for --json and --plot; without either, what the store holds).",
    ),
    plot: str = typer.Option(
        None,
        "--plot",
        metavar="x=KEY,y=COUNTER[,hue=KEY]",
        help="Plot COUNTER against KEY (of the query's result, if "
        "--query is given), a line or bars per HUE (default: no plot).",
    ),
    out: Path = options.out("the plot's PDF and PNG", "the result directory"),
    json_path: Path = options.json_file("Write the rows to FILE", tables=False),
) -> None:
    """Query and plot the runs a sweep or a reproduction stored: without --query, say what is
    there."""
    store = open_results(target)
    if query is None and plot is None and json_path is None:
        _describe(store)
        return
    if json_path is not None:
        output_file(json_path, "--json")
    table = store.query(query or "SELECT * FROM runs")
    rows = table.to_pylist()
    if json_path is not None:
        write_json(json_path, rows, default=str)  # a timestamp as its ISO text
        if not to_stdout(json_path):
            console.print(f"{len(rows)} rows written to {escape(str(json_path))}",
                          highlight=False)  # fmt: skip
    elif query is not None:
        _print(table.column_names, rows)
    if plot is not None:
        x, y, hue = _plot_spec(plot, table.column_names)
        stem = output_directory(out or store.root, "--out") / "-".join(
            _file_part(c) for c in ([y, "by", x] + (["per", hue] if hue else []))
        )
        for path in sweep_plot(rows, x, y, hue, stem):
            console.print(f"plot: {escape(str(path))}", highlight=False)


def _describe(store) -> None:
    columns = store.query("DESCRIBE runs").to_pylist()
    summary = store.query("SELECT count(*) AS runs, count(DISTINCT study) AS studies, "
                          "min(finished) AS first, max(finished) AS last FROM runs")  # fmt: skip
    (first,) = summary.to_pylist()
    console.print(f"{first['runs']} runs of {first['studies']} "
                  f"stud{'y' if first['studies'] == 1 else 'ies'} in {escape(str(store.root))}, "
                  f"finished {first['first']} to {first['last']}", highlight=False,
                  soft_wrap=True)  # fmt: skip
    table = Table(title="columns of the view `runs`", title_justify="left")
    table.add_column("column")
    table.add_column("type")
    for column in columns:
        table.add_row(escape(column["column_name"]), column["column_type"])
    console.print(table)


def _print(names: list[str], rows: list[dict[str, Any]]) -> None:
    table = Table()
    for name in names:
        table.add_column(escape(name), overflow="fold")
    for row in rows[:SHOWN_ROWS]:
        table.add_row(*(escape(_cell(row[name])) for name in names))
    console.print(table)
    if len(rows) > SHOWN_ROWS:
        console.print(f"... {len(rows) - SHOWN_ROWS} more rows (--json writes them all)",
                      highlight=False)  # fmt: skip


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.6g}"
    return str(value)


def _plot_spec(spec: str, columns: list[str]) -> tuple[str, str, str | None]:
    """``x=KEY,y=COUNTER[,hue=KEY]`` as (x, y, hue), each a column of the rows plotted."""
    parts: dict[str, str] = {}
    for item in spec.split(","):
        name, sep, column = item.partition("=")
        name, column = name.strip(), column.strip()
        if not sep or name not in _PLOT_PARTS or not column:
            raise ConfigError(f"--plot {spec!r}: expected x=KEY,y=COUNTER[,hue=KEY]; got "
                              f"{item!r}")  # fmt: skip
        if name in parts:
            raise ConfigError(f"--plot {spec!r}: {name} is given twice")
        if column not in columns:
            close = difflib.get_close_matches(column, columns, n=1)
            hint = f"did you mean '{close[0]}'?" if close else f"columns: {', '.join(columns)}"
            raise ConfigError(f"--plot {name}={column}: no such column ({hint})")
        parts[name] = column
    if "x" not in parts or "y" not in parts:
        raise ConfigError(f"--plot {spec!r}: x and y are needed (x=KEY,y=COUNTER[,hue=KEY])")
    return parts["x"], parts["y"], parts.get("hue")


def _file_part(column: str) -> str:
    return "".join(c if c.isalnum() or c in "._-" else "_" for c in column)
