"""A reproduction's systems with configuration keys the user changed (``--set key=value``).

A sensitivity study beyond the switches a ``reproduce`` command offers (a PCIe latency, a DRAM
timing, the L2 size) changes the same key in every system the experiment compares. A key
reaches the systems whose configuration has its section: ``ndp.*`` changes the NDP systems
and leaves the baseline GPU, which has no stack processors, as it is. A key a system sets
itself is refused rather than overridden: it is what tells that system from the others (the
offload policy of a variant) or a switch of the command, and overriding it would silently turn
two systems into the same one.

Overrides given from Python (``ndpsim.run``, ``ndpsim.reproduce``) may use dotted keys as
``--set`` does; :func:`nested` turns them into the tree the config loader takes.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import replace
from typing import Any

from ndpsim.config import merge
from ndpsim.errors import ConfigError
from ndpsim.experiments.runner import Variant
from ndpsim.systems import load_system_config

#: Keys a reproduction sets through its own options.
_OWN_OPTIONS = {"seed": "--seed"}


def _dotted(tree: dict[str, Any], prefix: str = "") -> Iterator[tuple[str, Any]]:
    """(dotted key, value) of every leaf of a nested override tree."""
    for key, value in tree.items():
        path = f"{prefix}{key}"
        if isinstance(value, dict) and value:
            yield from _dotted(value, f"{path}.")
        else:
            yield path, value


def has_section(config: Any, section: str) -> bool:
    """Whether ``config`` has the optional section ``section`` (a section every system has, or
    an unknown key, counts as present: validation names the latter)."""
    return section not in type(config).model_fields or getattr(config, section) is not None


def apply_overrides(variants: Sequence[Variant], overrides: dict[str, Any],
                    ) -> tuple[list[Variant], dict[str, dict[str, Any]]]:  # fmt: skip
    """``variants`` with ``overrides`` (a nested tree, as :func:`ndpsim.config.parse_overrides`
    makes it) laid over each one's own, each section only on the systems that have it, and for
    the results document {dotted key: {"value", "systems" it changed}}. Every changed system
    is validated, so a bad key or value fails before anything runs."""
    configs = {v.name: load_system_config(v.preset, v.overrides) for v in variants}
    own = {v.name: dict(_dotted(v.overrides)) for v in variants}
    reached: dict[str, dict[str, Any]] = {}
    for key, value in _dotted(overrides):
        if key in _OWN_OPTIONS:
            raise ConfigError(f"--set {key}: use {_OWN_OPTIONS[key]} instead")
        setters = {name: theirs for name, keys in own.items() for k, theirs in keys.items()
                   if k == key or k.startswith(f"{key}.") or key.startswith(f"{k}.")}  # fmt: skip
        if setters:
            said = ", ".join(f"{name} ({theirs!r})" for name, theirs in setters.items())
            raise ConfigError(
                f"--set {key}: the experiment's systems set this key themselves: {said}; it "
                "is what tells them apart or one of the command's own options (see --help)"
            )
        section = key.split(".", 1)[0]
        receivers = [name for name, config in configs.items() if has_section(config, section)]
        if not receivers:
            raise ConfigError(f"--set {key}: none of the systems run ({', '.join(configs)}) "
                              f"has a [{section}] section")  # fmt: skip
        reached[key] = {"value": value, "systems": receivers}
    out = []
    for v in variants:
        mine = {section: tree for section, tree in overrides.items()
                if has_section(configs[v.name], section)}  # fmt: skip
        if mine:
            v = replace(v, overrides=merge(v.overrides, mine))
            try:
                load_system_config(v.preset, v.overrides)
            except ConfigError as error:
                raise ConfigError(f"--set on the {v.name} system: {error}") from None
        out.append(v)
    return out, reached


def nested(overrides: Mapping[str, Any] | None) -> dict[str, Any]:
    """Overrides as the nested tree the config loader takes: ``{"sm": {"count": 32}}`` as it
    is, ``{"sm.count": 32}`` split at its dots; a key given both ways is refused."""
    tree: dict[str, Any] = {}
    for key, value in (overrides or {}).items():
        *parents, leaf = key.split(".")
        branch: dict[str, Any] = {leaf: value}
        for part in reversed(parents):
            branch = {part: branch}
        clash = _clash(tree, branch)
        if clash:
            raise ConfigError(f"override {key!r} gives {clash!r} a second time")
        tree = merge(tree, branch)
    return tree


def _clash(tree: Mapping[str, Any], branch: Mapping[str, Any], prefix: str = "") -> str | None:
    """The first dotted key ``branch`` would set that ``tree`` already sets, if any."""
    for key, value in branch.items():
        if key not in tree:
            continue
        if isinstance(value, dict) and isinstance(tree[key], dict):
            found = _clash(tree[key], value, f"{prefix}{key}.")
            if found:
                return found
        else:
            return f"{prefix}{key}"
    return None


__all__ = ["apply_overrides", "has_section", "nested"]
