"""A study file: the systems to compare, the configuration keys to sweep and how (a grid, lists
zipped together, random samples), the workloads, sizes and seeds, and the counters each run
keeps.

A sweep runs for hours, so a study is validated completely when it loads, the way a preset is:
its own keys by a strict model, every workload and preset by name, and every value it gives a
configuration key by the systems that receive it (the validation ``--set`` gets), so that a
misspelt key or a value out of range stops it before the first run, naming the file, the line
and the key. :mod:`ndpsim.sweeps.expansion` then turns it into runs.
"""

from __future__ import annotations

import difflib
import json
import math
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BeforeValidator, Field

from ndpsim.config import Strict, load_toml, merge, validate
from ndpsim.errors import ConfigError, WorkloadError
from ndpsim.experiments.overrides import has_section
from ndpsim.experiments.rows import DEFAULT_COUNTERS, FIXED_COLUMNS, OPTIONAL, PARAM_PREFIX
from ndpsim.systems import load_system_config
from ndpsim.toml_lines import KeyLines, file_key_lines
from ndpsim.workloads import SIZES, get_workload, mix_parts, workload_names
from ndpsim.workloads.params import with_params

#: The most runs a study may expand to: far beyond a cluster's week, small enough to list.
MAX_RUNS = 1_000_000
#: How a random sample draws a key: ``{uniform = [low, high]}`` (a float), ``loguniform`` (a
#: float, uniform in its logarithm), ``integers`` (an integer, both ends included) or
#: ``choice`` (one of a list).
DISTRIBUTIONS = ("uniform", "loguniform", "integers", "choice")

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
_PATH = re.compile(r"^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$")


def _preset_as_entry(value: Any) -> Any:
    """A system given as a bare preset name (or ``.toml`` path) is that preset unchanged."""
    return {"preset": value} if isinstance(value, str) else value


class SystemEntry(Strict):
    """One system of a study: a preset with keys of its own, under a name of its own."""

    preset: str = Field(min_length=1, description="a system preset, or a .toml file")
    name: str | None = Field(None, description="the system's name in the results (default: "
                             "the preset's)")  # fmt: skip
    set: dict[str, Any] = Field(default_factory=dict, description="keys this system sets "
                                "itself (what tells it from the other systems)")  # fmt: skip


class RandomSection(Strict):
    samples: int = Field(ge=1, le=MAX_RUNS, description="how many points to draw")
    seed: int = Field(0, ge=0, le=2**63 - 1, description="of the draws")
    keys: dict[str, Any] = Field(min_length=1, description="each key's distribution")


class StudyFile(Strict):
    """The keys of a study file (see docs/sweeps.md)."""

    name: str | None = Field(None, pattern=_NAME.pattern, description="the study's name "
                             "(default: the file's name); names its result directory")  # fmt: skip
    description: str = ""
    systems: list[Annotated[SystemEntry, BeforeValidator(_preset_as_entry)]] = Field(min_length=1)
    workloads: list[str] = Field(min_length=1)
    sizes: list[Literal[SIZES]] = Field(["small"], min_length=1)  # type: ignore[valid-type]
    seeds: list[Annotated[int, Field(ge=0, le=2**63 - 1)]] = Field([0], min_length=1)
    counters: list[str] = Field(list(DEFAULT_COUNTERS), min_length=1)
    set: dict[str, Any] = Field(default_factory=dict, description="keys every system gets")
    grid: dict[str, Any] = Field(default_factory=dict, description="every combination")
    zip: dict[str, Any] = Field(default_factory=dict, description="lists varied together")
    random: RandomSection | None = None


@dataclass(frozen=True)
class Distribution:
    """How a random sample draws one key."""

    kind: str  # one of DISTRIBUTIONS
    values: tuple[Any, ...]  # (low, high), or the choices

    def extremes(self) -> tuple[Any, ...]:
        """The values a system must accept for every draw to be valid: the ends of a range,
        or every choice."""
        return self.values


@dataclass(frozen=True)
class System:
    """A study's system, validated: its name, preset and own keys (nested, as ``--set``
    gives them), and the configuration those make."""

    name: str
    preset: str
    own: dict[str, Any]
    config: Any = field(repr=False, compare=False)

    def receives(self, key: str) -> bool:
        """Whether a study key reaches this system: a key of a section the system has not
        (``ndp.*`` on a GPU without near-data processing) leaves it as it is, and a workload
        parameter (``param.*``) reaches none."""
        return not key.startswith(PARAM_PREFIX) and has_section(self.config, key.split(".")[0])


