"""``ndpsim reproduce PAPER``: one command per paper's key results."""

from __future__ import annotations

import json
import time
from pathlib import Path

import typer
from rich.markup import escape

from ndpsim.cli.main import app, console, reports_errors
from ndpsim.cli.paths import output_directory, output_file
from ndpsim.compilation import COMPILING_NOTICE
from ndpsim.config import parse_overrides
from ndpsim.errors import ConfigError
from ndpsim.reproduce import report
from ndpsim.reproduce import seeds as seed_study
from ndpsim.reproduce import sndp as sndp_experiment
from ndpsim.reproduce import target as target_study
from ndpsim.reproduce import tom as tom_experiment
from ndpsim.reproduce.overrides import apply_overrides
from ndpsim.reproduce.runner import run_experiment
from ndpsim.reproduce.store import RunStore
from ndpsim.workloads import SIZES, get_workload

reproduce_app = typer.Typer(help="Reproduce a paper's key results.", no_args_is_help=True)
app.add_typer(reproduce_app, name="reproduce")


# options every experiment takes
SIZE = typer.Option("small", "--size", "-s", help=f"One of {', '.join(SIZES)}.")
VARIANTS = typer.Option(
    None, "--variants", help="Comma-separated systems (default: all; the baseline always runs)."
)
SEED = typer.Option(0, "--seed", min=0)
SEEDS = typer.Option(
    1, "--seeds", help="Run with this many seeds (--seed, --seed + 1, ...) and compare them."
)
JOBS = typer.Option(None, "--jobs", "-j", min=1, help="Worker processes (default: cores).")
OUT = typer.Option(None, "--out", help="Directory for CSV and PNG files.")
JSON_PATH = typer.Option(None, "--json", help="Write the results document here.")
RUNS = typer.Option(
    None, "--runs", help="Directory of finished runs to reuse and add to (default: OUT/runs)."
)
FRESH = typer.Option(False, "--fresh", help="Simulate every run again, even those stored.")
SET = typer.Option(
    [], "--set", help="Change a config key in every system that has its section, e.g. "
    "--set ndp.pcie_latency_ns=500 (repeatable)."
)  # fmt: skip


def _variant_set(text: str | None) -> set[str] | None:
    """The systems ``--variants`` asks for, with the baseline everything is compared with."""
    if not text:
        return None
    return {"baseline", *(v.strip() for v in text.split(",") if v.strip())}


def _workload_list(text: str | None, default: tuple[str, ...]) -> list[str]:
    if not text:
        return list(default)
    names = [w.strip().lower() for w in text.split(",") if w.strip()]
    for name in names:
        get_workload(name)  # unknown names fail now
    return names


