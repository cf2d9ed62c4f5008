"""Configuration plumbing shared by every preset: strict models, TOML loading, overrides.

A config is validated completely when it is loaded: an unknown key, a missing one, or a value out
of range is a :class:`ConfigError` naming the file, the line and the dotted key, before anything
runs. :func:`settings` lists a loaded config key by key with the file and line behind each value.
"""

from __future__ import annotations

import ast
import copy
import difflib
import sys
import tomllib
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, TypeVar, get_args

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError

from ndpsim.errors import ConfigError
from ndpsim.textfile import read_text
from ndpsim.toml_lines import KeyLines, file_key_lines

PRESET_ROOT = Path(__file__).resolve().parent / "presets"

M = TypeVar("M", bound=BaseModel)

# Quantities the engine turns into integer picoseconds (engine/clock.py). The bounds keep every
# period, latency and serialization time representable and above the 1 ps resolution, so an
# extreme value is refused here instead of overflowing, or being rounded, inside the model.
#: A clock from 1 MHz (a 1 us period) to 1 THz (1 ps).
ClockGHz = Annotated[float, Field(ge=1e-3, le=1e3)]
#: A latency of up to one second.
LatencyNs = Annotated[float, Field(ge=0, le=1e9)]
#: A bandwidth from 1 MB/s to 1 PB/s (a link serializes a KB in whole picoseconds).
MIN_GBPS, MAX_GBPS = 1e-3, 1e6
Gbps = Annotated[float, Field(ge=MIN_GBPS, le=MAX_GBPS)]


def _absent_or_gbps(value: float) -> float:
    if value != 0 and not MIN_GBPS <= value <= MAX_GBPS:
        raise ValueError(f"must be 0 (absent) or between {MIN_GBPS:g} and {MAX_GBPS:g} GB/s")
    return value


#: A bandwidth, or 0 where the component is not modelled.
OptionalGbps = Annotated[float, Field(ge=0), AfterValidator(_absent_or_gbps)]
#: A latency or interval in clock cycles: up to a billion (a second at 1 GHz), so that cycles
#: times the slowest clock's period stays far inside the engine's 64-bit picoseconds.
MAX_CYCLES = 10**9
Cycles = Annotated[int, Field(le=MAX_CYCLES)]

#: The longest ``--set`` assignment read: far beyond any real value, short enough that reading
#: it as a Python literal stays quick.
MAX_OVERRIDE_CHARS = 10_000
#: The deepest nesting of tables and arrays a config may have. The deepest real key,
#: ``memory.dram_overrides.organization.channels``, is four levels down; merging presets
#: and listing their keys recurse this deep.
MAX_NESTING = 16
#: The most characters of a value an error message quotes.
_QUOTED_CHARS = 60


