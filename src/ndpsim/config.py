"""Configuration plumbing shared by every preset: strict models, TOML loading, overrides.

A config is validated completely when it is loaded: an unknown key, a missing one, or a value out
of range is a :class:`ConfigError` naming the file and the dotted key, before anything runs.
"""

from __future__ import annotations

import ast
import tomllib
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError

from ndpsim.errors import ConfigError

PRESET_ROOT = Path(__file__).resolve().parent / "presets"

M = TypeVar("M", bound=BaseModel)


class Strict(BaseModel):
    """A config section: unknown keys are errors, values are immutable once loaded."""

    model_config = ConfigDict(extra="forbid", frozen=True)


def validate(model: type[M], data: dict, source: str) -> M:
    """Build ``model`` from ``data``, turning pydantic's report into one ConfigError line."""
    try:
        return model.model_validate(data)
    except ValidationError as error:
        problems = []
        for item in error.errors():
            key = ".".join(str(p) for p in item["loc"]) or "(top level)"
            if item["type"] == "extra_forbidden":
                problems.append(f"unknown key '{key}'")
            elif item["type"] == "missing":
                problems.append(f"missing key '{key}'")
            elif item["type"] == "value_error" and isinstance(item.get("input"), dict):
                # a check across a section's keys: its message names them and their values
                problems.append(f"'{key}': {item['msg'].removeprefix('Value error, ')}")
            else:
                problems.append(f"'{key}': {item['msg']} (got {item.get('input')!r})")
        raise ConfigError(f"{source}: " + "; ".join(problems)) from None


def load_toml(path: Path) -> dict:
    try:
        return tomllib.loads(path.read_text())
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read ({exc.strerror})") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: {exc}") from None


def preset_names(kind: str) -> list[str]:
    """Names of the presets of one kind (``dram``, ``systems``, ...)."""
    return sorted(p.stem for p in (PRESET_ROOT / kind).glob("*.toml"))


def preset_path(kind: str, name: str) -> Path:
    path = PRESET_ROOT / kind / f"{name}.toml"
    if not path.exists():
        raise ConfigError(
            f"unknown {kind} preset {name!r}; available: {', '.join(preset_names(kind))}"
        )
    return path


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
        key, sep, raw = text.partition("=")
        key = key.strip()
        if not sep or not key or any(not part for part in key.split(".")):
            raise ConfigError(f"override {text!r} is not of the form key.path=value")
        value: Any
        literal = {"true": "True", "false": "False"}.get(raw.strip(), raw.strip())
        try:
            value = ast.literal_eval(literal)
        except (ValueError, SyntaxError):
            value = raw.strip()
        if not isinstance(value, int | float | str | list | dict):
            value = raw.strip()  # None, tuples, sets, ... are not config values
        node = out
        *parents, leaf = key.split(".")
        for part in parents:
            node = node.setdefault(part, {})
            if not isinstance(node, dict):
                raise ConfigError(f"override {text!r} conflicts with another override")
        if isinstance(node.get(leaf), dict):
            raise ConfigError(f"override {text!r} conflicts with another override")
        node[leaf] = value
    return out