@reproduce_app.command("tom")
@reports_errors
def tom(
    size: str = SIZE,
    workloads: str = typer.Option(
        None, "--workloads", "-w", help="Comma-separated subset (default: TOM's ten)."
    ),
    variant_names: str = VARIANTS,
    seed: int = SEED,
    seeds: int = SEEDS,
    warp_scale: int = typer.Option(
        1, "--stack-warps", help="Stack-SM warp capacity, x 48 warps (the paper: 1, 2 or 4)."
    ),
    internal: float = typer.Option(
        2.0,
        "--internal-bw",
        help="Internal stack bandwidth, x the 80 GB/s GPU link (its two directions together; "
        "the paper: 1 or 2).",
    ),
    cross: float = typer.Option(
        0.5,
        "--cross-bw",
        help="Cross-stack link bandwidth, x the 80 GB/s GPU link (both directions; 0.5: 20 GB/s "
        "each way; the paper: 0.125 to 1).",
    ),
    assignments: list[str] = SET,
    jobs: int = JOBS,
    out: Path = OUT,
    json_path: Path = JSON_PATH,
    runs_dir: Path = RUNS,
    fresh: bool = FRESH,
) -> None:
    """TOM (ISCA 2016): baseline GPU vs NDP with/without offload control and learned mapping."""
    if size not in SIZES:
        raise ConfigError(f"--size must be one of {', '.join(SIZES)}, got {size!r}")
    for option, value in (("--stack-warps", warp_scale), ("--internal-bw", internal),
                          ("--cross-bw", cross)):  # fmt: skip
        if value <= 0:
            raise ConfigError(f"{option} must be positive, got {value}")
    _check_seeds(seeds)
    names = _workload_list(workloads, tom_experiment.WORKLOADS)
    variants, changed = apply_overrides(
        tom_experiment.variants(warp_scale, internal, cross, _variant_set(variant_names)),
        parse_overrides(assignments),
    )
    start = time.perf_counter()
    switches = {"stack_warps": warp_scale, "internal_bw": internal, "cross_bw": cross,
                **_set_switch(changed)}  # fmt: skip
    out = output_directory(out or Path("results") / f"tom-{size}", "--out")
    path = output_file(json_path or out / ("tom-seeds.json" if seeds > 1 else "tom.json"), "--json")
    store = _store(runs_dir, out, fresh)
    if seeds > 1:
        docs = {s: tom_experiment.document(_run(f"TOM at {size}, seed {s}", names, size, s,
                                                variants, jobs, store), size, s, switches)
                for s in range(seed, seed + seeds)}  # fmt: skip
        _report_seeds("tom", docs, tom_experiment.PAPER, out, path, start)
        return
    runs = _run(f"TOM at {size}", names, size, seed, variants, jobs, store)
    doc = tom_experiment.document(runs, size, seed, switches)
    _write_document(doc, path)
    report.remove_figures(out, [figure[0] for figure in tom_experiment.FIGURES])
    for stem, title, metric, shown, parts in tom_experiment.FIGURES:
        shown = [v for v in shown if v in doc]
        if not shown:
            continue
        paper = tom_experiment.PAPER.get(metric)
        rows = report.figure_rows(doc, metric, shown, paper)
        console.print(report.rich_table(title, shown, rows))
        report.write_csv(out / f"{stem}.csv", shown, rows)
        report.write_png(out / f"{stem}.png", title, doc, shown, metric, parts, paper)
        for part in parts:
            report.write_csv(out / f"{stem}_{part}.csv", shown,
                             report.figure_rows(doc, part, shown, None))  # fmt: skip
    _print_mapping(doc)
    _print_candidates(doc)
    _print_utilization(doc)
    _say_where(path, out, start)


def _set_switch(changed: dict[str, dict]) -> dict[str, dict]:
    """The results document's record of ``--set``: {"set": {key: {value, systems}}}, or
    nothing when no key was changed (so that documents of plain runs stay as they were)."""
    return {"set": changed} if changed else {}


def _check_seeds(seeds: int) -> None:
    if seeds < 1:
        raise ConfigError(f"--seeds must be at least 1, got {seeds}")


def _store(runs_dir: Path | None, out: Path, fresh: bool) -> RunStore:
    """Where an experiment keeps its finished runs: ``--runs``, else ``runs/`` in its output
    directory."""
    return RunStore(output_directory(runs_dir or out / "runs", "--runs"), reuse=not fresh)


def _run(label: str, names: list[str], size: str, seed: int, variants, jobs: int | None,
         store: RunStore) -> dict:  # fmt: skip
    """Run every (workload, system) pair of an experiment with one seed, showing progress;
    runs ``store`` holds are taken from it, and each new one is added as it ends."""
    done: list[str] = []
    with console.status(f"{label}: {len(names)} workloads x {len(variants)} systems") as st:

        def progress(name: str) -> None:
            done.append(name)
            st.update(f"{label}: {len(done)}/{len(names)} workloads done ({name})")

        def compiling(started: bool) -> None:
            st.update(COMPILING_NOTICE if started
                      else f"{label}: {len(done)}/{len(names)} workloads done")  # fmt: skip

        runs = run_experiment(names, size, seed, variants, jobs, progress, compiling, store)
    reused = sum(r["reused"] for by in runs.values() for r in by.values())
    if reused:
        console.print(f"{label}: {reused} of {len(names) * len(variants)} runs taken from "
                      f"{escape(str(store.root))}/ (--fresh simulates them again)")  # fmt: skip
    return runs