class Strict(BaseModel):
    """A config section: unknown keys are errors, numbers are finite (an infinite latency or
    clock would overflow or be clamped deep in the model), values are immutable once loaded.
    Types are strict: ``true`` is not the integer 1 and ``2.0`` not the integer 2 (an integer
    is still a valid float), so a value that was meant for another key is not silently taken."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False, strict=True)


def validate(model: type[M], data: dict, source: str, files: Sequence[Path | str] = ()) -> M:
    """Build ``model`` from ``data``, turning pydantic's report into one ConfigError line.

    ``files`` are the TOML files ``data`` was read from, the one that wins a key first (a preset
    before its base): each complaint names the line that set its key there, and an unknown key
    the keys its section takes."""
    try:
        return model.model_validate(data)
    except ValidationError as error:
        sources = _Sources(files)
        problems = []
        for item in error.errors():
            path = tuple(str(p) for p in item["loc"])
            key = ".".join(path) or "(top level)"
            if item["type"] == "extra_forbidden":
                problem = f"unknown key '{key}'"
                notes = [sources.cite(path, source), _expected_keys(model, path)]
            elif item["type"] == "missing":
                problem = f"missing key '{key}'"
                section = sources.cite(path[:-1], source)
                notes = [f"[{'.'.join(path[:-1])}] is at {section}" if section else ""]
            elif item["type"] == "value_error":
                message = item["msg"].removeprefix("Value error, ")
                if isinstance(item.get("input"), dict):
                    # a check across a section's keys: its message names them and their values
                    problem = f"'{key}': {message}"
                else:
                    problem = f"'{key}': {message} (got {_quoted(item.get('input'))})"
                notes = [sources.cite(path, source)]
            else:
                problem = f"'{key}': {item['msg']} (got {_quoted(item.get('input'))})"
                notes = [sources.cite(path, source)]
            notes = [note for note in notes if note]
            problems.append(f"{problem} ({'; '.join(notes)})" if notes else problem)
        raise ConfigError(f"{source}: " + "; ".join(problems)) from None


def _quoted(value: Any) -> str:
    """``value`` as an error message quotes it: cut short, so that the message stays one
    readable line, and without printing an integer too long for Python to print in decimal."""
    try:
        text = repr(value)
    except ValueError:
        return f"an integer of more than {sys.get_int_max_str_digits()} digits"
    return _clipped(text)


class _Sources:
    """The TOML files a config was read from, the one that wins a key first (a preset before
    its base), indexed by key on first use: errors and ``settings`` only."""

    def __init__(self, files: Sequence[Path | str]):
        self.files = [str(f) for f in files]
        self.index: list[KeyLines] | None = None

    def where(self, path: tuple[str, ...]) -> tuple[str, int, KeyLines] | None:
        """The file and line that set the dotted key ``path``, and that file's index."""
        if not path or not self.files:
            return None
        if self.index is None:
            self.index = [file_key_lines(f) for f in self.files]
        for name, keys in zip(self.files, self.index, strict=True):
            line = keys.find(path)
            if line is not None:
                return name, line, keys
        return None

    def cite(self, path: tuple[str, ...], source: str) -> str:
        """``line N`` in the file an error is blamed on, ``FILE:N`` in another (a base)."""
        found = self.where(path)
        if found is None:
            return ""
        name, line, _ = found
        return f"line {line}" if name == source else f"{name}:{line}"


def _expected_keys(model: type[BaseModel], path: tuple[str, ...]) -> str:
    """What the section holding the unknown key ``path`` accepts: the closest spelling, or the
    list of its keys."""
    section = _section_of(model, path)
    if section is None:
        return ""
    names = list(section.model_fields)
    close = difflib.get_close_matches(path[-1], names, n=1)
    if close:
        return f"did you mean '{close[0]}'?"
    where = f"[{'.'.join(path[:-1])}]" if len(path) > 1 else "the top level"
    return f"{where} takes {', '.join(names)}"


def _section_of(model: type[BaseModel], path: tuple[str, ...]) -> type[BaseModel] | None:
    """The config model of the section holding the dotted key ``path`` (None if that is not a
    section of models, e.g. a free-form table)."""
    section: type[BaseModel] | None = model
    for part in path[:-1]:
        field = section.model_fields.get(part) if section else None
        section = _section_model(field.annotation) if field else None
    return section


def _section_model(annotation: Any) -> type[BaseModel] | None:
    """The config model a field holds, through ``X | None``."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in get_args(annotation):
        found = _section_model(arg)
        if found is not None:
            return found
    return None


@dataclass(frozen=True, slots=True)
class Setting:
    """One key of a loaded config and where its value comes from."""

    key: str  # dotted
    value: Any
    origin: str  # "FILE:LINE" of the file that set it, "--set", or "default"
    comment: str  # on the line that set it, else "[section] " + its section header's ("" if none)
    description: str  # what the key means, from the config model


def settings(
    config: BaseModel, files: Sequence[Path | str], overrides: dict | None
) -> list[Setting]:
    """Every key of ``config`` with its value and origin: an override, the first of ``files``
    (a preset, then its bases) that sets it, or the model's default. Answers "what does this
    preset really simulate, and on whose authority?" without reading a chain of files."""
    sources = _Sources(files)
    out = []
    for path, value in _leaves(config.model_dump(mode="json"), ()):
        origin, comment = "default", ""
        if _overridden(overrides or {}, path):
            origin = "--set"
        elif (found := sources.where(path)) is not None:
            name, line, keys = found
            origin = f"{_shown(name)}:{line}"
            comment = keys.comments.get(path, "")
            section = path[:-1]
            if not comment and section in keys.comments:
                comment = f"[{'.'.join(section)}] {keys.comments[section]}"
        description = _description(type(config), path)
        out.append(Setting(".".join(path), value, origin, comment, description))
    return out


def _description(model: type[BaseModel], path: tuple[str, ...]) -> str:
    section = _section_of(model, path)
    field = section.model_fields.get(path[-1]) if section else None
    return (field.description or "") if field else ""


