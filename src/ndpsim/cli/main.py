"""Entry point of the ``ndpsim`` command: sub-commands and error reporting."""

from __future__ import annotations

import functools
from collections.abc import Callable

import typer
from rich.console import Console
from rich.markup import escape

from ndpsim import __version__
from ndpsim.cli.commands import App
from ndpsim.errors import NdpsimError

console = Console()
errors = Console(stderr=True)

app = App(
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


def _register() -> None:
    from ndpsim.cli import (  # noqa: F401  (each adds its commands)
        analyze,
        dram,
        reproduce,
        results,
        run,
        sweep,
        workloads,
    )


_register()