@dataclass(frozen=True)
class Study:
    """A study as loaded: every name checked and every value accepted by its systems."""

    name: str
    source: str  # the file, or "study" for one given as a dict
    systems: tuple[System, ...]
    workloads: tuple[str, ...]
    sizes: tuple[str, ...]
    seeds: tuple[int, ...]
    counters: tuple[str, ...]
    fixed: dict[str, Any]  # dotted key -> value, for every system that has its section
    grid: dict[str, tuple[Any, ...]]  # dotted key -> values
    zipped: dict[str, tuple[Any, ...]]
    random: dict[str, Distribution]
    samples: int
    random_seed: int
    lines: dict[str, int] = field(repr=False)  # the line setting each key of the study

    @property
    def swept(self) -> tuple[str, ...]:
        """Every key that varies, in the order of the file: grid, zip, random."""
        return (*self.grid, *self.zipped, *self.random)


def load_study(study: Path | str | dict[str, Any]) -> Study:
    """A study from its TOML file, or from a dict of the same keys (paths relative to the
    working directory), validated completely."""
    if isinstance(study, dict):
        return _Loader(json.loads(json.dumps(study)), "study", None, Path.cwd()).load()
    path = Path(study)
    if not path.is_file():
        raise ConfigError(f"study file {str(path)!r} does not exist")
    return _Loader(load_toml(path), str(path), path, path.parent).load()


def nest(dotted: dict[str, Any]) -> dict[str, Any]:
    """``{"sm.count": 32}`` as the nested overrides ``{"sm": {"count": 32}}``."""
    out: dict[str, Any] = {}
    for key, value in dotted.items():
        *parents, leaf = key.split(".")
        node = out
        for part in parents:
            node = node.setdefault(part, {})
        node[leaf] = value
    return out


def _dotted(path: tuple[str, ...]) -> str:
    """A key as written in a TOML table (``sm.count``, ``"sm.count"`` or ``[x.sm] count``)
    as one dotted configuration key."""
    return ".".join(path)


def _leaves(tree: dict[str, Any], path: tuple[str, ...] = (),
            is_leaf=lambda value: False) -> Iterator[tuple[tuple[str, ...], Any]]:  # fmt: skip
    """(TOML path, value) of every leaf of a table; a non-empty table is descended into
    unless ``is_leaf`` says it is a value."""
    for key, value in tree.items():
        here = (*path, key)
        if isinstance(value, dict) and value and not is_leaf(value):
            yield from _leaves(value, here, is_leaf)
        else:
            yield here, value


def _is_distribution(value: dict[str, Any]) -> bool:
    return len(value) == 1 and next(iter(value)) in DISTRIBUTIONS


def _is_spec(value: dict[str, Any]) -> bool:
    """Whether a table under ``[random.keys]`` is a key's distribution (a table of values)
    rather than a section of keys (a table of tables)."""
    return not all(isinstance(v, dict) for v in value.values())


