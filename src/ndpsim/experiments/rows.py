"""What the store keeps of a run: one row of its identity, the values of its swept keys, where
it came from, and the counters it keeps; a sweep's and a reproduction's rows alike, so that one
query reads both.

A counter is a dotted path into the run's results (``RunResult.as_dict()``: ``time_ps``,
``summary.ipc``, ``energy_nj.total``, ``stats.dram.total.row_hits``); a path to a table keeps
every value inside it, one column per leaf, named by its full path. Lists are kept as JSON
text. A path the results do not have is an error naming the closest one they do, unless it ends
in ``?`` (a counter only some systems report: empty in the others' rows).
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from ndpsim.errors import ConfigError
from ndpsim.provenance import now_utc

#: What a run keeps unless told otherwise (a study naming no counters, every reproduction): the
#: simulated time, every headline figure and the energy by part (each dict expands to one
#: column per leaf).
DEFAULT_COUNTERS = ("time_ps", "summary", "energy_nj")
#: Columns every stored row has; neither a swept key nor a counter may take their names.
FIXED_COLUMNS = (
    "run_key", "config_hash", "study", "system", "preset", "workload", "size", "seed",
    "ndpsim_version", "git_revision", "git_modified", "finished", "wall_seconds",
)  # fmt: skip
#: The column of a reproduction's row holding its whole run as JSON text (``time_ps``,
#: ``summary``, ``energy_nj``, ``wall_seconds``): what a reproduction started again takes
#: instead of simulating. Empty in a sweep's rows.
RUN_COLUMN = "run_json"
#: Starts a study key and a column that are a workload parameter (``param.n``), not a
#: configuration key.
PARAM_PREFIX = "param."
#: Ends a counter that some systems' results lack (``summary.offload?``: empty in their rows);
#: any other counter a run's results lack fails the run, so that a misspelt one is noticed.
OPTIONAL = "?"


#: A workload's parameters given values of their own, converted, in the order given.
Params = tuple[tuple[str, Any], ...]


@dataclass(frozen=True)
class Run:
    """One simulation, of a sweep or of a reproduction: a workload's input on one configured
    system."""

    key: str  # run_key of its identity: what the store files it under
    system: str  # the study's name for the system (a reproduction's: its variant's)
    preset: str
    config: Any = field(repr=False, compare=False)  # validated
    config_hash: str  # a digest of the resolved configuration
    swept: tuple[tuple[str, Any], ...]  # every swept key, None where the system lacks it
    workload: str
    size: str
    seed: int
    #: the workload's parameters given values of their own (``--param``, a study's
    #: ``param.KEY``), converted, in the order given; stored as columns ``param.KEY``
    params: Params = ()

    @property
    def input(self) -> tuple[str, str, int, Params]:
        """What the interpreter's trace depends on: runs sharing it share one trace."""
        return self.workload, self.size, self.seed, self.params

    def label(self) -> str:
        """The run for a person: ``bfs tiny s0 on tom-ndp (sm.count=32)``."""
        given = ", ".join(f"{k}={_shown(v)}" for k, v in (*self.param_columns(), *self.swept)
                          if v is not None)  # fmt: skip
        where = f" ({given})" if given else ""
        return f"{self.workload} {self.size} s{self.seed} on {self.system}{where}"

    def param_columns(self) -> tuple[tuple[str, Any], ...]:
        """Its chosen workload parameters as (column, value): ``param.n``."""
        return tuple((f"{PARAM_PREFIX}{key}", value) for key, value in self.params)


def _shown(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.6g}"
    return value if isinstance(value, str) else json.dumps(value)


def counter_columns(results: dict[str, Any], counters: Sequence[str],
                    system: str) -> dict[str, Any]:  # fmt: skip
    """{column: value} of ``counters`` in a run's ``results``."""
    out: dict[str, Any] = {}
    for counter in counters:
        path = counter.removesuffix(OPTIONAL)
        node: Any = results
        walked: list[str] = []
        for part in path.split("."):
            if not isinstance(node, dict) or part not in node:
                if counter.endswith(OPTIONAL):
                    break
                raise ConfigError(_missing(path, walked, node, system))
            node = node[part]
            walked.append(part)
        else:
            out.update(_columns(path, node))
    return out


def _missing(counter: str, walked: list[str], node: Any, system: str) -> str:
    where = ".".join(walked)
    if not isinstance(node, dict):
        return (f"counter '{counter}': '{where}' is a value in the results of system "
                f"{system!r}, not a table")  # fmt: skip
    part = counter.split(".")[len(walked)]
    names = sorted(node)
    close = difflib.get_close_matches(part, names, n=1)
    inside = f" in '{where}'" if where else ""
    hint = f"did you mean '{close[0]}'?" if close else f"it has: {', '.join(names)}"
    return (f"counter '{counter}': no '{part}'{inside} in the results of system {system!r} "
            f"({hint})")  # fmt: skip


def _columns(path: str, node: Any) -> Iterator[tuple[str, Any]]:
    if isinstance(node, dict) and node:
        for key, value in node.items():
            yield from _columns(f"{path}.{key}", value)
    elif isinstance(node, list | dict):
        yield path, json.dumps(node)
    else:
        yield path, node


def row_of(run: Run, study: str, results: dict[str, Any], wall_seconds: float,
           counters: Sequence[str], provenance: dict[str, Any]) -> dict[str, Any]:  # fmt: skip
    """The stored row of ``run``: its fixed columns (``FIXED_COLUMNS``), a column per swept
    key, then the counters. ``provenance`` is :func:`ndpsim.provenance.code_provenance`."""
    return {
        "run_key": run.key,
        "config_hash": run.config_hash,
        "study": study,
        "system": run.system,
        "preset": run.preset,
        "workload": run.workload,
        "size": run.size,
        "seed": run.seed,
        **{key: _cell(value) for key, value in (*run.param_columns(), *run.swept)},
        "ndpsim_version": provenance["ndpsim"],
        "git_revision": provenance["git_revision"],
        "git_modified": provenance["git_modified"],
        "finished": now_utc(),
        "wall_seconds": wall_seconds,
        **counter_columns(results, counters, run.system),
    }


def _cell(value: Any) -> Any:
    """A swept value as a column holds it: a number, string or boolean as it is, a list,
    shape or table as JSON text."""
    return json.dumps(value) if isinstance(value, list | tuple | dict) else value


__all__ = ["DEFAULT_COUNTERS", "FIXED_COLUMNS", "OPTIONAL", "PARAM_PREFIX", "RUN_COLUMN", "Params",
           "Run", "counter_columns", "row_of"]  # fmt: skip