def _leaves(node: Any, path: tuple[str, ...]):
    if isinstance(node, dict) and node:
        for key, value in node.items():
            yield from _leaves(value, (*path, key))
    else:
        yield path, node


def _overridden(overrides: dict, path: tuple[str, ...]) -> bool:
    node: Any = overrides
    for part in path:
        if not isinstance(node, dict) or part not in node:
            return False
        node = node[part]
        if not isinstance(node, dict):
            return True
    return True


def _shown(path: Path | str) -> str:
    """A shipped preset by its file name, a user's file as given."""
    resolved = Path(path).resolve()
    return resolved.name if resolved.is_relative_to(PRESET_ROOT) else str(path)


#: Files parsed, by their text: a sweep validates hundreds of configs built on the same few
#: presets, and parsing their TOML again each time was most of its expansion.
_TOML_CACHE: dict[str, dict] = {}
_TOML_CACHE_FILES = 256


def load_toml(path: Path) -> dict:
    """A TOML file's contents (the caller's own copy); anything tomllib cannot read, or nested
    deeper than a config ever is, is a ConfigError naming the file. A text parsed before is not
    parsed again."""
    text = read_text(path, ConfigError)
    if text not in _TOML_CACHE:
        data = _parse_toml(text, path)
        if len(_TOML_CACHE) >= _TOML_CACHE_FILES:
            _TOML_CACHE.pop(next(iter(_TOML_CACHE)))
        _TOML_CACHE[text] = data
    return copy.deepcopy(_TOML_CACHE[text])


def _parse_toml(text: str, path: Path) -> dict:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: {exc}") from None
    except ValueError:  # what int() raises on a decimal number of thousands of digits
        raise ConfigError(
            f"{path}: an integer has more than {sys.get_int_max_str_digits()} digits"
        ) from None
    except RecursionError:
        raise ConfigError(
            f"{path}: arrays or inline tables nested too deeply to read (a config nests at most "
            f"{MAX_NESTING} levels)"
        ) from None
    _check_nesting(data, str(path))
    return data


def _check_nesting(tree: dict, source: str) -> None:
    """Refuse tables and arrays nested more than :data:`MAX_NESTING` levels deep, naming the
    first such key, before anything recurses into them."""
    pending: list[tuple[Any, str, int]] = [(tree, "", 0)]
    while pending:
        node, key, depth = pending.pop()
        if depth > MAX_NESTING:
            raise ConfigError(
                f"{source}: '{_clipped(key)}' is nested {depth} levels deep; a config nests at "
                f"most {MAX_NESTING}"
            )
        if isinstance(node, dict):
            children = ((f"{key}.{k}" if key else str(k), v) for k, v in node.items())
        elif isinstance(node, list):
            children = ((f"{key}[{i}]", v) for i, v in enumerate(node))
        else:
            continue
        pending.extend((value, name, depth + 1) for name, value in children
                       if isinstance(value, dict | list))  # fmt: skip


def _clipped(text: str) -> str:
    """At most the first :data:`_QUOTED_CHARS` characters of ``text``."""
    return text if len(text) <= _QUOTED_CHARS else text[: _QUOTED_CHARS - 3] + "..."


def preset_names(kind: str) -> list[str]:
    """Names of the presets of one kind (``dram``, ``systems``, ...)."""
    return sorted(p.stem for p in (PRESET_ROOT / kind).glob("*.toml"))


def preset_path(kind: str, name: str) -> Path:
    """The file of a preset: a name from ``presets/<kind>/``, or a path ending in ``.toml`` to a
    file of the user's own (absolute, or relative to the working directory)."""
    if name.endswith(".toml"):
        path = Path(name)
        if not path.is_file():
            raise ConfigError(f"{kind} preset file {name!r} does not exist")
        return path
    path = PRESET_ROOT / kind / f"{name}.toml"
    if "/" in name or "\\" in name or not path.is_file():
        raise ConfigError(
            f"unknown {kind} preset {name!r} (a name, or a path ending in .toml); "
            f"available: {', '.join(preset_names(kind))}"
        )
    return path