class _Loader:
    """One study being checked: the file's key lines, and what has been read so far."""

    def __init__(self, data: dict[str, Any], source: str, path: Path | None, base: Path):
        self.data = data
        self.source = source
        self.path = path
        self.base = base  # where relative .toml presets are found
        self._keys: KeyLines | None = file_key_lines(path) if path else None
        self.origin: dict[str, tuple[str, ...]] = {}  # dotted key -> its TOML path

    def line(self, toml_path: tuple[str, ...]) -> str:
        found = self._keys.find(toml_path) if self._keys else None
        return f"line {found}" if found else ""

    def _study_lines(self) -> dict[str, int]:
        """The line of every key the study sets or sweeps (a system's own keys aside)."""
        out = {}
        for key, path in self.origin.items():
            found = self._keys.find(path) if self._keys else None
            if found:
                out[key] = found
        return out

    def fail(self, message: str, toml_path: tuple[str, ...] = ()) -> ConfigError:
        line = self.line(toml_path) if toml_path else ""
        return ConfigError(f"{self.source}: {message}" + (f" ({line})" if line else ""))

    def load(self) -> Study:
        files = [self.source] if self.path else []
        raw = validate(StudyFile, self.data, self.source, files)
        name = raw.name or (self.path.stem if self.path else "study")
        if not _NAME.match(name):
            raise self.fail(
                f"the study's name {name!r} (from the file's name) is not a "
                "directory name; set `name` (letters, digits, '.', '_', '-')"
            )
        self._check_names(raw)
        fixed = self._table("set", raw.set)
        grid = {k: self._list("grid", k, v) for k, v in self._table("grid", raw.grid).items()}
        zipped = {k: self._list("zip", k, v) for k, v in self._table("zip", raw.zip).items()}
        self._check_zip(zipped)
        random = self._random(raw.random)
        self._check_disjoint({"set": fixed, "grid": grid, "zip": zipped, "random": random})
        self._check_counters(raw.counters, [*grid, *zipped, *random])
        systems = tuple(self._system(k, entry) for k, entry in enumerate(raw.systems))
        study = Study(
            name=name, source=self.source, systems=systems, workloads=tuple(raw.workloads),
            sizes=tuple(raw.sizes), seeds=tuple(raw.seeds), counters=tuple(raw.counters),
            fixed=fixed, grid=grid, zipped=zipped, random=random,
            samples=raw.random.samples if raw.random else 0,
            random_seed=raw.random.seed if raw.random else 0, lines=self._study_lines(),
        )  # fmt: skip
        self._check_values(study)
        return study

    def _check_names(self, raw: StudyFile) -> None:
        known = workload_names()
        for k, entry in enumerate(raw.workloads):
            for workload in mix_parts(entry):  # a mix (bfs,spmv) names workloads of the suite
                if workload not in known:
                    close = difflib.get_close_matches(workload, known, n=1)
                    hint = (f"did you mean {close[0]!r}?" if close
                            else f"known: {', '.join(known)}")  # fmt: skip
                    raise self.fail(f"'workloads': unknown workload {workload!r} ({hint})",
                                    ("workloads", str(k)))  # fmt: skip
        for what, values in (("workloads", raw.workloads), ("sizes", raw.sizes),
                             ("seeds", raw.seeds), ("counters", raw.counters)):  # fmt: skip
            repeated = sorted({str(v) for v in values if values.count(v) > 1})
            if repeated:
                raise self.fail(f"'{what}': {', '.join(repeated)} given twice", (what,))

    def _table(self, section: str, tree: dict[str, Any]) -> dict[str, Any]:
        """A table of configuration keys, however the file nests or quotes them, as {dotted
        key: value}; a key written twice (``"sm.count"`` and ``[grid.sm] count``) or not a
        dotted name is refused. ``section`` is the table's TOML path (``random.keys``)."""
        out: dict[str, Any] = {}
        leaf = _is_spec if section == "random.keys" else (lambda value: False)
        shown = section.split(".")[0]  # [random], [systems]
        for path, value in _leaves(tree, (), leaf):
            key = _dotted(path)
            toml_path = (*section.split("."), *path)
            if not _PATH.match(key):
                raise self.fail(f"[{shown}] {key!r} is not a configuration key (dotted "
                                "names of letters, digits, '_' and '-')", toml_path)  # fmt: skip
            if key in out:
                raise self.fail(f"[{shown}] '{key}' is given twice", toml_path)
            if key == "seed":
                raise self.fail(f"[{shown}] 'seed': a study's seeds are its `seeds` list",
                                toml_path)  # fmt: skip
            if shown == "systems" and key.startswith(PARAM_PREFIX):
                raise self.fail(f"[systems] '{key}': a workload parameter is the study's (in "
                                "[set], [grid], [zip] or [random]), not a system's",
                                toml_path)  # fmt: skip
            if key in FIXED_COLUMNS:
                raise self.fail(f"[{shown}] '{key}' is a column of every result; a key "
                                "of that name cannot be swept", toml_path)  # fmt: skip
            out[key] = value
            if shown != "systems":
                self.origin[key] = toml_path
        return out

    def _list(self, section: str, key: str, values: Any) -> tuple[Any, ...]:
        where = self.origin[key]
        if not isinstance(values, list) or not values:
            raise self.fail(f"[{section}] '{key}': expected a non-empty list of values, got "
                            f"{json.dumps(values)[:60]}", where)  # fmt: skip
        seen = [json.dumps(v, sort_keys=True) for v in values]
        repeated = sorted({s for s in seen if seen.count(s) > 1})
        if repeated:
            raise self.fail(f"[{section}] '{key}': {', '.join(repeated)} given twice", where)
        return tuple(values)

    def _check_zip(self, zipped: dict[str, tuple[Any, ...]]) -> None:
        lengths = {key: len(values) for key, values in zipped.items()}
        if len(set(lengths.values())) > 1:
            said = ", ".join(f"'{k}' {n}" for k, n in lengths.items())
            raise self.fail(f"[zip] lists are varied together and need one length; got {said}",
                            ("zip",))  # fmt: skip

    def _random(self, section: RandomSection | None) -> dict[str, Distribution]:
        if section is None:
            return {}
        out = {}
        for key, spec in self._table("random.keys", section.keys).items():
            out[key] = self._distribution(key, spec)
        return out

    def _distribution(self, key: str, spec: Any) -> Distribution:
        where = self.origin[key]
        expected = ("expected one of {uniform = [low, high]}, {loguniform = [low, high]}, "
                    "{integers = [low, high]}, {choice = [values...]}")  # fmt: skip
        if not isinstance(spec, dict) or not _is_distribution(spec):
            raise self.fail(f"[random.keys] '{key}': {expected}; got {json.dumps(spec)[:60]}",
                            where)  # fmt: skip
        ((kind, values),) = spec.items()
        if kind == "choice":
            return Distribution(kind, self._list("random.keys", key, values))
        number = int if kind == "integers" else (int, float)
        numbers = isinstance(values, list) and all(
            isinstance(v, number) and not isinstance(v, bool) for v in values
        )
        if not numbers or len(values) != 2:
            what = "two integers" if kind == "integers" else "two numbers"
            raise self.fail(f"[random.keys] '{key}': {kind} takes [low, high], {what}; got "
                            f"{json.dumps(values)[:60]}", where)  # fmt: skip
        low, high = values
        if (
            not (math.isfinite(low) and math.isfinite(high))
            or low > high
            or (kind != "integers" and low == high)
        ):
            raise self.fail(f"[random.keys] '{key}': {kind} needs finite low < high; got "
                            f"[{low}, {high}]", where)  # fmt: skip
        if kind == "loguniform" and low <= 0:
            raise self.fail(f"[random.keys] '{key}': loguniform needs low > 0; got {low}", where)
        return Distribution(kind, (low, high))

    def _check_disjoint(self, sections: dict[str, dict[str, Any]]) -> None:
        """A key is set in one place only: swept two ways, or both fixed and swept, it would
        have no single meaning. A key and a key inside it (``memory.dram_overrides`` and
        ``memory.dram_overrides.organization.channels``) count as the same."""
        seen: dict[str, str] = {}
        for section, keys in sections.items():
            for key in keys:
                for other, where in seen.items():
                    if _overlap(key, other):
                        raise self.fail(f"'{key}' is in [{section}] and '{other}' in [{where}]; "
                                        "a key is set in one place", self.origin[key])  # fmt: skip
                seen[key] = section

    def _check_counters(self, counters: list[str], swept: list[str]) -> None:
        paths = [c.removesuffix(OPTIONAL) for c in counters]
        for k, counter in enumerate(paths):
            where = ("counters", str(k))
            if not _PATH.match(counter):
                raise self.fail(f"'counters': {counters[k]!r} is not a dotted path into a run's "
                                "results (e.g. summary.ipc), with '?' at the end if some "
                                "systems lack it", where)  # fmt: skip
            if counter in FIXED_COLUMNS:
                raise self.fail(f"'counters': '{counter}' is a column of every result "
                                "already", where)  # fmt: skip
            for other in (*paths[:k], *swept):
                if _overlap(counter, other):
                    raise self.fail(f"'counters': '{counter}' and '{other}' overlap (the same, "
                                    "or one inside the other)", where)  # fmt: skip

    def _system(self, k: int, entry: SystemEntry) -> System:
        where = ("systems", str(k))
        preset = entry.preset
        if preset.endswith(".toml") and not Path(preset).is_absolute():
            preset = str((self.base / preset).resolve())  # next to the study
        name = entry.name or (Path(preset).stem if preset.endswith(".toml") else preset)
        if not _NAME.match(name):
            raise self.fail(f"'systems': name {name!r} is not letters, digits, '.', '_', '-'",
                            where)  # fmt: skip
        own = self._table(f"systems.{k}.set", entry.set) if entry.set else {}
        try:
            config = load_system_config(preset, nest(own))
        except ConfigError as error:
            raise self.fail(f"system {name!r}: {error}", where) from None
        return System(name, preset, nest(own), config)

    def _check_params(self, study: Study,
                      candidates: dict[str, tuple[str, tuple[Any, ...]]]) -> None:  # fmt: skip
        """Every ``param.KEY`` is a parameter of at least one of the study's workloads at one of
        its sizes, and each of its values one that every such workload accepts."""
        declared = {
            (w, size): get_workload(w).sizes[size]
            for w in study.workloads
            for size in study.sizes
            if len(mix_parts(w)) == 1
        }  # a mix takes none
        for key, (section, values) in candidates.items():
            name = key.removeprefix(PARAM_PREFIX)
            having = {ws: params for ws, params in declared.items() if name in params}
            if not having:
                accepted = sorted({k for params in declared.values() for k in params})
                raise self.fail(f"[{section}] '{key}': none of the workloads "
                                f"({', '.join(study.workloads)}) has a parameter {name!r}; they "
                                f"take {', '.join(accepted)}", self.origin[key])  # fmt: skip
            for value in values:
                for (workload, size), params in having.items():
                    try:
                        with_params(workload, params, {name: value})
                    except WorkloadError as error:
                        raise self.fail(f"[{section}] '{key}' = {json.dumps(value)[:60]} at "
                                        f"size {size}: {error}",
                                        self.origin[key]) from None  # fmt: skip

    def _check_values(self, study: Study) -> None:
        """Every value given to a key is one the systems receiving it accept, each key alone
        (with the fixed keys), so that an error names the line of the one value at fault;
        :mod:`~ndpsim.sweeps.expansion` checks the combinations."""
        names = [s.name for s in study.systems]
        repeated = sorted({n for n in names if names.count(n) > 1})
        if repeated:
            raise self.fail(f"'systems': {', '.join(repeated)} named twice; give each a "
                            "`name`", ("systems",))  # fmt: skip
        candidates: dict[str, tuple[str, tuple[Any, ...]]] = {
            **{k: ("set", (v,)) for k, v in study.fixed.items()},
            **{k: ("grid", v) for k, v in study.grid.items()},
            **{k: ("zip", v) for k, v in study.zipped.items()},
            **{k: ("random", d.extremes()) for k, d in study.random.items()},
        }
        self._check_params(study, {k: c for k, c in candidates.items()
                                   if k.startswith(PARAM_PREFIX)})  # fmt: skip
        candidates = {k: c for k, c in candidates.items() if not k.startswith(PARAM_PREFIX)}
        for key, (section, _) in candidates.items():
            if not any(s.receives(key) for s in study.systems):
                raise self.fail(f"[{section}] '{key}': none of the systems "
                                f"({', '.join(names)}) has a [{key.split('.')[0]}] section",
                                self.origin[key])  # fmt: skip
        for system in study.systems:
            mine = {k for k in candidates if system.receives(k)}
            for key in mine:
                own = next((o for o in _dotted_keys(system.own) if _overlap(o, key)), None)
                if own is not None:
                    raise self.fail(f"[{candidates[key][0]}] '{key}': system {system.name!r} "
                                    f"sets '{own}' itself", self.origin[key])  # fmt: skip
            fixed = nest({k: v for k, v in study.fixed.items() if k in mine})
            for key in mine:
                section, values = candidates[key]
                for value in values:
                    overrides = merge(merge(system.own, fixed), nest({key: value}))
                    try:
                        load_system_config(system.preset, overrides)
                    except ConfigError as error:
                        raise self.fail(f"[{section}] '{key}' = {json.dumps(value)[:60]} on "
                                        f"system {system.name!r}: {error}",
                                        self.origin[key]) from None  # fmt: skip


def _overlap(key: str, other: str) -> bool:
    """Whether two dotted keys set the same value: equal, or one inside the other."""
    return key == other or key.startswith(f"{other}.") or other.startswith(f"{key}.")


def _dotted_keys(tree: dict[str, Any]) -> list[str]:
    return [_dotted(path) for path, _ in _leaves(tree)]


__all__ = [
    "DISTRIBUTIONS",
    "MAX_RUNS",
    "Distribution",
    "Study",
    "StudyFile",
    "System",
    "SystemEntry",
    "load_study",
    "nest",
]
