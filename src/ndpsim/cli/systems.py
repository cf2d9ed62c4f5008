"""``ndpsim systems``: the system presets, or every key of one with where it was set.

Listing the presets reads their files (and bases) as written, which needs neither the
simulator nor numba; showing one preset validates it, with its kind's model.
"""

from __future__ import annotations

import json

import typer
from rich.markup import escape
from rich.table import Table

from ndpsim.cli import options
from ndpsim.cli.main import app, console, reports_errors
from ndpsim.config import parse_overrides
from ndpsim.systems.kinds import system_preset_descriptions, system_preset_names, system_settings


@app.command("systems")
@reports_errors
def list_systems(
    name: str = typer.Argument(
        None,
        metavar="PRESET",
        help=f"A preset ({', '.join(system_preset_names())}) or .toml "
        "file to show key by key (default: list the presets).",
    ),
    overrides: list[str] = options.SYSTEM_OVERRIDES,
) -> None:
    """List the system presets, or show every key of one with the file and line that set it."""
    if name is None:
        table = Table()
        table.add_column("system")
        table.add_column("description")
        for preset, description in system_preset_descriptions():
            table.add_row(preset, escape(description))
        console.print(table)
        return
    table = Table(title=f"{name}: every key, and what set it")
    for column in ("key", "value", "set by", "note"):
        table.add_column(column, overflow="fold")
    for setting in system_settings(name, parse_overrides(overrides)):
        value = "-" if setting.value is None else json.dumps(setting.value)
        note = escape(setting.comment)
        if setting.description:
            note += ("\n" if note else "") + f"[dim]{escape(setting.description)}[/]"
        table.add_row(escape(setting.key), escape(value), escape(setting.origin), note)
    console.print(table)
