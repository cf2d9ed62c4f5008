"""The Typer app every ``ndpsim`` command and group is made with, so that ``--help`` names what
an option takes by a word (``FILE``, ``N``, ``NAME,...``) and a flag by none.

Typer labels a value by its Python type (``<str>``, ``<list[str]>``, ``<int range>``) and
even gives flags and ``--help`` one (``<bool>``); an argument shows its type beside its name
whatever its metavar says. An option of ours states its metavar (:mod:`ndpsim.cli.options`);
one that does not is named after its type, the way Click does it, rather than left to Typer.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer
from typer.core import TyperArgument, TyperCommand, TyperGroup

#: The word for a value whose option states none, by the type its annotation gives.
_TYPE_WORDS = {int: "N", float: "NUMBER", Path: "PATH"}


class _Argument(TyperArgument):
    """A positional argument shown by its metavar alone (``PTX``, not ``PTX <path>``), in
    capitals when required and in brackets when not, as Click writes a usage line."""

    def display_type_rich(self, ctx: Any) -> str | None:
        return None

    def display_type(self, ctx: Any) -> str:
        return ""

    def _usage_display_name(self) -> str:
        name = self.display_name_raw if self.required else f"[{self.display_name_raw}]"
        return name + ("..." if self.nargs != 1 else "")


def _named_values(params: list[Any]) -> list[Any]:
    """``params`` with a metavar on each: none for a flag, a word for a value that has none."""
    for param in params:
        if isinstance(param, TyperArgument):
            if param.metavar is None:
                param.metavar = param.name.upper()
            param.__class__ = _Argument  # only how it is displayed changes
        elif param.metavar is None:
            if param.is_flag:
                param.metavar = ""
            else:
                annotation = param.type_descriptor.annotation
                param.metavar = _TYPE_WORDS.get(annotation, "TEXT")
    return params


class Command(TyperCommand):
    def get_params(self, ctx: Any) -> list[Any]:
        return _named_values(super().get_params(ctx))


class Group(TyperGroup):
    def get_params(self, ctx: Any) -> list[Any]:
        return _named_values(super().get_params(ctx))


class App(typer.Typer):
    """A :class:`typer.Typer` whose group and commands are :class:`Group` and
    :class:`Command`."""

    def __init__(self, *, cls: type[Group] = Group, **settings: Any) -> None:
        super().__init__(cls=cls, **settings)

    def command(self, name: str | None = None, **settings: Any) -> Any:
        return super().command(name, cls=settings.pop("cls", Command), **settings)
