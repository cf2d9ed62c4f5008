"""The result store of sweeps: one Parquet file per finished run, queried with DuckDB.

A sweep may be killed at any moment (``kill -9``, a cluster taking its node back) and started
again; it must lose no finished run and run none twice. Each run is therefore its own file,
named by its run key, written under a temporary name and renamed into place (``os.replace``
is atomic): a run is wholly stored or not at all, and what is stored is exactly the set of
names in the directory, read without opening a file. A run stored again (its counters
changed) replaces its file. Temporary files of a killed writer never match the names read,
and are removed by the next sweep.

DuckDB reads every file as one table, the view ``runs``; a column missing from some files
(a counter only some systems report, a key only some receive) is empty there.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from ndpsim.errors import ConfigError

#: The Parquet metadata key holding the counters a row was asked for.
COUNTERS_METADATA = b"ndpsim.counters"
_TEMPORARY = re.compile(r"^\.(?P<key>[0-9a-f]+)\.(?P<pid>\d+)\.tmp$")


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
            raise ConfigError(f"{self.root}: no stored runs (a sweep's result directory holds "
                              "runs/*.parquet)")  # fmt: skip
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
    return True


__all__ = ["COUNTERS_METADATA", "ResultStore"]
