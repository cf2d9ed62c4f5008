"""What a reproduction shows and writes, for any registered paper: from a results document,
the tables to print (returned, for the caller to print) and the CSV, PDF and PNG files (written
to the output directory). Everything paper-specific comes from the paper's data."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import RenderableType
from rich.text import Text

from ndpsim.experiments.paper import Figure, Paper, Study, Table
from ndpsim.experiments.results import claims
from ndpsim.experiments.seeds import METRICS as SEED_METRICS
from ndpsim.reports import plots
from ndpsim.reports.tables import (
    figure_rows,
    remove_figures,
    rich_table,
    seed_rows,
    split_rows,
    write_csv,
)

if TYPE_CHECKING:
    from matplotlib.figure import Figure as Drawing


def figures(paper: Paper, doc: dict[str, Any], out: Path) -> list[RenderableType]:
    """Each of the paper's figures whose variants ran, as a table (and the average split of a
    stacked one) and as ``{stem}.csv``, ``{stem}_{part}.csv``, ``{stem}.pdf`` and
    ``{stem}.png``. The files an earlier run left under the figures' names go first."""
    remove_figures(out, [figure.stem for figure in paper.figures])
    shown_tables: list[RenderableType] = []
    for figure in paper.figures:
        shown = [v for v in figure.variants if v in doc]
        if not shown:
            continue
        parts = _parts(figure, shown, doc)
        paper_average = doc["paper"]["average"].get(figure.metric)
        rows = figure_rows(doc, figure.metric, shown, paper_average, paper.workload_names)
        shown_tables.append(rich_table(figure.title, shown, rows))
        write_csv(out / f"{figure.stem}.csv", shown, rows)
        draw(paper, figure, doc, out)
        for part in parts:
            write_csv(out / f"{figure.stem}_{part}.csv", shown,
                      figure_rows(doc, part, shown, None, paper.workload_names))  # fmt: skip
        if parts:
            columns = [*(p.split("_", 1)[1] for p in parts), "total"]
            heading = f"{figure.title.split(':')[0]}: average split"
            split = split_rows(doc, shown, parts, figure.metric)
            shown_tables.append(rich_table(heading, columns, split, "system"))
    return shown_tables


def draw(paper: Paper, figure: Figure, doc: dict[str, Any], out: Path) -> Drawing | None:
    """``figure`` of ``doc`` as ``{stem}.pdf`` and ``{stem}.png`` in ``out``, with the paper's
    values where it gives them: its averages (when the document holds them: the runs covered
    its workloads) and its per-workload numbers for the workloads that ran. None when none of
    the figure's variants ran."""
    shown = [v for v in figure.variants if v in doc]
    if not shown:
        return None
    numbers = paper.numbers_for(doc["meta"]["switches"]).workloads.get(figure.metric, {})
    values = {w: numbers[w] for w in doc["meta"]["workloads"] if w in numbers}
    values["average"] = doc["paper"]["average"].get(figure.metric, {})
    return plots.bars(out / figure.stem, figure.title, figure.y_label, doc, shown,
                      figure.metric, _parts(figure, shown, doc), values, paper.workload_names,
                      plots.variant_colors(paper))  # fmt: skip


def _parts(figure: Figure, shown: list[str], doc: dict[str, Any]) -> list[str]:
    """The figure's stacked parts that some shown variant has."""
    return [p for p in figure.parts if any(p in m for v in shown for m in doc[v].values())]


def tables(paper: Paper, doc: dict[str, Any], out: Path) -> list[RenderableType]:
    """The paper's tables beyond its figures, then its statements with ours beside them and
    what its text says without a number."""
    shown = [_table(table, out) for table in (paper.tables(doc) if paper.tables else [])]
    statements = [(what, [ours, theirs]) for what, ours, theirs in claims(paper, doc)]
    if statements:
        title = f"{paper.name.upper()}: the paper's per-workload statements"
        shown.append(rich_table(title, ["ours", "paper"], statements, "statement"))
    notes = paper.numbers_for(doc["meta"]["switches"]).notes
    return [*shown, *(Text(f"  paper, {note}") for note in notes)]


def study_report(study: Study, result: dict[str, Any], out: Path) -> list[RenderableType]:
    """A study's tables (printed, and written when they have a file name) and its plots."""
    for figure in study.figures(result):
        plots.lines(out / figure.stem, figure)
    return [_table(table, out) for table in study.tables(result)]


def seeds(paper: Paper, doc: dict[str, Any], out: Path) -> list[RenderableType]:
    """Several seeds side by side: per compared metric, a table of each variant's average over
    the workloads for every seed, with their mean, lowest and highest and the paper's average
    where it gives one, as ``seeds_{metric}.csv`` and a bar chart with whiskers
    (``seeds_{metric}.pdf`` and ``.png``) with the paper's averages as stars."""
    summary = doc["across_seeds"]
    size = doc["meta"]["size"]
    seed_list = doc["meta"]["seeds"]
    first = doc["seeds"][str(seed_list[0])]
    colors = plots.variant_colors(paper)
    label = paper.name.upper()
    shown: list[RenderableType] = []
    for metric in SEED_METRICS:
        paper_average = first["paper"]["average"].get(metric)
        columns, rows = seed_rows(summary, metric, paper_average)
        title = f"{label} at {size}: {metric} averaged over the workloads, by seed"
        shown.append(rich_table(title, columns, rows, "system"))
        write_csv(out / f"seeds_{metric}.csv", columns, rows, "system")
        heading = f"{label} at {size}: {metric}, mean over seeds {min(seed_list)}-{max(seed_list)}"
        plots.seed_bars(out / f"seeds_{metric}", heading, paper.y_label(metric), summary,
                        metric, paper_average, paper.workload_names, colors)  # fmt: skip
    return shown


def _table(table: Table, out: Path) -> RenderableType:
    """A table to print, written as ``{stem}.csv`` (with all its rows) when it has a stem."""
    if table.stem is not None:
        rows = table.rows if table.csv_rows is None else table.csv_rows
        write_csv(out / f"{table.stem}.csv", table.columns, rows, table.first)
    return rich_table(table.title, table.columns, table.rows, table.first)


__all__ = ["draw", "figures", "seeds", "study_report", "tables"]
