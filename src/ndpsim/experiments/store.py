"""Finished runs kept on disk, so that a reproduction interrupted, extended with variants or run
again does not simulate a second time what it already has.

A paper-size run can take an hour per (workload, system) pair. Each pair's summary is written
as soon as it finishes, under a key that names everything its result depends on: the workload,
its size and seed, the fully validated system configuration with the DRAM preset and energy
table it names (which may be the user's own files), NumPy's version (it draws the inputs), and
a fingerprint of every file of the ndpsim package (code, presets, kernels). Any edit of the
simulator therefore misses the store instead of returning a stale number; a run is
deterministic for its seed, so a stored summary is exactly what simulating again would give.

Entries are JSON files written atomically (a temporary file renamed into place), so a run
killed mid-write leaves no half entry. An entry that cannot be read or does not match its key
is simulated again and rewritten, with a warning.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import warnings
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

from ndpsim.systems import resolved_config

PACKAGE_ROOT = Path(__file__).resolve().parent.parent
FORMAT = 1  # bump when the layout of an entry changes


@cache
def code_fingerprint() -> str:
    """SHA-256 over the path and bytes of every file of the ndpsim package, compiled caches
    excepted: whatever changes the simulator changes this."""
    digest = hashlib.sha256()
    for path in sorted(PACKAGE_ROOT.rglob("*")):
        if not path.is_file() or "__pycache__" in path.parts:
            continue
        digest.update(path.relative_to(PACKAGE_ROOT).as_posix().encode())
        digest.update(b"\0")
        digest.update(path.read_bytes())
        digest.update(b"\0")
    return digest.hexdigest()


def run_identity(workload: str, size: str, seed: int, config: Any) -> dict[str, Any]:
    """Everything a run's result depends on, as plain data."""
    return {
        "format": FORMAT,
        "code": code_fingerprint(),
        "numpy": np.__version__,
        "workload": workload,
        "size": size,
        "seed": seed,
        **resolved_config(config),
    }


def run_key(identity: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(identity, sort_keys=True).encode()).hexdigest()


@dataclass(frozen=True)
class RunStore:
    """A directory of finished runs. ``reuse=False`` simulates every run again (and stores it),
    for when the stored ones are in doubt."""

    root: Path
    reuse: bool = True

    def path(self, key: str) -> Path:
        return self.root / f"{key}.json"

    def load(self, identity: dict[str, Any]) -> dict[str, Any] | None:
        """The stored run of ``identity``, or None."""
        if not self.reuse:
            return None
        path = self.path(run_key(identity))
        try:
            text = path.read_text()
        except FileNotFoundError:
            return None
        try:
            entry = json.loads(text)
            if entry["identity"] != identity:
                raise ValueError("its identity differs from its key's")
            return entry["run"]
        except (ValueError, KeyError, TypeError) as err:
            warnings.warn(f"{path}: stored run unreadable ({err}); simulating it again",
                          stacklevel=2)  # fmt: skip
            return None

    def save(self, identity: dict[str, Any], run: dict[str, Any]) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        path = self.path(run_key(identity))
        text = json.dumps({"identity": identity, "run": run}, sort_keys=True)
        fd, tmp = tempfile.mkstemp(dir=self.root, prefix=".", suffix=".tmp")
        try:
            with os.fdopen(fd, "w") as f:
                f.write(text)
            os.replace(tmp, path)
        except BaseException:
            os.unlink(tmp)
            raise


__all__ = ["RunStore", "code_fingerprint", "run_identity", "run_key"]
