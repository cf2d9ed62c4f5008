"""Tables of results documents: rows of a label and a value per column, built from a document,
shown with Rich and written as CSV. A figure's table has a row per workload, then our average
and the paper's; its columns are the variants."""

from __future__ import annotations

import csv
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from rich.table import Table as RichTable

from ndpsim.experiments.paper import Rows


def figure_rows(doc: dict[str, Any], metric: str, variants: Sequence[str],
                paper: Mapping[str, float] | None, labels: Mapping[str, str] | None = None,
                ) -> Rows:  # fmt: skip
    """(row label, value per variant): each workload (named by ``labels`` when given), our
    average, the paper's average."""
    labels = labels or {}
    rows: Rows = []
    for w in doc["meta"]["workloads"]:
        rows.append((labels.get(w, w),
                     [doc.get(v, {}).get(w, {}).get(metric) for v in variants]))  # fmt: skip
    rows.append(("average (ours)", [doc["average"].get(v, {}).get(metric) for v in variants]))
    if paper:
        rows.append(("average (paper)", [paper.get(v) for v in variants]))
    return rows


def split_rows(doc: dict[str, Any], variants: Sequence[str], parts: Sequence[str],
               total: str) -> Rows:  # fmt: skip
    """A stacked figure's averages: (variant, [mean of each part..., mean total])."""
    return [(v, [doc["average"].get(v, {}).get(p) for p in (*parts, total)])
            for v in variants if v in doc["average"]]  # fmt: skip


def seed_rows(summary: dict[str, dict[str, Any]], metric: str,
              paper: Mapping[str, float] | None = None) -> tuple[list[str], Rows]:  # fmt: skip
    """A table of ``metric`` averaged over the workloads: a row per variant, a column per seed,
    then the mean, min and max over the seeds and the paper's average when given."""
    seeds = sorted({s for by in summary.values() if metric in by for s in by[metric]["per_seed"]})
    columns = [*(f"seed {s}" for s in seeds), "mean", "min", "max"]
    if paper:
        columns.append("paper")
    rows: Rows = []
    for v, by in summary.items():
        if metric not in by:
            continue
        m = by[metric]
        values = [*(m["per_seed"].get(s) for s in seeds), m["mean"], m["min"], m["max"]]
        if paper:
            values.append(paper.get(v))
        rows.append((v, values))
    return columns, rows


def _fmt(value: float | str | None) -> str:
    if value is None:
        return "-"
    return value if isinstance(value, str) else f"{value:.3f}"


def rich_table(title: str, columns: Sequence[str], rows: Rows, first: str = "workload",
               ) -> RichTable:  # fmt: skip
    """Rows labelled ``average ...`` or ``paper ...`` in bold. On a narrow terminal a long
    header folds onto more lines rather than end in an ellipsis (several start alike:
    ``ratio-0.2``, ``ratio-0.4``), and no value is cut short."""
    table = RichTable(title=title, title_justify="left")
    table.add_column(first, overflow="fold")
    for column in columns:
        table.add_column(column, justify="right", overflow="fold", min_width=len(_fmt(1.0)))
    for label, values in rows:
        style = "bold" if label.startswith(("average", "paper")) else None
        table.add_row(label, *(_fmt(x) for x in values), style=style)
    return table


def remove_figures(out: Path, stems: Sequence[str]) -> None:
    """Delete the tables and plots an earlier run wrote to ``out`` under these figure names,
    so that a run over fewer variants or workloads does not leave another run's figures
    beside its own."""
    for stem in stems:
        for pattern in (f"{stem}.csv", f"{stem}.pdf", f"{stem}.png", f"{stem}_*.csv"):
            for path in out.glob(pattern):
                path.unlink()


def write_csv(path: Path, columns: Sequence[str], rows: Rows, first: str = "workload") -> None:
    with path.open("w", newline="") as f:
        out = csv.writer(f)
        out.writerow([first, *columns])
        for label, values in rows:
            out.writerow([label, *("" if x is None else x if isinstance(x, str) else f"{x:.6g}"
                                   for x in values)])  # fmt: skip


__all__ = ["figure_rows", "remove_figures", "rich_table", "seed_rows", "split_rows", "write_csv"]
