"""Where a result came from: the code that produced it (package version, git revision, whether
the checkout had uncommitted changes), the libraries the numbers depend on, and when. Written
into every result file so that two files can be told apart and a figure traced to its code."""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import platform
import subprocess
from datetime import UTC, datetime
from functools import cache
from pathlib import Path
from typing import Any

import numba
import numpy as np

PACKAGE_ROOT = Path(__file__).resolve().parent


@cache
def _git(*args: str) -> str | None:
    """The output of a git command run in the package's checkout, or None when the package is
    not in one (an installed wheel) or git is missing."""
    try:
        done = subprocess.run(["git", *args], cwd=PACKAGE_ROOT, capture_output=True, text=True,
                              timeout=10, check=False)  # fmt: skip
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def code_provenance() -> dict[str, Any]:
    """The version of ndpsim and of the libraries behind its numbers, the git revision of the
    checkout (None outside one) and whether its files differ from that revision."""
    status = _git("status", "--porcelain", "--untracked-files=no", "--", ".")
    return {
        "ndpsim": importlib.metadata.version("ndpsim"),
        "git_revision": _git("rev-parse", "HEAD"),
        "git_modified": None if status is None else bool(status),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "numba": numba.__version__,
    }


def now_utc() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def digest(data: Any, length: int = 8) -> str:
    """A short hash of JSON-ready ``data`` (keys sorted): equal data, equal digest."""
    text = json.dumps(data, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:length]
