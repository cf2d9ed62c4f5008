"""Entry point of the ``ndpsim`` command: sub-commands, imported when used, and error reporting.

Each command's module is imported only when that command runs or shows its own help: the
simulator behind ``run`` imports numba and compiles, the reports import matplotlib, a sweep
imports Ray, and ``ndpsim --help`` or ``ndpsim systems`` need none of them. The root group
lists the commands from :data:`COMMANDS`, and loads one on first use.
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Callable
from typing import Any

import typer
from rich.console import Console
from rich.markup import escape

from ndpsim import __version__
from ndpsim.cli.commands import App, Command, Group
from ndpsim.errors import NdpsimError

#: Every command: the module that defines it (on :data:`app`) and the line ``ndpsim --help``
#: shows for it, which is the first paragraph of the command's own help
#: (tests/cli/test_startup.py checks that they agree), in the order ``--help`` lists them.
COMMANDS: dict[str, tuple[str, str]] = {
    "analyze": ("ndpsim.cli.analyze", "Print the basic blocks, loops, liveness and instruction "
                "classes of each kernel."),
    "dram-trace": ("ndpsim.cli.dram", "Run a trace through one DRAM device and print cycles, "
                   "row-buffer outcomes, latency."),
    "results": ("ndpsim.cli.results", "Query and plot the runs a sweep or a reproduction "
                "stored: without --query, say what is there."),
    "run": ("ndpsim.cli.run", "Simulate a workload (of the suite or your own), a kernel of your "
            "own or a saved trace on a system preset and print a summary."),
    "systems": ("ndpsim.cli.systems", "List the system presets, or show every key of one with "
                "the file and line that set it."),
    "sweep": ("ndpsim.cli.sweep", "Run a design-space study: every system, swept value, "
              "workload, size and seed; runs already in the result directory are not run "
              "again, so a killed sweep resumes."),
    "reproduce": ("ndpsim.cli.reproduce", "Reproduce a paper's key results."),
    "workloads": ("ndpsim.cli.workloads", "The kernel suite."),
}  # fmt: skip


class CommandsOnDemand(Group):
    """The root group: lists every command of :data:`COMMANDS` by its line, and imports a
    command's module when the command is invoked (or asked for its own help)."""

    def list_commands(self, ctx: Any) -> list[str]:
        return [*COMMANDS, *(name for name in self.commands if name not in COMMANDS)]

    def get_command(self, ctx: Any, name: str) -> Any:
        if name in self.commands:
            return self.commands[name]
        if name in COMMANDS:  # as listed: its name and line, its module not imported
            return Command(name=name, help=COMMANDS[name][1])
        return None

    def resolve_command(self, ctx: Any, args: list[str]) -> Any:
        if args:
            self.load(args[0])
        return super().resolve_command(ctx, args)

    def load(self, name: str) -> None:
        """Import the module of command ``name`` and add what it defines to the group."""
        if name in self.commands or name not in COMMANDS:
            return
        importlib.import_module(COMMANDS[name][0])
        for defined, command in typer.main.get_command(app).commands.items():
            self.commands.setdefault(defined, command)

    def load_all(self) -> None:
        """Every command loaded (what a test walking the whole command tree needs)."""
        for name in COMMANDS:
            self.load(name)


console = Console()
errors = Console(stderr=True)

app = App(
    cls=CommandsOnDemand,
    name="ndpsim",
    help="Near-data processing simulator: PTX analysis, SIMT interpretation, NDP systems.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def reports_errors(command: Callable) -> Callable:
    """Print ndpsim's own errors as one clear line and exit with status 2, no traceback."""

    @functools.wraps(command)
    def wrapper(*args, **kwargs):
        try:
            return command(*args, **kwargs)
        except NdpsimError as exc:
            # escaped: a message may quote brackets (a TOML section, a PTX operand) that Rich
            # would take for markup and drop
            errors.print(f"[bold red]error:[/] {escape(str(exc))}", highlight=False, soft_wrap=True)
            raise typer.Exit(2) from None

    return wrapper


def _version(value: bool) -> None:
    if value:
        console.print(f"ndpsim {__version__}")
        raise typer.Exit()


@app.callback()
def main(
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="Print the version and exit."
    ),
) -> None:
    """ndpsim command line."""