def _report_seeds(experiment: str, docs: dict[int, dict], paper: dict[str, dict[str, float]],
                  out: Path, path: Path, start: float) -> None:  # fmt: skip
    """The averages of every seed side by side (``--seeds``), as tables, CSV files and one
    document holding every seed's (written first: it is what a long run must not lose), with
    the paper's average of each metric where it gives one (``paper``: {metric: {variant: x}})."""
    doc = seed_study.document(docs, experiment)
    _write_document(doc, path)
    size = doc["meta"]["size"]
    for metric in seed_study.METRICS:
        columns, rows = seed_study.seed_rows(doc["across_seeds"], metric, paper.get(metric))
        title = (f"{experiment.upper()} at {size}: {metric} averaged over the workloads, "
                 f"by seed")  # fmt: skip
        console.print(report.rich_table(title, columns, rows, "system"))
        report.write_csv(out / f"seeds_{metric}.csv", columns, rows, "system")
        heading = (f"{experiment.upper()} at {size}: {metric}, mean over seeds {min(docs)}-"
                   f"{max(docs)} (whiskers: lowest and highest seed)")  # fmt: skip
        seed_study.write_png(out / f"seeds_{metric}.png", heading, doc["across_seeds"], metric)
    _say_where(path, out, start)


def _write_document(doc: dict, path: Path) -> None:
    """Write an experiment's results document before anything is drawn from it, so that a
    failing table or plot cannot lose a long run (``path`` was checked before the run)."""
    path.write_text(json.dumps(doc, indent=2))


def _say_where(path: Path, out: Path, start: float) -> None:
    console.print(f"results: {escape(str(path))} (tables and plots in {escape(str(out))}/), "
                  f"{time.perf_counter() - start:.0f} s")  # fmt: skip


def _print_mapping(doc: dict) -> None:
    from rich.table import Table

    table = Table(title="Learned data mapping (ctrl-tmap)", title_justify="left")
    for col in ("workload", "stack bits", "co-location: baseline map", "best bits",
                "learned, all instances", "learning phase, share of run"):  # fmt: skip
        table.add_column(col, justify="right", overflow="fold")
    for w, m in doc["mapping"].items():
        if "colocation_baseline" not in m:
            continue
        table.add_row(w, m["bits"], f"{m['colocation_baseline']:.2f}",
                      f"{m['best_bits']} ({m['colocation_best']:.2f})",
                      f"{m['colocation_learned']:.2f}", f"{m['learning_share']:.2f}")  # fmt: skip
    paper = tom_experiment.PAPER["colocation"]
    table.add_row("paper (average)", "-", f"{paper['baseline mapping']:.2f}",
                  f"{paper['best consecutive bits']:.2f}", f"{paper['learned from 0.1%']:.2f}",
                  "-", style="bold")  # fmt: skip
    console.print(table)


def _print_candidates(doc: dict) -> None:
    from rich.table import Table

    if not doc["candidates"]:
        return
    rule = next(iter(doc["candidates"].values()))["rule"]
    table = Table(title=f"Candidate blocks ({rule} rule; sec. 6.4 and 6.6)", title_justify="left")
    for col in ("workload", "blocks", "instructions (mean, max)", "live registers: block max",
                "thread max"):  # fmt: skip
        table.add_column(col, justify="right", overflow="fold")
    for w, c in doc["candidates"].items():
        sizes = f"{c['instructions_mean']:.0f}, {c['instructions_max']}"
        table.add_row(w, str(c["blocks"]), sizes, str(c["live_registers_max"]),
                      str(c["thread_live_registers_max"]))  # fmt: skip
    paper = tom_experiment.PAPER_CANDIDATES
    table.add_row("paper (all workloads)", f"<= {paper['blocks']}", "-",
                  str(paper["live_registers_max"]), str(paper["thread_live_registers_max"]),
                  style="bold")  # fmt: skip
    console.print(table)


