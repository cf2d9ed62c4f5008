"""The registry of system kinds, and the interface every simulated system offers.

A *system kind* (``gpu`` today; a CPU host with NDP cores, near-bank units, a mesh of memory
cubes later) is one folder under ``systems/`` that registers a :class:`SystemKind`: the pydantic
model of its preset files, what to check across files once a preset validates, and the builder
that turns a config into a :class:`System`. A preset says which kind it is (``kind = "gpu"``,
usually inherited from its base), so the loader picks the model by that key, never by guessing
from the other keys. Everything above this layer (the command line, the experiments, the run
store, the benchmarks) goes through :func:`load_system` and the two protocols below and names
no system class.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any, Literal, Protocol, runtime_checkable

from pydantic import ConfigDict, create_model

from ndpsim.config import (
    Setting,
    Strict,
    load_layered,
    preset_names,
    preset_tree,
    settings,
    validate,
)
from ndpsim.errors import ConfigError
from ndpsim.registry import Registry

if TYPE_CHECKING:
    from ndpsim.engine.timeline import Timeline


@runtime_checkable
class RunResult(Protocol):
    """What any system's run measured, as the command line and the experiments read it."""

    system: str  # the preset's name
    time_ps: int  # simulated time
    summary: dict[str, Any]  # the headline figures, JSON-ready
    energy: dict[str, float]  # nJ by part, with a "total"
    wall_seconds: float

    def as_dict(self) -> dict[str, Any]:
        """Everything measured, JSON-ready: the summary, the energy and every counter."""
        ...

    def summary_rows(self) -> list[tuple[str, str]]:
        """The summary as (what, value) rows for a table a person reads."""
        ...


@runtime_checkable
class System(Protocol):
    """A simulated machine: built once from its config, it runs any number of workloads, each on
    fresh hardware. A kind whose runs can be stepped also defines ``start`` (the arguments of
    ``run`` without ``timeline``), returning a :class:`ndpsim.systems.stepping.SteppedRun`
    (:func:`start_system`); one that runs several programs at once defines ``run_programs``
    (:func:`run_programs_on`)."""

    config: Any  # the kind's config model; every kind has ``name``, ``kind`` and ``seed``

    def run(self, traces: Sequence[Any], module: Any, memory: Any, seed: int | None = None,
            on_epoch: Callable[[Any], None] | None = None,
            timeline: Timeline | None = None) -> RunResult:  # fmt: skip
        """Simulate the kernel launches of one workload run (their traces, the PTX module they
        come from, and the device memory after the run), in order; fill ``timeline``, if
        given, with the run's counters window by window (a kind that records no timeline
        leaves the parameter out: :func:`run_system` then refuses one)."""
        ...


@dataclass(frozen=True)
class SystemKind:
    """One kind of system: how its presets validate and how a config becomes hardware."""

    name: str  # the value of ``kind`` in its presets
    config: type[Strict]  # the model of its preset files; has ``kind: Literal[name]``
    build: Callable[[Any], System]
    check: Callable[[Any], None] = lambda config: None  # checks across files (e.g. that
    # the DRAM preset a config names exists): raises ConfigError without naming the file
    dependencies: Callable[[Any], dict[str, Any]] = lambda config: {}  # the other presets
    # the config names, loaded and JSON-ready: part of what a run's result depends on


#: The kinds by name. A shipped kind is a folder under ``systems/`` whose ``__init__`` calls
#: :func:`register_system_kind`; the registry imports every module of ``ndpsim.systems`` on
#: first use. A kind defined elsewhere registers when its module is imported.
SYSTEM_KINDS: Registry[SystemKind] = Registry("system kind", "ndpsim.systems")


def register_system_kind(kind: SystemKind) -> SystemKind:
    """Make ``kind`` available to presets; registering a name twice is an error."""
    field = kind.config.model_fields.get("kind")
    if field is None or field.annotation != Literal[kind.name]:  # type: ignore[valid-type]
        raise ConfigError(
            f"system kind {kind.name!r}: its config model {kind.config.__name__} needs a field "
            f"kind: Literal[{kind.name!r}]"
        )
    return SYSTEM_KINDS.register(kind.name)(kind)


def system_kinds() -> dict[str, SystemKind]:
    """Every registered kind by name."""
    return {name: SYSTEM_KINDS.get(name) for name in SYSTEM_KINDS}


def _kind_of(data: dict, source: str, files: list[str]) -> SystemKind:
    """The registered kind ``data`` names, errors citing the line of its ``kind`` key."""
    kinds = system_kinds()
    names = tuple(kinds)
    model = create_model(
        "SystemPresetKind",
        __config__=ConfigDict(extra="ignore", strict=True),
        kind=(Literal[names], ...),  # type: ignore[valid-type]
    )
    return kinds[validate(model, data, source, files).kind]


def _validate(data: dict, source: str, files: list[str]) -> Any:
    kind = _kind_of(data, source, files)
    config = validate(kind.config, data, source, files)
    try:
        kind.check(config)
    except ConfigError as error:
        raise ConfigError(f"{source}: {error}") from None
    return config


def system_preset_names() -> list[str]:
    return preset_names("systems")


