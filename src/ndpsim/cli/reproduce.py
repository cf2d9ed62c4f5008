"""``ndpsim reproduce PAPER``: a sub-command per registered paper, its options built from the
paper's data (the options every paper takes, then the paper's own switches and studies), all
run by one implementation."""

from __future__ import annotations

import inspect
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

import typer
from rich.console import RenderableType
from rich.markup import escape

from ndpsim.cli import options
from ndpsim.cli.commands import App
from ndpsim.cli.main import app, console, reports_errors
from ndpsim.cli.paths import output_directory, output_file, to_stdout, write_json
from ndpsim.cli.progress import stage, tracking
from ndpsim.cli.stopping import stops_cleanly
from ndpsim.compilation import COMPILING_NOTICE
from ndpsim.config import parse_overrides
from ndpsim.experiments import seeds as seed_study
from ndpsim.experiments.paper import Paper, Study, Switch, papers
from ndpsim.experiments.reproduction import Reproduction, plan
from ndpsim.experiments.store import ResultStore
from ndpsim.reports import reproduction as report
from ndpsim.workloads.params import name_suffix, parse_param_options

reproduce_app = App(help="Reproduce a paper's key results.", no_args_is_help=True)
app.add_typer(reproduce_app, name="reproduce")


def _option(name: str, annotation: Any, option: Any) -> inspect.Parameter:
    return inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, annotation=annotation,
                             default=option)  # fmt: skip


def _parameters(paper: Paper) -> list[inspect.Parameter]:
    """The command's options: those every paper takes, with the paper's switches and a flag
    per study among them (in the order ``--help`` lists them)."""
    return [
        _option("size", str, options.SIZE),
        _option("workloads", str, options.workloads(
            f"{paper.name.upper()}'s {len(paper.workloads)}: {', '.join(paper.workloads)}")),
        _option("systems", str, options.systems(paper.variant_names)),
        _option("variants", str, options.deprecated("--variants")),
        _option("params", list[str], options.params("the workloads that have it")),
        _option("seed", int, options.SEED),
        _option("seeds", int, typer.Option(1, "--seeds", metavar="N", min=1,
                help="Run with this many seeds (--seed, --seed + 1, ...) and compare them.")),
        *(_option(s.name, s.type, typer.Option(s.default, s.option, help=_switch_help(s),
                                               metavar=_switch_metavar(s)))
          for s in paper.switches),
        *(_option(s.key, bool, typer.Option(False, f"--{s.key}", help=s.help))
          for s in paper.studies),
        _option("assignments", list[str], options.overrides(
            "Change a config key in every system that has its section, e.g. "
            "--set ndp.pcie_latency_ns=500")),
        _option("jobs", int, options.jobs()),
        _option("out", Path, options.out(
            "the tables' CSV files and the plots (PDF and PNG)", f"results/{paper.name}-SIZE, "
            "named further after the switches not at their default and a subset's workloads or "
            "systems")),
        _option("json_path", Path, options.json_file(
            "Write the results document to FILE",
            f"OUT/{paper.name}.json, or OUT/{paper.name}-seeds.json with --seeds")),
        _option("runs_dir", Path, typer.Option(None, "--runs", metavar="DIR",
                help="Result store of finished runs to reuse and add to, as a sweep's: "
                "DIR/runs/*.parquet, queried by `ndpsim results DIR` (default: OUT).")),
        _option("fresh", bool, typer.Option(False, "--fresh",
                help="Simulate every run again, even those stored.")),
    ]  # fmt: skip


def _switch_metavar(switch: Switch) -> str:
    return {int: "N", float: "X"}.get(switch.type, "NAME")


def _switch_help(switch: Switch) -> str:
    """A switch's help, naming the values it allows when it allows only some and its text
    does not name them all."""
    if all(str(choice) in switch.help for choice in switch.choices):
        return switch.help
    return f"{switch.help} One of {', '.join(str(c) for c in switch.choices)}."


def _command(paper: Paper) -> Callable[..., None]:
    """``ndpsim reproduce NAME``: Typer reads its options from the signature given here."""

    def command(**given: Any) -> None:
        _reproduce(paper, **given)

    command.__signature__ = inspect.Signature(_parameters(paper))  # type: ignore[attr-defined]
    return reports_errors(command)