def _print_utilization(doc: dict) -> None:
    from rich.table import Table

    limit = tom_experiment.SELECTION_UTILIZATION
    table = Table(title=f"Baseline GPU-memory link utilization (sec. 5.3 selects workloads "
                  f"above {limit:.0%})", title_justify="left")  # fmt: skip
    for col in ("workload", "TX (GPU to memory)", "RX (memory to GPU)", f"above {limit:.0%}"):
        table.add_column(col, justify="right", overflow="fold")
    for w, u in doc["baseline_utilization"].items():
        table.add_row(w, f"{u['tx']:.2f}", f"{u['rx']:.2f}", "yes" if u["selected"] else "no")
    console.print(table)


@reproduce_app.command("sndp")
@reports_errors
def sndp(
    size: str = SIZE,
    workloads: str = typer.Option(
        None, "--workloads", "-w", help="Comma-separated subset (default: SNDP's ten)."
    ),
    variant_names: str = VARIANTS,
    seed: int = SEED,
    seeds: int = SEEDS,
    nsu_mhz: int = typer.Option(350, "--nsu-mhz", help="NSU clock of the NDP systems: 350 or 175."),
    target: str = typer.Option(
        "first", "--target", help="Target NSU: 'first' (sec. 4.1) or 'optimal' (Figure 5)."
    ),
    figure5_only: bool = typer.Option(
        False, "--figure5", help="Only the Figure 5 target-NSU study (no simulation)."
    ),
    assignments: list[str] = SET,
    jobs: int = JOBS,
    out: Path = OUT,
    json_path: Path = JSON_PATH,
    runs_dir: Path = RUNS,
    fresh: bool = FRESH,
) -> None:
    """SNDP (SC 2017): baseline GPUs vs NDP with naive, static-ratio and dynamic offloading."""
    if size not in SIZES:
        raise ConfigError(f"--size must be one of {', '.join(SIZES)}, got {size!r}")
    if nsu_mhz not in sndp_experiment.NSU_MHZ:
        raise ConfigError(f"--nsu-mhz must be 350 or 175, got {nsu_mhz}")
    if target not in sndp_experiment.TARGETS:
        raise ConfigError(f"--target must be 'first' or 'optimal', got {target!r}")
    _check_seeds(seeds)
    if figure5_only and assignments:
        raise ConfigError("--set changes simulated systems; --figure5 simulates none")
    variants, changed = apply_overrides(
        sndp_experiment.variants(nsu_mhz, target, _variant_set(variant_names)),
        parse_overrides(assignments),
    )
    names = _workload_list(workloads, sndp_experiment.WORKLOADS)
    start = time.perf_counter()
    nsu = "" if nsu_mhz == 350 else f"-nsu{nsu_mhz}"
    out = output_directory(
        out or Path("results") / f"sndp-{size}{nsu}{'' if target == 'first' else '-optimal'}",
        "--out",
    )
    document = "figure5.json" if figure5_only else "sndp-seeds.json" if seeds > 1 else "sndp.json"
    path = output_file(json_path or out / document, "--json")
    if figure5_only:
        with console.status("SNDP Figure 5: target NSU study"):
            figure5 = target_study.figure5(seed)
        _print_figure5(figure5, out)
        meta = {"experiment": "sndp-figure5", "seed": seed}
        path.write_text(json.dumps({"figure5": figure5, "meta": meta}, indent=2))
        console.print(f"results: {escape(str(path))} (table and plot in {escape(str(out))}/)")
        return
    switches = {"nsu_mhz": nsu_mhz, "target": target, **_set_switch(changed)}
    store = _store(runs_dir, out, fresh)
    if seeds > 1:
        docs = {s: sndp_experiment.document(_run(f"SNDP at {size}, seed {s}", names, size, s,
                                                 variants, jobs, store), size, s, switches)
                for s in range(seed, seed + seeds)}  # fmt: skip
        _report_seeds("sndp", docs, sndp_experiment.paper_averages(nsu_mhz), out, path, start)
        return
    with console.status("SNDP Figure 5: target NSU study"):
        figure5 = target_study.figure5(seed)
    runs = _run(f"SNDP at {size}", names, size, seed, variants, jobs, store)
    doc = sndp_experiment.document(runs, size, seed, switches, figure5)
    _write_document(doc, path)
    labels = sndp_experiment.PAPER_NAMES
    paper_averages = sndp_experiment.paper_averages(nsu_mhz)
    report.remove_figures(out, [figure[0] for figure in sndp_experiment.FIGURES])
    for stem, title, metric, shown, parts in sndp_experiment.FIGURES:
        shown = [v for v in shown if v in doc]
        if not shown:
            continue
        parts = [p for p in parts if any(p in m for v in shown for m in doc[v].values())]
        paper = paper_averages.get(metric)
        rows = report.figure_rows(doc, metric, shown, paper, labels)
        console.print(report.rich_table(title, shown, rows))
        report.write_csv(out / f"{stem}.csv", shown, rows)
        report.write_png(out / f"{stem}.png", title, doc, shown, metric, parts, paper, labels)
        for part in parts:
            report.write_csv(out / f"{stem}_{part}.csv", shown,
                             report.figure_rows(doc, part, shown, None, labels))  # fmt: skip
        if parts:
            split = sndp_experiment.split_rows(doc, shown, parts, metric)
            columns = [*(p.split("_", 1)[1] for p in parts), "total"]
            heading = f"{title.split(':')[0]}: average split"
            console.print(report.rich_table(heading, columns, split, "system"))
    columns, credit_rows = sndp_experiment.credit_rows(doc)
    if credit_rows:
        title = "NSU buffer credits: largest fraction reserved, overdrawn reservations"
        console.print(report.rich_table(title, columns, credit_rows, "system"))
    _print_claims(doc)
    _print_figure5(figure5, out)
    _say_where(path, out, start)


