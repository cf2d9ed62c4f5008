"""Workload parameters chosen one by one: ``--param n=1000000`` on top of a size.

A size is a set of parameters a workload declares (``vadd`` at ``small``: ``n`` and ``block``).
A researcher matching another tool's experiment needs an element count or a shape no size has,
so any declared parameter may be given a value of its own. A value is checked against the
parameter's declared value: an integer stays an integer, a shape stays a shape of as many
integers, so that a typo fails before anything runs, with the keys the workload accepts.

Integers are counts, extents and shapes (every integer parameter of the suite is one), so they
must be positive, and at most ``2**31 - 1``: the kernels take their sizes as 32-bit integers, so a
larger value would wrap around inside them rather than run bigger. Whether a combination makes
sense (a CTA of more than 1,024 threads, a filter longer than its data) is the workload's to
say when it runs.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any

from ndpsim.errors import WorkloadError

#: The sizes every workload declares its parameters for: ``tiny`` for tests, ``small`` by
#: default, ``paper`` for reproductions (docs/workloads.md#sizes).
SIZES = ("tiny", "small", "paper")

#: The largest integer parameter: the kernels take sizes as signed 32-bit integers.
MAX_INTEGER = 2**31 - 1


def parse_param_options(options: Iterable[str]) -> dict[str, str]:
    """``["n=1000", "block=128"]`` (the repeatable ``--param KEY=VALUE``) as ``{"n": "1000",
    "block": "128"}``; each value is checked later, against the workload's parameters."""
    out: dict[str, str] = {}
    for option in options:
        key, equals, value = option.partition("=")
        key = key.strip()
        if not equals or not key:
            raise WorkloadError(f"--param {option!r}: expected KEY=VALUE, e.g. --param n=4096")
        if key in out:
            raise WorkloadError(f"--param: {key!r} is given twice")
        out[key] = value.strip()
    return out


def with_params(workload: str, declared: Mapping[str, Any],
                given: Mapping[str, Any]) -> dict[str, Any]:  # fmt: skip
    """``declared`` (a size's parameters of ``workload``) with the values ``given`` in place,
    each converted to its parameter's type (a string as the command line gives it, or a value
    as Python or TOML gives it)."""
    out = dict(declared)
    for key, value in given.items():
        if key not in declared:
            raise WorkloadError(f"workload {workload!r} has no parameter {key!r}; it takes "
                                f"{', '.join(declared) or 'none'}")  # fmt: skip
        out[key] = _converted(workload, key, declared[key], value)
    return out


def params_for_each(workloads: Mapping[str, Mapping[str, Any]],
                    given: Mapping[str, Any]) -> dict[str, dict[str, Any]]:  # fmt: skip
    """For a command running several workloads ({name: a size's parameters}): the ``given``
    values each one takes. A key applies to every workload that has the parameter and must be
    one of at least one of them (a misspelt key is an error, never a no-op)."""
    for key in given:
        if not any(key in declared for declared in workloads.values()):
            accepted = sorted({k for declared in workloads.values() for k in declared})
            raise WorkloadError(f"--param {key!r}: none of the workloads "
                                f"({', '.join(workloads)}) has that parameter; they take "
                                f"{', '.join(accepted) or 'none'}")  # fmt: skip
    return {name: {k: v for k, v in given.items() if k in declared}
            for name, declared in workloads.items()}  # fmt: skip


def shown_value(value: Any) -> str:
    """A parameter's value as ``--param`` takes it: ``4096``, ``32,16,8``."""
    return ",".join(map(str, value)) if isinstance(value, tuple | list) else str(value)


def shown(params: Mapping[str, Any]) -> str:
    """Parameters as ``--param`` takes them, space-separated: ``n=4096 cells=32,16,8``."""
    return " ".join(f"{key}={shown_value(value)}" for key, value in params.items())


def name_suffix(params: Mapping[str, Any]) -> str:
    """What a directory or file name of a run with ``params`` adds to its size's name
    (``-n=4096-block=128``; nothing without parameters), so that it never replaces the
    size's own."""
    return "".join(f"-{key}={shown_value(value)}" for key, value in params.items())


def _converted(workload: str, key: str, declared: Any, value: Any) -> Any:
    where = f"workload {workload!r} parameter {key!r}"
    if isinstance(declared, bool):
        return _boolean(where, value)
    if isinstance(declared, int):
        return _integer(where, value)
    if isinstance(declared, float):
        return _real(where, value)
    if isinstance(declared, tuple) and all(_is_integer(v) for v in declared):
        return _shape(where, value, len(declared))
    if isinstance(declared, str):
        if not isinstance(value, str):
            raise WorkloadError(f"{where}: expected a string, got {value!r}")
        return value
    raise WorkloadError(f"{where}: a {type(declared).__name__} parameter cannot be set one by "
                        "one; choose a size")  # fmt: skip


def _is_integer(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _integer(where: str, value: Any) -> int:
    if isinstance(value, str):
        try:
            value = int(value.replace("_", ""))
        except ValueError:
            raise WorkloadError(f"{where}: expected an integer, got {value!r}") from None
    if not _is_integer(value):
        raise WorkloadError(f"{where}: expected an integer, got {value!r}")
    if not 1 <= value <= MAX_INTEGER:
        raise WorkloadError(f"{where}: expected an integer from 1 to {MAX_INTEGER:,} (the "
                            f"kernels take 32-bit sizes), got {value:,}")  # fmt: skip
    return value


def _shape(where: str, value: Any, length: int) -> tuple[int, ...]:
    parts = value
    if isinstance(value, str):
        parts = [part.strip() for part in value.strip().strip("()").split(",")]
    if not isinstance(parts, list | tuple) or len(parts) != length:
        raise WorkloadError(f"{where}: expected {length} integers separated by commas (e.g. "
                            f"{','.join(['32'] * length)}), got {value!r}")  # fmt: skip
    return tuple(_integer(where, part) for part in parts)


def _real(where: str, value: Any) -> float:
    if isinstance(value, str):
        try:
            value = float(value)
        except ValueError:
            raise WorkloadError(f"{where}: expected a number, got {value!r}") from None
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise WorkloadError(f"{where}: expected a finite number, got {value!r}")
    return float(value)


def _boolean(where: str, value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.lower() in ("true", "false"):
        return value.lower() == "true"
    raise WorkloadError(f"{where}: expected true or false, got {value!r}")


__all__ = ["MAX_INTEGER", "name_suffix", "params_for_each", "parse_param_options", "shown",
           "shown_value", "with_params"]  # fmt: skip
