"""What a paper's reproduction is, as data, and the registry of papers.

A paper is one module of :mod:`ndpsim.experiments.papers` that builds a :class:`Paper` and
ends with ``register(PAPER)``. ``ndpsim reproduce PAPER``, the reports and the contract tests
read everything else from it: the systems it compares (built from its own switches), its
workloads and figures, the numbers the paper gives, and how runs become metrics and a results
document. Adding a paper adds no line anywhere else.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ndpsim.errors import ConfigError
from ndpsim.experiments.runner import Variant
from ndpsim.registry import Registry

#: {workload: {variant: run}}, as the runner returns them.
Runs = dict[str, dict[str, dict[str, Any]]]
#: {variant: {workload: {metric: value}}}, as a paper's metrics function returns them.
Metrics = dict[str, dict[str, dict[str, float]]]
#: A table's rows: (label, a value per column); a string is shown as it is.
Rows = list[tuple[str, list[float | str | None]]]
#: A statement of the paper's with a number, ours beside it: (what, ours or None, paper's).
Claim = tuple[str, float | None, float]


@dataclass(frozen=True)
class PaperNumbers:
    """The numbers a paper gives: averages ``{metric: {variant: value}}``, per-workload values
    ``{metric: {workload: {variant: value}}}``, and what its text says without a number."""

    averages: Mapping[str, Mapping[str, float]]
    workloads: Mapping[str, Mapping[str, Mapping[str, float]]]
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class Switch:
    """A paper's own setting of the systems it compares, offered as ``--NAME`` (underscores as
    dashes) and recorded in the results document's ``meta.switches`` under ``name``.

    ``choices``: the values allowed (empty: any of ``type``); ``positive``: the value must be
    above zero; ``directory``: when the value is not the default, the default output
    directory's name gains ``-`` and this, formatted with the value; ``numbers``: the paper's
    numbers for a value it reports separately (SNDP's NSUs at 175 MHz)."""

    name: str
    type: type
    default: Any
    help: str
    choices: tuple[Any, ...] = ()
    positive: bool = False
    directory: str | None = None
    numbers: Mapping[Any, PaperNumbers] = field(default_factory=dict)

    @property
    def option(self) -> str:
        return "--" + self.name.replace("_", "-")

    def check(self, value: Any) -> None:
        """Refuse a value this switch does not allow, naming the option and what it allows."""
        numeric = self.type is float and isinstance(value, int) and not isinstance(value, bool)
        if not isinstance(value, self.type) and not numeric:
            raise ConfigError(f"{self.option} must be {self.type.__name__}, got {value!r}")
        if self.choices and value not in self.choices:
            allowed = ", ".join(str(c) for c in self.choices)
            raise ConfigError(f"{self.option} must be one of {allowed}, got {value!r}")
        if self.positive and not value > 0:
            raise ConfigError(f"{self.option} must be positive, got {value!r}")


def _check_y_label(stem: str, y_label: str) -> None:
    """Refuse a figure whose y axis would go unlabelled."""
    if not y_label.strip():
        raise ConfigError(f"figure {stem!r}: y_label must name the quantity and its unit, got "
                          f"{y_label!r}")  # fmt: skip


@dataclass(frozen=True)
class Figure:
    """One of the paper's figures as bars per workload and on average: ``metric`` of each of
    ``variants`` (those that ran), stacked by ``parts`` when given (they add up to
    ``metric``), written as ``{stem}.csv``, ``{stem}.pdf`` and ``{stem}.png``. ``y_label``
    names the quantity and its unit."""

    stem: str
    title: str
    metric: str
    variants: tuple[str, ...]
    y_label: str
    parts: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        _check_y_label(self.stem, self.y_label)


@dataclass(frozen=True)
class Table:
    """A table beyond the figures, printed; when it has a ``stem`` also written as
    ``{stem}.csv``, with ``csv_rows`` when the file holds more rows than the terminal shows."""

    title: str
    columns: Sequence[str]
    rows: Rows
    first: str = "workload"
    stem: str | None = None
    csv_rows: Rows | None = None


@dataclass(frozen=True)
class LineFigure:
    """A study's figure: ratios (y) against ``x_label``, one line per label, with the paper's
    bound, when it gives one, as ``(value, label)``."""

    stem: str
    title: str
    x_label: str
    y_label: str
    lines: Mapping[str, tuple[Sequence[float], Sequence[float]]]
    paper_bound: tuple[float, str] | None = None

    def __post_init__(self) -> None:
        _check_y_label(self.stem, self.y_label)


@dataclass(frozen=True)
class Study:
    """A result of the paper's that needs no simulation (SNDP's Figure 5, a Monte Carlo of
    target NSU choices): computed beside the simulations and kept under ``key`` in their
    results document, or alone with ``--KEY``. ``run(seed)`` returns its section."""

    key: str
    title: str
    help: str
    run: Callable[[int], dict[str, Any]]
    tables: Callable[[dict[str, Any]], list[Table]]
    figures: Callable[[dict[str, Any]], list[LineFigure]]


@dataclass(frozen=True)
class Paper:
    """One paper's reproduction. ``build_variants(**switch values)`` returns every system it
    compares, in the order of ``variant_names``; ``derived_variants`` are not systems but
    computed from their metrics (SNDP's best static ratio). ``document(runs, size, seed,
    switches)`` is the results document of one seed; ``claims(doc)`` the statements beyond the
    per-workload numbers; ``tables(doc)`` the tables beyond the figures."""

    name: str
    citation: str
    summary: str
    workloads: tuple[str, ...]
    variant_names: tuple[str, ...]
    build_variants: Callable[..., list[Variant]]
    figures: tuple[Figure, ...]
    numbers: PaperNumbers
    metrics: Callable[[Runs], Metrics]
    document: Callable[[Runs, str, int, dict[str, Any]], dict[str, Any]]
    switches: tuple[Switch, ...] = ()
    workload_names: Mapping[str, str] = field(default_factory=dict)
    derived_variants: tuple[str, ...] = ()
    claims: Callable[[dict[str, Any]], list[Claim]] | None = None
    tables: Callable[[dict[str, Any]], list[Table]] | None = None
    studies: tuple[Study, ...] = ()

    def switch_values(self, given: Mapping[str, Any]) -> dict[str, Any]:
        """Every switch's value, ``given``'s or its default, each checked."""
        unknown = set(given) - {s.name for s in self.switches}
        if unknown:
            takes = ", ".join(s.name for s in self.switches) or "none"
            raise ConfigError(f"{self.name} has no switch {', '.join(sorted(unknown))}; it "
                              f"takes {takes}")  # fmt: skip
        values = {s.name: given.get(s.name, s.default) for s in self.switches}
        for s in self.switches:
            s.check(values[s.name])
        return values

    def variants(self, names: Iterable[str] | None = None, **switches: Any) -> list[Variant]:
        """The systems compared, with the switches given (defaults for the others); ``names``
        selects a subset, kept in the order of :attr:`variant_names`."""
        wanted = set(self.variant_names if names is None else names)
        unknown = wanted - set(self.variant_names)
        if unknown:
            raise ConfigError(f"unknown {self.name.upper()} variant(s) "
                              f"{', '.join(sorted(unknown))}; expected some of "
                              f"{', '.join(self.variant_names)}")  # fmt: skip
        every = self.build_variants(**self.switch_values(switches))
        return [v for v in every if v.name in wanted]

    def numbers_for(self, switches: Mapping[str, Any]) -> PaperNumbers:
        """The paper's numbers for these switch values: those it reports for a switch's value
        apart (SNDP's at 175 MHz), else its main ones."""
        for s in self.switches:
            value = switches.get(s.name, s.default)
            if value in s.numbers:
                return s.numbers[value]
        return self.numbers

    def directory(self, size: str, switches: Mapping[str, Any]) -> str:
        """The default output directory's name: ``NAME-SIZE``, then the suffix of each switch
        that is not at its default."""
        suffixes = [f"-{s.directory.format(switches[s.name])}" for s in self.switches
                    if s.directory and switches[s.name] != s.default]  # fmt: skip
        return f"{self.name}-{size}{''.join(suffixes)}"

    def y_label(self, metric: str) -> str:
        """The y-axis label of ``metric``: its first figure's."""
        return next((f.y_label for f in self.figures if f.metric == metric), metric)


#: The papers by name, filled by the modules of :mod:`ndpsim.experiments.papers`.
PAPERS: Registry[Paper] = Registry("paper", "ndpsim.experiments.papers")


def register(paper: Paper) -> Paper:
    """Add ``paper`` to the registry: the line a paper's module ends with."""
    return PAPERS.register(paper.name)(paper)


def papers() -> dict[str, Paper]:
    """Every registered paper, by name."""
    return {name: PAPERS.get(name) for name in PAPERS}


def get_paper(name: str) -> Paper:
    return PAPERS.get(name)


__all__ = [
    "PAPERS",
    "Claim",
    "Figure",
    "LineFigure",
    "Metrics",
    "Paper",
    "PaperNumbers",
    "Rows",
    "Runs",
    "Study",
    "Switch",
    "Table",
    "get_paper",
    "papers",
    "register",
]  # fmt: skip