def system_preset_descriptions() -> list[tuple[str, str]]:
    """Each system preset's name and ``description`` (inherited from its base if it has none of
    its own), read from the files without validating them (a preset is validated when it is
    loaded), so that listing the presets needs no system kind's code."""
    listed = []
    for name in system_preset_names():
        data, files = preset_tree("systems", name)
        description = data.get("description", "")
        if not isinstance(description, str):
            raise ConfigError(f"{files[0]}: 'description': expected a string, got "
                              f"{description!r}")  # fmt: skip
        listed.append((name, description))
    return listed


def _load(name: str, overrides: dict | None) -> tuple[Any, list[str]]:
    refuse = partial(_refuse_new_sections, name)
    return load_layered(_validate, "systems", name, overrides, "preset", refuse)


def _refuse_new_sections(name: str, data: dict, overrides: dict) -> None:
    """Overrides change a system's settings, never what it is: an override of a section the
    preset does not have (``ndp.ratio`` on a GPU without near-data processing) would add the
    section with defaults for everything else, and silently build another system. Refused,
    naming the presets that have the section."""
    kind = SYSTEM_KINDS.get(data["kind"]) if data.get("kind") in SYSTEM_KINDS else None
    sections = kind.config.model_fields if kind else {}
    for section, value in overrides.items():
        if isinstance(value, dict) and section in sections and section not in data:
            having = [p for p in system_preset_names() if section in preset_tree("systems", p)[0]]
            where = f"presets with [{section}]: {', '.join(having) or 'none'}"
            raise ConfigError(
                f"overrides of preset {name!r}: '{section}.{next(iter(value), '')}' sets a section "
                f"the preset has not ([{section}]); overrides change a system's settings, its "
                f"preset decides what it is ({where})"
            )


def load_system_config(name: str, overrides: dict | None = None) -> Any:
    """A system preset by name (or ``.toml`` path) with nested overrides applied, validated by
    the model of the kind it names, and checked across files (the DRAM preset and energy table
    it names, for a GPU). A bad preset is blamed on its file, a bad override on the overrides."""
    return _load(name, overrides)[0]


def system_settings(name: str, overrides: dict | None = None) -> list[Setting]:
    """Every key of a system preset as it loads (overrides applied), with the file and line of
    the preset or base that set it, ``--set``, or ``default``, and the comment citing it."""
    config, files = _load(name, overrides)
    return settings(config, files, overrides)


def build_system(config: Any) -> System:
    """The hardware ``config`` describes, built by its kind's builder."""
    return SYSTEM_KINDS.get(config.kind).build(config)


def resolved_config(config: Any) -> dict[str, Any]:
    """Everything a system's results depend on, JSON-ready: its config (``"system"``) and the
    presets it names, loaded (for a GPU, ``"dram"`` and ``"energy"``)."""
    kind = SYSTEM_KINDS.get(config.kind)
    return {"system": config.model_dump(mode="json"), **kind.dependencies(config)}


def run_system(system: System, traces: Sequence[Any], module: Any, memory: Any,
               seed: int | None = None, timeline: Timeline | None = None) -> RunResult:  # fmt: skip
    """``system.run``, given a ``timeline`` only if one is asked for (a kind that records none
    may leave the parameter out)."""
    if timeline is None:
        return system.run(traces, module, memory, seed=seed)
    check_records_timeline(system)
    return system.run(traces, module, memory, seed=seed, timeline=timeline)


def run_programs_on(system: System, programs: Sequence[Any], seed: int | None = None,
                    timeline: Timeline | None = None) -> RunResult:  # fmt: skip
    """Several programs (:class:`ndpsim.systems.skeleton.program.Program`) at once on
    ``system``, each on its own cores and in its own address space; one program is
    :func:`run_system`. A kind offers it by defining ``run_programs``."""
    if len(programs) == 1:
        (p,) = programs
        return run_system(system, p.traces, p.module, p.memory, seed=seed, timeline=timeline)
    run = getattr(system, "run_programs", None)
    if run is None:
        raise ConfigError(f"system kind {system.config.kind!r} runs one program at a time: it "
                          "has no run_programs()")  # fmt: skip
    if timeline is None:
        return run(programs, seed=seed)
    check_records_timeline(system)
    return run(programs, seed=seed, timeline=timeline)


def start_system(system: System, traces: Sequence[Any], module: Any, memory: Any,
                 seed: int | None = None) -> Any:  # fmt: skip
    """``system.start``: the run of ``system.run``, for the caller to advance step by step
    (:class:`ndpsim.systems.stepping.SteppedRun`). A kind offers it by defining ``start``."""
    start = getattr(system, "start", None)
    if start is None:
        raise ConfigError(f"system kind {system.config.kind!r} cannot be stepped: it has no "
                          "start() (docs/api.md#stepping-a-run)")  # fmt: skip
    return start(traces, module, memory, seed=seed)


def check_records_timeline(system: System) -> None:
    """Refuse a timeline for a system whose kind records none: before any work is done."""
    if "timeline" not in inspect.signature(system.run).parameters:
        raise ConfigError(f"system kind {system.config.kind!r} records no timeline: its run() "
                          "takes no timeline parameter")  # fmt: skip


def load_system(name: str, overrides: dict | None = None) -> System:
    """:func:`load_system_config` and :func:`build_system` in one: what a caller that just
    wants to simulate on a preset uses."""
    return build_system(load_system_config(name, overrides))
