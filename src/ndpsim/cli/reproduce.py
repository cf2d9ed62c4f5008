"""``ndpsim reproduce PAPER``: a sub-command per registered paper, its options built from the
paper's data (the options every paper takes, then the paper's own switches and studies), all
run by one implementation."""

from __future__ import annotations

import inspect
import json
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

import typer
from rich.console import RenderableType
from rich.markup import escape

from ndpsim.cli.main import app, console, reports_errors
from ndpsim.cli.paths import output_directory, output_file
from ndpsim.cli.progress import stage, tracking
from ndpsim.compilation import COMPILING_NOTICE
from ndpsim.config import parse_overrides
from ndpsim.errors import ConfigError
from ndpsim.experiments import seeds as seed_study
from ndpsim.experiments.overrides import apply_overrides
from ndpsim.experiments.paper import Paper, Study, papers
from ndpsim.experiments.runner import Variant, run_experiment
from ndpsim.experiments.store import RunStore
from ndpsim.reports import reproduction as report
from ndpsim.workloads import SIZES, get_workload

reproduce_app = typer.Typer(help="Reproduce a paper's key results.", no_args_is_help=True)
app.add_typer(reproduce_app, name="reproduce")


def _option(name: str, annotation: Any, default: Any, *names: str, **settings: Any,
            ) -> inspect.Parameter:  # fmt: skip
    return inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, annotation=annotation,
                             default=typer.Option(default, *names, **settings))  # fmt: skip


def _parameters(paper: Paper) -> list[inspect.Parameter]:
    """The command's options: those every paper takes, with the paper's switches and a flag
    per study among them (in the order ``--help`` lists them)."""
    return [
        _option("size", str, "small", "--size", "-s", help=f"One of {', '.join(SIZES)}."),
        _option("workloads", str, None, "--workloads", "-w",
                help=f"Comma-separated subset (default: {paper.name.upper()}'s "
                f"{len(paper.workloads)})."),
        _option("variant_names", str, None, "--variants",
                help="Comma-separated systems (default: all; the baseline always runs)."),
        _option("seed", int, 0, "--seed", min=0),
        _option("seeds", int, 1, "--seeds",
                help="Run with this many seeds (--seed, --seed + 1, ...) and compare them."),
        *(_option(s.name, s.type, s.default, s.option, help=s.help) for s in paper.switches),
        *(_option(s.key, bool, False, f"--{s.key}", help=s.help) for s in paper.studies),
        _option("assignments", list[str], [], "--set",
                help="Change a config key in every system that has its section, e.g. "
                "--set ndp.pcie_latency_ns=500 (repeatable)."),
        _option("jobs", int, None, "--jobs", "-j", min=1,
                help="Worker processes (default: cores)."),
        _option("out", Path, None, "--out", help="Directory for CSV and PNG files."),
        _option("json_path", Path, None, "--json", help="Write the results document here."),
        _option("runs_dir", Path, None, "--runs",
                help="Directory of finished runs to reuse and add to (default: OUT/runs)."),
        _option("fresh", bool, False, "--fresh",
                help="Simulate every run again, even those stored."),
    ]  # fmt: skip


def _command(paper: Paper) -> Callable[..., None]:
    """``ndpsim reproduce NAME``: Typer reads its options from the signature given here."""

    def command(**options: Any) -> None:
        _reproduce(paper, **options)

    command.__signature__ = inspect.Signature(_parameters(paper))  # type: ignore[attr-defined]
    return reports_errors(command)


