"""What the store keeps of a run: one row of its identity, the values of its swept keys, where
it came from, and the counters its study chose.

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
from typing import Any

from ndpsim.errors import ConfigError
from ndpsim.provenance import now_utc
from ndpsim.sweeps.expansion import Run
from ndpsim.sweeps.study import OPTIONAL


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
        **{key: _cell(value) for key, value in run.swept},
        "ndpsim_version": provenance["ndpsim"],
        "git_revision": provenance["git_revision"],
        "git_modified": provenance["git_modified"],
        "finished": now_utc(),
        "wall_seconds": wall_seconds,
        **counter_columns(results, counters, run.system),
    }


def _cell(value: Any) -> Any:
    """A swept value as a column holds it: a number, string or boolean as it is, a list or
    table as JSON text."""
    return json.dumps(value) if isinstance(value, list | dict) else value


__all__ = ["counter_columns", "row_of"]
