"""The command line's vocabulary: every option more than one command takes, defined once, so that
a name means one thing everywhere, with the same short flag and the same word for its value.

A command that takes one value of a concept names it in the singular (``run --workload``), one
that takes a comma-separated list in the plural (``reproduce --workloads``); the two share a
short flag. Help texts list the values a registry accepts (presets, workloads, sizes), read
from the registry when the command line is built. A name an earlier release used is still
accepted, hidden from ``--help``, with a warning naming the new one (:func:`deprecated`).
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import typer

from ndpsim.cli.main import console
from ndpsim.cli.paths import to_stdout
from ndpsim.errors import ConfigError
from ndpsim.systems import system_preset_names
from ndpsim.workloads.params import SIZES

#: Each shared option's long name: its short flag (or None) and the word for its value.
VOCABULARY: dict[str, tuple[str | None, str]] = {
    "--workload": ("-w", "NAME"),
    "--workloads": ("-w", "NAME,..."),
    "--system": (None, "PRESET"),
    "--systems": (None, "NAME,..."),
    "--size": ("-s", "SIZE"),
    "--seed": (None, "N"),
    "--set": (None, "KEY=VALUE"),
    "--out": (None, "DIR"),
    "--json": (None, "FILE"),
    "--jobs": ("-j", "N"),
    "--kernel": ("-k", "NAME"),
    "--param": (None, "KEY=VALUE"),
}

#: Names earlier releases used, and the name that replaced each.
RETIRED = {"--only": "--workloads", "--variants": "--systems"}


def _option(default: Any, name: str, help: str, **settings: Any) -> Any:
    short, metavar = VOCABULARY[name]
    names = (name, short) if short else (name,)
    return typer.Option(default, *names, metavar=metavar, help=help, **settings)


def _listed(values: Iterable[str]) -> str:
    return ", ".join(values)


def _size(value: str) -> str:
    if value not in SIZES:
        raise typer.BadParameter(f"expected one of {_listed(SIZES)}, got {value!r}")
    return value


_SEED = ("Seed of everything random in a run: the inputs, the random page placement and the "
         "random offload choices; a run is deterministic for its seed")  # fmt: skip

SIZE = _option("small", "--size", f"Input size: {_listed(SIZES)} (docs/workloads.md#sizes).",
               parser=_size)  # fmt: skip
SEED = _option(0, "--seed", f"{_SEED}.", min=0)
# for a command whose input may bring its own size and seed (``run --trace``): None until given,
# so that a --size that cannot apply is refused rather than ignored
OPTIONAL_SIZE = _option(None, "--size", f"Input size of --workload: {_listed(SIZES)} (default: "
                        "small; docs/workloads.md#sizes).", parser=_size)  # fmt: skip
OPTIONAL_SEED = _option(None, "--seed", f"{_SEED} (default: 0, or the seed a --trace was saved "
                        "with).", min=0)  # fmt: skip
SYSTEM = _option(..., "--system", f"System preset: {_listed(system_preset_names())}, or a .toml "
                 "file of your own (`ndpsim systems NAME` shows its keys).")  # fmt: skip


def workload(default: str) -> Any:
    """``--workload``, one of the suite or a .py file defining one, or several at once;
    ``default`` says what runs without it."""
    from ndpsim.workloads import workload_names

    return _option(None, "--workload", f"Workload of the suite: {_listed(workload_names())}; or "
                   "a .py file defining one (docs/workloads.md); or several, comma separated, "
                   "run at once on their own cores (bfs,spmv; docs/api.md#several-programs-at-"
                   f"once; default: {default}).")  # fmt: skip


def workloads(default: str) -> Any:
    """``--workloads``, a subset of the suite; ``default`` says which run without it."""
    from ndpsim.workloads import workload_names

    return _option(None, "--workloads", "Comma-separated workloads, any of "
                   f"{_listed(workload_names())} (default: {default}).")  # fmt: skip


def systems(names: Iterable[str]) -> Any:
    """``--systems``, a subset of an experiment's systems ``names``."""
    return _option(None, "--systems", f"Comma-separated systems, any of {_listed(names)} "
                   "(default: all; the baseline always runs).")  # fmt: skip


def overrides(what: str) -> Any:
    """``--set``: ``what`` says which configuration the keys are of, with an example."""
    return _option([], "--set", f"{what} (repeatable; default: none, the preset's values).")


SYSTEM_OVERRIDES = overrides("Override a key of the system preset, e.g. --set sm.count=32")


def params(what: str) -> Any:
    """``--param``: a parameter of ``what`` with a value of its own, instead of its size's."""
    return _option([], "--param", f"Give a parameter of {what} a value of its own instead of "
                   "its size's, e.g. --param n=1000000 (repeatable; `ndpsim workloads show "
                   "NAME` lists the parameters; docs/workloads.md#parameters; default: "
                   "none).")  # fmt: skip


def out(what: str, default: str) -> Any:
    return _option(None, "--out", f"Directory for {what} (default: {default}).")


def json_file(what: str, default: str | None = None, tables: bool = True) -> Any:
    """``--json FILE``: ``what`` the command writes as JSON, and where by ``default`` (when it
    always writes it); ``-`` prints it on standard output, and the command's ``tables`` and
    progress then go to standard error so that the output stays JSON."""
    then = "; the tables then go to standard error" if tables else ""
    text = f"{what}, as JSON (default: {default or 'not written'}); - prints it on standard output"
    return _option(None, "--json", f"{text}{then}.", callback=_json_destination)


def jobs(default: int | None = None, meaning: str = "one per core") -> Any:
    """``--jobs``: how many worker processes, ``default`` (None: one per core) ``meaning``
    what it does."""
    return _option(default, "--jobs", f"Worker processes (default: {meaning}).", min=1,
                   show_default=False)  # fmt: skip


def kernel(help: str) -> Any:
    return _option(None, "--kernel", help)


def _json_destination(ctx: typer.Context, value: Path | None) -> Path | None:
    """With ``--json -``, what the command prints besides the document goes to standard error
    until it ends."""
    if to_stdout(value):
        console.file = sys.stderr
        ctx.call_on_close(lambda: setattr(console, "file", None))
    return value


def deprecated(old: str) -> Any:
    """An option's retired name ``old``, still accepted but not shown by ``--help``."""
    return typer.Option(None, old, hidden=True, metavar=VOCABULARY[RETIRED[old]][1],
                        help=f"Deprecated name of {RETIRED[old]}.")  # fmt: skip


def prefer(value: Any, old_value: Any, old: str) -> Any:
    """The value of an option given by its name or by its retired name ``old`` (with a
    warning), refusing both at once."""
    if old_value is None:
        return value
    new = RETIRED[old]
    if value is not None:
        raise ConfigError(f"{old} is the old name of {new}; give {new} only")
    typer.echo(f"warning: {old} is deprecated; use {new}", err=True)
    return old_value


def names(text: str | None) -> list[str] | None:
    """A comma-separated list as names (None when not given)."""
    if not text:
        return None
    return [name.strip() for name in text.split(",") if name.strip()]
