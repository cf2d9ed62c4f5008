"""A paper's experiment as asked for: its size, workloads, systems, switches, ``--set`` overrides
and studies, checked completely before anything runs (a paper-size reproduction runs for hours;
a typo must not surface at its end). ``ndpsim reproduce`` and ``ndpsim.reproduce`` both start
here, so the two refuse the same things with the same messages.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ndpsim.errors import ConfigError
from ndpsim.experiments.overrides import apply_overrides, nested
from ndpsim.experiments.paper import Paper, Runs, Study, get_paper
from ndpsim.experiments.rows import Params
from ndpsim.experiments.runner import Variant, run_experiment
from ndpsim.experiments.store import ResultStore
from ndpsim.workloads import SIZES, get_workload
from ndpsim.workloads.params import params_for_each


@dataclass(frozen=True)
class Reproduction:
    """What one reproduction runs. ``studies``: those asked for alone (``--figure5``), which
    simulate nothing; ``changed``: each overridden key with its value and the systems it
    reached, for the results document."""

    paper: Paper
    size: str
    workloads: tuple[str, ...]
    variants: tuple[Variant, ...]
    switches: dict[str, Any]
    changed: dict[str, dict[str, Any]]
    studies: tuple[Study, ...]
    #: {workload: its parameters given values of their own}, for the workloads that have some
    params: dict[str, Params] = field(default_factory=dict)

    @property
    def recorded(self) -> dict[str, Any]:
        """The switches as the results document records them (``set`` and ``param`` only when
        used)."""
        param = {name: dict(given) for name, given in self.params.items()}
        return {**self.switches, **({"set": self.changed} if self.changed else {}),
                **({"param": param} if param else {})}  # fmt: skip

    def run(self, seed: int, jobs: int | None = None, store: ResultStore | None = None,
            on_done: Callable[[str], None] | None = None,
            on_compiling: Callable[[bool], None] | None = None,
            reuse: bool = True) -> Runs:  # fmt: skip
        """Every (workload, system) run with ``seed`` (see :func:`run_experiment`); the rows
        it adds to ``store`` name the paper in their ``study`` column."""
        return run_experiment(list(self.workloads), self.size, seed, list(self.variants), jobs,
                              on_done, on_compiling, store, reuse, self.paper.name,
                              self.params)  # fmt: skip

    def document(self, runs: Runs, seed: int) -> dict[str, Any]:
        """The paper's results document of one seed's runs."""
        return self.paper.document(runs, self.size, seed, self.recorded)

    def studies_document(self, results: Mapping[str, Any], seed: int) -> dict[str, Any]:
        """The results document of the studies asked for alone."""
        keys = "-".join(s.key for s in self.studies)
        return {**results, "meta": {"experiment": f"{self.paper.name}-{keys}", "seed": seed}}


def plan(paper: str | Paper, *, size: str = "small", workloads: Sequence[str] | None = None,
         systems: Sequence[str] | None = None, overrides: Mapping[str, Any] | None = None,
         options: Mapping[str, Any] | None = None,
         params: Mapping[str, Any] | None = None) -> Reproduction:  # fmt: skip
    """``paper``'s experiment at ``size`` on ``workloads`` (default: the paper's; any of the
    suite) and ``systems`` (default: all; the baseline is always added), with ``overrides``
    laid over every system that has their section. ``options``: values of the paper's
    switches by name, and ``True`` for each study to run alone. ``params``: values of the
    workloads' parameters, each given to every workload that has the parameter
    (:func:`ndpsim.workloads.params.params_for_each`)."""
    paper = get_paper(paper) if isinstance(paper, str) else paper
    if size not in SIZES:
        raise ConfigError(f"size must be one of {', '.join(SIZES)}, got {size!r}")
    options = dict(options or {})
    studies = {s.key: s for s in paper.studies}
    asked = {key: options.pop(key) for key in list(options) if key in studies}
    alone = tuple(studies[key] for key, on in asked.items() if on)
    switches = paper.switch_values(options)
    tree = nested(overrides)
    if alone and tree:
        raise ConfigError(f"--set changes simulated systems; --{alone[0].key} simulates none")
    if alone and params:
        raise ConfigError(f"--param changes the workloads' inputs; --{alone[0].key} runs its "
                          "own")  # fmt: skip
    wanted = None if systems is None else {"baseline", *systems}
    variants, changed = apply_overrides(paper.variants(wanted, **switches), tree)
    names = list(paper.workloads) if workloads is None else [w.lower() for w in workloads]
    # an unknown name, parameter or value fails now, with what is known
    classes = {name: get_workload(name) for name in names}
    given = params_for_each({name: cls.sizes[size] for name, cls in classes.items()}, params or {})
    chosen = {name: tuple(classes[name](size, 0, values).chosen.items())
              for name, values in given.items() if values}  # fmt: skip
    return Reproduction(paper, size, tuple(names), tuple(variants), switches, changed, alone,
                        chosen)  # fmt: skip


__all__ = ["Reproduction", "plan"]