def _reproduce(paper: Paper, *, size: str, workloads: str | None, systems: str | None,
               variants: str | None, params: list[str], seed: int, seeds: int,
               assignments: list[str],
               jobs: int | None, out: Path | None, json_path: Path | None,
               runs_dir: Path | None, fresh: bool, **own: Any) -> None:  # fmt: skip
    """Run ``paper``'s systems over its workloads (with one seed or several), or only the
    studies asked for, and print and write what the paper's data says to."""
    chosen = options.names(options.prefer(systems, variants, "--variants"))
    given = parse_param_options(params)
    reproduction = plan(paper, size=size, workloads=options.names(workloads), systems=chosen,
                        overrides=parse_overrides(assignments), options=own,
                        params=given)  # fmt: skip
    names = list(reproduction.workloads)
    start = time.perf_counter()
    default = paper.directory(size, reproduction.switches)
    default += _subset_suffix(names, paper.workloads, "")
    default += name_suffix(given)  # a run of other inputs never replaces the sizes' own
    if chosen:
        default += _subset_suffix([v.name for v in reproduction.variants], paper.variant_names,
                                  "only-")  # fmt: skip
    out = output_directory(out or Path("results") / default, "--out")
    alone = reproduction.studies
    if alone:
        stem = "-".join(s.key for s in alone)
    else:
        stem = f"{paper.name}-seeds" if seeds > 1 else paper.name
    path = output_file(json_path or out / f"{stem}.json", "--json")
    # each document is written before anything is drawn from it, so that a failing table or
    # plot cannot lose a long run (``path`` was checked before the run)
    if alone:
        results = _studies(alone, seed)
        write_json(path, reproduction.studies_document(results, seed))
        _show(r for s in alone for r in report.study_report(s, results[s.key], out))
        _say_where(path, out, start)
        return
    store = ResultStore(output_directory(runs_dir or out, "--runs"))
    label = paper.name.upper()
    if seeds > 1:
        with stops_cleanly(store, "the same command"):
            docs = {s: reproduction.document(_run(f"{label} at {size}, seed {s}", reproduction,
                                                  s, jobs, store, not fresh), s)
                    for s in range(seed, seed + seeds)}  # fmt: skip
        doc = seed_study.document(docs, paper.name)
        write_json(path, doc)
        _show(report.seeds(paper, doc, out))
        _say_where(path, out, start)
        return
    results = _studies(paper.studies, seed)
    with stops_cleanly(store, "the same command"):
        runs = _run(f"{label} at {size}", reproduction, seed, jobs, store, not fresh)
    doc = {**reproduction.document(runs, seed), **results}
    write_json(path, doc)
    _show(report.figures(paper, doc, out))
    _show(report.tables(paper, doc, out))
    _show(r for s in paper.studies for r in report.study_report(s, results[s.key], out))
    _say_where(path, out, start)


def _subset_suffix(chosen: Sequence[str], every: Sequence[str], prefix: str) -> str:
    """The default output directory's suffix for a subset of a paper's workloads or systems
    (none for all of them), so that a partial reproduction never replaces the whole one."""
    return "" if list(chosen) == list(every) else f"-{prefix}{'-'.join(chosen)}"


def _studies(studies: Iterable[Study], seed: int) -> dict[str, dict[str, Any]]:
    """Each study's section of the results document."""
    results = {}
    for study in studies:
        with stage(study.title):
            results[study.key] = study.run(seed)
    return results


def _run(label: str, reproduction: Reproduction, seed: int, jobs: int | None,
         store: ResultStore, reuse: bool) -> dict:  # fmt: skip
    """Run every (workload, system) pair of an experiment with one seed, showing progress;
    runs ``store`` holds are taken from it when ``reuse``, and each new one is added as it
    ends."""
    names, variants = reproduction.workloads, reproduction.variants
    title = f"{label}: {len(names)} workloads x {len(variants)} systems"
    with tracking(title, len(names)) as tracker:

        def compiling(started: bool) -> None:
            tracker.note(COMPILING_NOTICE if started else "compiled")

        runs = reproduction.run(seed, jobs, store, tracker.advance, compiling, reuse)
    reused = sum(r["reused"] for by in runs.values() for r in by.values())
    if reused:
        console.print(f"{label}: {reused} of {len(names) * len(variants)} runs taken from "
                      f"{escape(str(store.runs_dir))}/ (--fresh simulates them again)")  # fmt: skip
    return runs


def _show(renderables: Iterable[RenderableType]) -> None:
    for renderable in renderables:
        console.print(renderable)


def _say_where(path: Path, out: Path, start: float) -> None:
    where = "standard output" if to_stdout(path) else escape(str(path))
    console.print(f"results: {where} (tables and plots in {escape(str(out))}/), "
                  f"{time.perf_counter() - start:.0f} s")  # fmt: skip


def _add_commands() -> None:
    for paper in papers().values():
        text = f"{paper.summary}\n\n{paper.citation}."
        reproduce_app.command(paper.name, help=text)(_command(paper))


_add_commands()
