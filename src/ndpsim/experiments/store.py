"""The result store of finished runs, shared by reproductions and sweeps: one Parquet file per
run, named by its run key, queried with DuckDB.

A paper-size run can take an hour, and a sweep or a reproduction may be killed at any moment
(``kill -9``, a cluster taking its node back) and started again; it must lose no finished run
and simulate none twice. Each run is therefore stored as soon as it ends, under a key that
names everything its result depends on: the workload, its size and seed, the fully validated
system configuration with the DRAM preset and energy table it names (which may be the user's
own files), NumPy's version (it draws the inputs), and a fingerprint of every file of the
ndpsim package (code, presets, kernels). Any edit of the simulator therefore misses the store
instead of returning a stale number; a run is deterministic for its seed, so a stored run is
exactly what simulating it again would give.

Each run is its own file (``DIR/runs/KEY.parquet``), written under a temporary name and renamed
into place (``os.replace`` is atomic): a run is wholly stored or not at all, and what is stored
is exactly the set of names in the directory, read without opening a file. A run stored again
replaces its file. Temporary files of a killed writer never match the names read, and are
removed by the next sweep or reproduction. What a row holds is :mod:`ndpsim.experiments.rows`'s.

DuckDB reads every file as one table, the view ``runs``; a column missing from some files
(a counter only some systems report, a key only some receive, a reproduction's whole run) is
empty there.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Iterable, Sequence
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

from ndpsim.errors import ConfigError
from ndpsim.provenance import digest
from ndpsim.systems import resolved_config

PACKAGE_ROOT = Path(__file__).resolve().parent.parent
FORMAT = 1  # bump when what a stored run holds changes, so that the older ones are missed
#: The Parquet metadata key holding the counters a row was asked for.
COUNTERS_METADATA = b"ndpsim.counters"
_TEMPORARY = re.compile(r"^\.(?P<key>[0-9a-f]+)\.(?P<pid>\d+)\.tmp$")


@cache
def code_fingerprint() -> str:
    """SHA-256 over the path and bytes of every file of the ndpsim package, compiled caches
    excepted: whatever changes the simulator changes this."""
    fingerprint = hashlib.sha256()
    for path in sorted(PACKAGE_ROOT.rglob("*")):
        if not path.is_file() or "__pycache__" in path.parts:
            continue
        fingerprint.update(path.relative_to(PACKAGE_ROOT).as_posix().encode())
        fingerprint.update(b"\0")
        fingerprint.update(path.read_bytes())
        fingerprint.update(b"\0")
    return fingerprint.hexdigest()


def run_identity(workload: str, size: str, seed: int, config: Any,
                 params: Iterable[tuple[str, Any]] = ()) -> dict[str, Any]:  # fmt: skip
    """Everything a run's result depends on, as plain data (``params``: the workload's
    parameters given values of their own)."""
    return {
        "format": FORMAT,
        "code": code_fingerprint(),
        "numpy": np.__version__,
        "workload": workload,
        "size": size,
        "seed": seed,
        "param": {key: list(v) if isinstance(v, tuple) else v for key, v in params},
        **resolved_config(config),
    }


def run_key(identity: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(identity, sort_keys=True).encode()).hexdigest()


def config_hash(config: Any) -> str:
    """A digest of the resolved configuration: equal configurations, equal hash."""
    return digest(resolved_config(config), 16)


class ResultStore:
    """A directory of finished runs (``DIR/runs/KEY.parquet``)."""

    def __init__(self, root: Path | str):
        self.root = Path(root)
        self.runs_dir = self.root / "runs"

    def __repr__(self) -> str:
        return f"ResultStore({str(self.root)!r})"

    def path(self, key: str) -> Path:
        return self.runs_dir / f"{key}.parquet"

    def keys(self) -> set[str]:
        """The run key of every stored run."""
        if not self.runs_dir.is_dir():
            return set()
        return {p.name[: -len(".parquet")] for p in os.scandir(self.runs_dir)
                if p.name.endswith(".parquet") and not p.name.startswith(".")}  # fmt: skip

    def stored(self, keys: Iterable[str], counters: Sequence[str]) -> set[str]:
        """Which of ``keys`` are stored with every one of ``counters`` (a run stored by a study
        that kept other counters is simulated again)."""
        import pyarrow.parquet as pq

        present = self.keys()
        wanted = set(counters)
        out = set()
        for key in keys:
            if key not in present:
                continue
            try:
                metadata = pq.read_schema(self.path(key)).metadata or {}
                kept = set(json.loads(metadata.get(COUNTERS_METADATA, b"[]")))
            except (OSError, ValueError):
                continue  # unreadable: simulated again and replaced
            if wanted <= kept:
                out.add(key)
        return out

    def read(self, key: str) -> dict[str, Any] | None:
        """The stored row of ``key``, or None when none is; an OSError or ValueError when its
        file cannot be read."""
        import pyarrow.parquet as pq

        try:
            table = pq.read_table(self.path(key))
        except FileNotFoundError:
            return None
        rows = table.to_pylist()
        if len(rows) != 1:
            raise ValueError(f"it holds {len(rows)} rows, not one")
        return rows[0]

    def write(self, row: dict[str, Any], counters: Sequence[str]) -> Path:
        """Store one run's row, atomically: the file appears whole under its name or not at
        all. ``counters`` are those the row was asked for."""
        import pyarrow as pa
        import pyarrow.parquet as pq

        self.runs_dir.mkdir(parents=True, exist_ok=True)
        table = pa.Table.from_pylist([row])
        table = table.replace_schema_metadata({COUNTERS_METADATA: json.dumps(list(counters))})
        final = self.path(row["run_key"])
        temporary = self.runs_dir / f".{row['run_key']}.{os.getpid()}.tmp"
        try:
            with temporary.open("wb") as f:
                pq.write_table(table, f)
                f.flush()
                os.fsync(f.fileno())
            os.replace(temporary, final)
        except BaseException:
            temporary.unlink(missing_ok=True)
            raise
        return final

    def remove_leftovers(self) -> int:
        """Delete the temporary files of writers that no longer run (killed mid-write); the
        number deleted."""
        if not self.runs_dir.is_dir():
            return 0
        removed = 0
        for entry in os.scandir(self.runs_dir):
            match = _TEMPORARY.match(entry.name)
            if match and not _running(int(match["pid"])):
                Path(entry.path).unlink(missing_ok=True)
                removed += 1
        return removed

    def connect(self):
        """A DuckDB connection with the view ``runs`` over every stored run."""
        import duckdb

        if not self.keys():
            raise ConfigError(f"{self.root}: no stored runs (the result directory of a sweep "
                              "or a reproduction holds runs/*.parquet)")  # fmt: skip
        pattern = str(self.runs_dir / "*.parquet").replace("'", "''")
        connection = duckdb.connect()
        connection.execute(f"CREATE VIEW runs AS SELECT * FROM read_parquet('{pattern}', "
                           "union_by_name = true)")  # fmt: skip
        return connection

    def query(self, sql: str):
        """The result of ``sql`` (DuckDB's dialect, over the view ``runs``) as a
        ``pyarrow.Table``; an error in the SQL is a ConfigError quoting DuckDB's message."""
        import duckdb

        connection = self.connect()
        try:
            relation = connection.sql(sql)
            if relation is None:
                raise ConfigError(f"--query {sql!r}: not a query (it returns no rows)")
            # newer DuckDB releases call it to_arrow_table (fetch_arrow_table deprecated)
            fetch = getattr(relation, "to_arrow_table", None) or relation.fetch_arrow_table
            return fetch()
        except duckdb.Error as error:
            lines = [line.strip() for line in str(error).splitlines()]
            message = "; ".join(line for line in lines if line.strip("^"))
            if "Referenced table" in message:
                message += ' (a dotted column is quoted: "summary.ipc")'
            raise ConfigError(f"--query: {message}") from None
        finally:
            connection.close()


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return not _ended(pid)


def _ended(pid: int) -> bool:
    """Whether ``pid`` has ended but is not reaped yet (a zombie, as Linux's /proc tells; False
    where there is no /proc). A writer killed with its parent waits for the init process to
    reap it, which some take seconds to do: long enough for a sweep started again to meet it."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rpartition(")")[2].split()[:1] == ["Z"]


__all__ = ["COUNTERS_METADATA", "ResultStore", "code_fingerprint", "config_hash",
           "run_identity", "run_key"]  # fmt: skip