def _reproduce(paper: Paper, *, size: str, workloads: str | None, variant_names: str | None,
               seed: int, seeds: int, assignments: list[str], jobs: int | None,
               out: Path | None, json_path: Path | None, runs_dir: Path | None, fresh: bool,
               **own: Any) -> None:  # fmt: skip
    """Run ``paper``'s systems over its workloads (with one seed or several), or only the
    studies asked for, and print and write what the paper's data says to."""
    if size not in SIZES:
        raise ConfigError(f"--size must be one of {', '.join(SIZES)}, got {size!r}")
    switches = paper.switch_values({s.name: own[s.name] for s in paper.switches})
    if seeds < 1:
        raise ConfigError(f"--seeds must be at least 1, got {seeds}")
    alone = [s for s in paper.studies if own[s.key]]
    if alone and assignments:
        raise ConfigError(f"--set changes simulated systems; --{alone[0].key} simulates none")
    variants, changed = apply_overrides(paper.variants(_variant_set(variant_names), **switches),
                                        parse_overrides(assignments))  # fmt: skip
    names = _workload_list(workloads, paper.workloads)
    start = time.perf_counter()
    default = paper.directory(size, switches) + _subset_suffix(names, paper.workloads, "")
    if variant_names:
        default += _subset_suffix([v.name for v in variants], paper.variant_names, "only-")
    out = output_directory(out or Path("results") / default, "--out")
    if alone:
        stem = "-".join(s.key for s in alone)
    else:
        stem = f"{paper.name}-seeds" if seeds > 1 else paper.name
    path = output_file(json_path or out / f"{stem}.json", "--json")
    if alone:
        results = _studies(alone, seed)
        _write_document({**results, "meta": {"experiment": f"{paper.name}-{stem}",
                                             "seed": seed}}, path)  # fmt: skip
        _show(r for s in alone for r in report.study_report(s, results[s.key], out))
        _say_where(path, out, start)
        return
    recorded = {**switches, **({"set": changed} if changed else {})}  # "set" only when used
    store = RunStore(output_directory(runs_dir or out / "runs", "--runs"), reuse=not fresh)
    label = paper.name.upper()
    if seeds > 1:
        docs = {s: paper.document(_run(f"{label} at {size}, seed {s}", names, size, s, variants,
                                       jobs, store), size, s, recorded)
                for s in range(seed, seed + seeds)}  # fmt: skip
        doc = seed_study.document(docs, paper.name)
        _write_document(doc, path)
        _show(report.seeds(paper, doc, out))
        _say_where(path, out, start)
        return
    results = _studies(paper.studies, seed)
    runs = _run(f"{label} at {size}", names, size, seed, variants, jobs, store)
    doc = {**paper.document(runs, size, seed, recorded), **results}
    _write_document(doc, path)
    _show(report.figures(paper, doc, out))
    _show(report.tables(paper, doc, out))
    _show(r for s in paper.studies for r in report.study_report(s, results[s.key], out))
    _say_where(path, out, start)


def _subset_suffix(chosen: Sequence[str], every: Sequence[str], prefix: str) -> str:
    """The default output directory's suffix for a subset of a paper's workloads or systems
    (none for all of them), so that a partial reproduction never replaces the whole one."""
    return "" if list(chosen) == list(every) else f"-{prefix}{'-'.join(chosen)}"


def _variant_set(text: str | None) -> set[str] | None:
    """The systems ``--variants`` asks for, with the baseline everything is compared with."""
    if not text:
        return None
    return {"baseline", *(v.strip() for v in text.split(",") if v.strip())}


def _workload_list(text: str | None, default: Sequence[str]) -> list[str]:
    if not text:
        return list(default)
    names = [w.strip().lower() for w in text.split(",") if w.strip()]
    for name in names:
        get_workload(name)  # unknown names fail now
    return names


def _studies(studies: Iterable[Study], seed: int) -> dict[str, dict[str, Any]]:
    """Each study's section of the results document."""
    results = {}
    for study in studies:
        with stage(study.title):
            results[study.key] = study.run(seed)
    return results


def _run(label: str, names: list[str], size: str, seed: int, variants: list[Variant],
         jobs: int | None, store: RunStore) -> dict:  # fmt: skip
    """Run every (workload, system) pair of an experiment with one seed, showing progress;
    runs ``store`` holds are taken from it, and each new one is added as it ends."""
    title = f"{label}: {len(names)} workloads x {len(variants)} systems"
    with tracking(title, len(names)) as tracker:

        def compiling(started: bool) -> None:
            tracker.note(COMPILING_NOTICE if started else "compiled")

        runs = run_experiment(names, size, seed, variants, jobs, tracker.advance, compiling,
                              store)  # fmt: skip
    reused = sum(r["reused"] for by in runs.values() for r in by.values())
    if reused:
        console.print(f"{label}: {reused} of {len(names) * len(variants)} runs taken from "
                      f"{escape(str(store.root))}/ (--fresh simulates them again)")  # fmt: skip
    return runs


def _write_document(doc: dict, path: Path) -> None:
    """Write an experiment's results document before anything is drawn from it, so that a
    failing table or plot cannot lose a long run (``path`` was checked before the run)."""
    path.write_text(json.dumps(doc, indent=2))


def _show(renderables: Iterable[RenderableType]) -> None:
    for renderable in renderables:
        console.print(renderable)


def _say_where(path: Path, out: Path, start: float) -> None:
    console.print(f"results: {escape(str(path))} (tables and plots in {escape(str(out))}/), "
                  f"{time.perf_counter() - start:.0f} s")  # fmt: skip


def _add_commands() -> None:
    for paper in papers().values():
        text = f"{paper.summary}\n\n{paper.citation}."
        reproduce_app.command(paper.name, help=text)(_command(paper))


_add_commands()
