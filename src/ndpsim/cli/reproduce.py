"""``ndpsim reproduce PAPER``: one command per paper's key results."""

from __future__ import annotations

import json
import time
from pathlib import Path

import typer

from ndpsim.cli.main import app, console, reports_errors
from ndpsim.errors import ConfigError
from ndpsim.reproduce import report
from ndpsim.reproduce import tom as tom_experiment
from ndpsim.reproduce.runner import run_experiment
from ndpsim.workloads import SIZES, get_workload

reproduce_app = typer.Typer(help="Reproduce a paper's key results.", no_args_is_help=True)
app.add_typer(reproduce_app, name="reproduce")


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
    size: str = typer.Option("small", "--size", "-s", help=f"One of {', '.join(SIZES)}."),
    workloads: str = typer.Option(
        None, "--workloads", "-w", help="Comma-separated subset (default: TOM's ten)."
    ),
    seed: int = typer.Option(0, "--seed"),
    warp_scale: int = typer.Option(1, "--stack-warps", help="Stack-SM warp capacity: 1, 2 or 4 x"),
    internal: float = typer.Option(
        2.0, "--internal-bw", help="Internal stack bandwidth, x the 80 GB/s GPU link (1 or 2)."
    ),
    cross: float = typer.Option(
        0.5, "--cross-bw", help="Cross-stack link bandwidth, x the GPU link (0.125 .. 1)."
    ),
    jobs: int = typer.Option(None, "--jobs", "-j", help="Worker processes (default: cores)."),
    out: Path = typer.Option(None, "--out", help="Directory for CSV and PNG files."),
    json_path: Path = typer.Option(None, "--json", help="Write the results document here."),
) -> None:
    """TOM (ISCA 2016): baseline GPU vs NDP with/without offload control and learned mapping."""
    if size not in SIZES:
        raise ConfigError(f"--size must be one of {', '.join(SIZES)}, got {size!r}")
    if warp_scale not in (1, 2, 4):
        raise ConfigError(f"--stack-warps must be 1, 2 or 4, got {warp_scale}")
    if internal <= 0 or not 0 < cross <= 4:
        raise ConfigError("--internal-bw must be > 0 and --cross-bw in (0, 4]")
    names = _workload_list(workloads, tom_experiment.WORKLOADS)
    variants = tom_experiment.variants(warp_scale, internal, cross)
    start = time.perf_counter()
    done: list[str] = []
    with console.status(f"TOM at {size}: {len(names)} workloads x {len(variants)} systems") as st:

        def progress(name: str) -> None:
            done.append(name)
            st.update(f"TOM at {size}: {len(done)}/{len(names)} workloads done ({name})")

        runs = run_experiment(names, size, seed, variants, jobs, progress)
    switches = {"stack_warps": warp_scale, "internal_bw": internal, "cross_bw": cross}
    doc = tom_experiment.document(runs, size, seed, switches)
    out = out or Path("results") / f"tom-{size}"
    out.mkdir(parents=True, exist_ok=True)
    for stem, title, metric, shown, parts in tom_experiment.FIGURES:
        paper = tom_experiment.PAPER.get(metric)
        rows = report.figure_rows(doc, metric, shown, paper)
        console.print(report.rich_table(title, shown, rows))
        report.write_csv(out / f"{stem}.csv", shown, rows)
        report.write_png(out / f"{stem}.png", title, doc, shown, metric, parts, paper)
        for part in parts:
            report.write_csv(out / f"{stem}_{part}.csv", shown,
                             report.figure_rows(doc, part, shown, None))  # fmt: skip
    _print_mapping(doc)
    path = json_path or out / "tom.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc, indent=2))
    console.print(f"results: {path} (tables and plots in {out}/), "
                  f"{time.perf_counter() - start:.0f} s")  # fmt: skip


def _print_mapping(doc: dict) -> None:
    from rich.table import Table

    table = Table(title="Learned data mapping (ctrl-tmap)", title_justify="left")
    for col in ("workload", "stack bits", "co-location: baseline map", "best bits",
                "learned, all instances"):  # fmt: skip
        table.add_column(col, justify="right")
    for w, m in doc["mapping"].items():
        if "colocation_baseline" not in m:
            continue
        table.add_row(w, m["bits"], f"{m['colocation_baseline']:.2f}",
                      f"{m['best_bits']} ({m['colocation_best']:.2f})",
                      f"{m['colocation_learned']:.2f}")  # fmt: skip
    paper = tom_experiment.PAPER["colocation"]
    table.add_row("paper (average)", "-", f"{paper['baseline mapping']:.2f}",
                  f"{paper['best consecutive bits']:.2f}", f"{paper['learned from 0.1%']:.2f}",
                  style="bold")  # fmt: skip
    console.print(table)
