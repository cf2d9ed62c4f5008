"""Checking, before a command does its work, that it will be able to write its results: a path
it cannot write fails at once with one line, instead of losing a finished run to a traceback."""

from __future__ import annotations

import os
from pathlib import Path

from ndpsim.errors import ConfigError


def output_file(path: Path, option: str) -> Path:
    """``path`` once its directory exists and a file can be written there (an existing file is
    left as it is until the command replaces it)."""
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