def preset_tree(kind: str, name: str, seen: tuple[str, ...] = ()) -> tuple[dict, list[str]]:
    """A preset's contents laid over the preset it names as ``base`` (if any), and the files
    read, the preset's own first and then its bases (for error messages and :func:`settings`).
    A base given as a relative ``.toml`` path is found next to the file naming it."""
    if name in seen:
        raise ConfigError(f"{kind} presets form a loop: {' -> '.join((*seen, name))}")
    path = preset_path(kind, name)
    data = load_toml(path)
    base = data.pop("base", None)
    if base is None:
        return data, [str(path)]
    if not isinstance(base, str):
        raise ConfigError(f"{path}: 'base': expected a preset name or .toml path, got {base!r}")
    if base.endswith(".toml") and not Path(base).is_absolute():
        base = str((path.parent / base).resolve())  # found next to the file naming it
    try:
        parent, parent_files = preset_tree(kind, base, (*seen, name))
    except ConfigError as error:
        raise ConfigError(f"{path}: 'base': {error}") from None
    return merge(parent, data), [str(path), *parent_files]


#: What turns a preset's merged contents into a config: ``(data, source, files)``, blaming
#: errors on ``source`` and citing lines of ``files`` (none for overrides).
Validator = Callable[[dict, str, list[str]], M]


def load_layered(
    check: Validator[M],
    kind: str,
    name: str,
    overrides: dict | None,
    what: str,
    check_overrides: Callable[[dict, dict], None] | None = None,
) -> tuple[M, list[str]]:
    """A preset of ``kind`` (with its bases) validated by ``check``, then with ``overrides``
    laid over it, and the files it was read from. Overrides are validated after the file and
    blamed on the overrides (``what`` names the preset in that message, e.g. "DRAM preset"), so
    a bad override is never reported as an error of the file; an error in an inherited value
    names the bases."""
    data, files = preset_tree(kind, name)
    try:
        loaded = check(data, files[0], files)
    except ConfigError as error:
        if len(files) < 2:
            raise
        raise ConfigError(f"{error} (values inherited from {', '.join(files[1:])})") from None
    if overrides:
        if check_overrides is not None:  # what the overrides may change, given the preset
            check_overrides(data, overrides)
        loaded = check(merge(data, overrides), f"overrides of {what} {name!r}", [])
    return loaded, files


def load_preset(model: type[M], kind: str, name: str, overrides: dict | None, what: str) -> M:
    """A preset of ``kind`` validated as ``model`` (see :func:`load_layered`)."""

    def check(data: dict, source: str, files: list[str]) -> M:
        return validate(model, data, source, files)

    return load_layered(check, kind, name, overrides, what)[0]


def merge(base: dict, extra: dict) -> dict:
    """``base`` with ``extra`` laid over it, nested tables merged key by key."""
    out = dict(base)
    for key, value in extra.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = merge(out[key], value)
        else:
            out[key] = value
    return out


def parse_overrides(assignments: list[str]) -> dict[str, Any]:
    """``["gpu.num_sms=64", "memory.dram=hbm2"]`` as a nested dict. Values are read as Python
    literals (numbers, booleans as true/false, lists), anything else as a string."""
    out: dict[str, Any] = {}
    for text in assignments:
        if len(text) > MAX_OVERRIDE_CHARS:
            raise ConfigError(
                f"override {_clipped(text)!r} is {len(text)} characters long; at most "
                f"{MAX_OVERRIDE_CHARS} are read"
            )
        key, sep, raw = text.partition("=")
        key = key.strip()
        if not sep or not key or any(not part for part in key.split(".")):
            raise ConfigError(f"override {_clipped(text)!r} is not of the form key.path=value")
        value: Any
        literal = {"true": "True", "false": "False"}.get(raw.strip(), raw.strip())
        try:
            with warnings.catch_warnings():  # "1if" would print a SyntaxWarning
                warnings.simplefilter("ignore")
                value = ast.literal_eval(literal)
        except (ValueError, SyntaxError, TypeError):  # TypeError: "{{}}", a set of a dict
            value = raw.strip()
        except (MemoryError, RecursionError):  # what Python's parser raises on deep nesting
            raise ConfigError(
                f"override of '{_clipped(key)}': the value is nested too deeply to read"
            ) from None
        if not isinstance(value, int | float | str | list | dict):
            value = raw.strip()  # None, tuples, sets, ... are not config values
        node = out
        *parents, leaf = key.split(".")
        for part in parents:
            node = node.setdefault(part, {})
            if not isinstance(node, dict):
                raise ConfigError(f"override {_clipped(text)!r} conflicts with another override")
        if isinstance(node.get(leaf), dict):
            raise ConfigError(f"override {_clipped(text)!r} conflicts with another override")
        node[leaf] = value
    _check_nesting(out, "overrides")
    return out