def _print_claims(doc: dict) -> None:
    from rich.table import Table

    table = Table(title="SNDP: the paper's per-workload statements", title_justify="left")
    for col in ("statement", "ours", "paper"):
        table.add_column(col, justify="left" if col == "statement" else "right")
    for what, ours, paper in sndp_experiment.claims(doc):
        table.add_row(what, "-" if ours is None else f"{ours:.3f}", f"{paper:.3f}")
    console.print(table)
    for note in doc["paper"]["notes"]:
        console.print(f"  paper, {note}", highlight=False)


#: The accesses-per-block rows Figure 5's table shows (the CSV has every one).
_FIGURE5_ROWS = (1, 2, 3, 4, 5, 6, 8, 12, 16, 24, 32)


def _print_figure5(study: dict, out: Path) -> None:
    studies = study["studies"]
    columns = [*(f"first: {name}" for name in studies), "majority: hypercube"]
    by_accesses: dict[int, list[float | None]] = {}
    for s in studies.values():
        for p in s["points"]:
            by_accesses.setdefault(p["accesses"], []).append(p["ratio"])
    for p in studies["hypercube"]["points"]:
        by_accesses[p["accesses"]].append(p["majority_ratio"])
    rows = [(str(n), values) for n, values in by_accesses.items()]
    worst = ("max (ours)", [*(s["max_ratio"] for s in studies.values()), None])
    paper = ("max (paper)", [study["paper_max_ratio"]] * len(studies) + [None])
    shown = [r for r in rows if int(r[0]) in _FIGURE5_ROWS]
    title = ("Figure 5: memory-network traffic with the first-instruction (or majority) target "
             f"NSU over the optimal target's, by accesses per block ({study['samples']} blocks "
             "each)")  # fmt: skip
    first = "accesses"
    console.print(report.rich_table(title, columns, [*shown, worst, paper], first))
    report.write_csv(out / "fig5_target_nsu.csv", columns, [*rows, worst, paper], first)
    target_study.write_png(out / "fig5_target_nsu.png", study)
