"""Where a command writes its results: checked before it does its work, so that a path it
cannot write fails at once with one line instead of losing a finished run to a traceback; and
``-``, standard output, for a results document."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import typer

from ndpsim.errors import ConfigError

#: The path that names standard output (``--json -``).
STDOUT = "-"


def to_stdout(path: Path | None) -> bool:
    return path is not None and str(path) == STDOUT


def output_file(path: Path, option: str) -> Path:
    """``path`` once its directory exists and a file can be written there (an existing file is
    left as it is until the command replaces it); standard output as it is."""
    if to_stdout(path):
        return path
    if path.is_dir():
        raise ConfigError(f"{option} {path}: is a directory; expected the path of a file")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        existed = path.exists()
        with path.open("a"):
            pass
        if not existed:
            path.unlink()
    except OSError as error:
        raise ConfigError(f"{option} {path}: cannot write there ({error.strerror})") from None
    return path


def output_directory(path: Path, option: str) -> Path:
    """``path``, created if needed, once files can be written into it."""
    if path.exists() and not path.is_dir():
        raise ConfigError(f"{option} {path}: is a file; expected a directory")
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise ConfigError(f"{option} {path}: cannot create it ({error.strerror})") from None
    if not os.access(path, os.W_OK | os.X_OK):
        raise ConfigError(f"{option} {path}: cannot write there (permission denied)")
    return path


def write_json(path: Path, document: Any, default: Callable[[Any], Any] | None = None) -> None:
    """``document`` as indented JSON in ``path`` (checked by :func:`output_file`), or on
    standard output; ``default`` turns what JSON has no type for into what it has."""
    text = json.dumps(document, indent=2, default=default)
    if to_stdout(path):
        typer.echo(text)
    else:
        path.write_text(text)
