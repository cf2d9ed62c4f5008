"""Turning an experiment's metrics into what a reader compares: one table per figure (rows:
workloads, then our average and the paper's; columns: variants), as Rich tables, CSV files and
PNG bar charts."""

from __future__ import annotations

import csv
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rich.table import Table

Rows = list[tuple[str, list[float | None]]]


def figure_rows(doc: dict[str, Any], metric: str, variants: Sequence[str],
                paper: dict[str, float] | None, labels: dict[str, str] | None = None,
                ) -> Rows:  # fmt: skip
    """(row label, value per variant): each workload (named by ``labels`` when given), our
    average, the paper's average."""
    workloads = doc["meta"]["workloads"]
    labels = labels or {}
    rows = []
    for w in workloads:
        rows.append((labels.get(w, w),
                     [doc.get(v, {}).get(w, {}).get(metric) for v in variants]))  # fmt: skip
    rows.append(("average (ours)", [doc["average"].get(v, {}).get(metric) for v in variants]))
    if paper:
        rows.append(("average (paper)", [paper.get(v) for v in variants]))
    return rows


def _fmt(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def rich_table(title: str, variants: Sequence[str], rows, first: str = "workload") -> Table:
    """On a narrow terminal a long header folds onto more lines rather than end in an ellipsis
    (several start alike: ``ratio-0.2``, ``ratio-0.4``), and no value is cut short."""
    table = Table(title=title, title_justify="left")
    table.add_column(first, overflow="fold")
    for v in variants:
        table.add_column(v, justify="right", overflow="fold", min_width=len(_fmt(1.0)))
    for label, values in rows:
        style = "bold" if label.startswith("average") else None
        table.add_row(label, *(_fmt(x) for x in values), style=style)
    return table


def remove_figures(out: Path, stems: Sequence[str]) -> None:
    """Delete the tables and plots an earlier run wrote to ``out`` under these figure names,
    so that a run over fewer variants or workloads does not leave another run's figures
    beside its own."""
    for stem in stems:
        for pattern in (f"{stem}.csv", f"{stem}.png", f"{stem}_*.csv"):
            for path in out.glob(pattern):
                path.unlink()


def write_csv(path: Path, variants: Sequence[str], rows, first: str = "workload") -> None:
    with path.open("w", newline="") as f:
        out = csv.writer(f)
        out.writerow([first, *variants])
        for label, values in rows:
            out.writerow([label, *("" if x is None else f"{x:.6g}" for x in values)])


def write_png(path: Path, title: str, doc: dict[str, Any], variants: Sequence[str],
              metric: str, parts: Sequence[str], paper: dict | None,
              labels: dict[str, str] | None = None) -> None:  # fmt: skip
    """Grouped bars per workload (stacked by ``parts`` when given), the paper's averages as
    markers on the average group. Workloads are named by ``labels`` (default: upper case)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    groups = [*doc["meta"]["workloads"], "average"]
    width = 0.8 / max(1, len(variants))
    fig, ax = plt.subplots(figsize=(max(6, 1.1 * len(groups) * max(1, len(variants)) / 2), 3.6))
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    hatches = ["", "//", "..", "xx", "\\\\", "oo"]
    for k, v in enumerate(variants):
        xs = [g + (k - (len(variants) - 1) / 2) * width for g in range(len(groups))]
        source = [doc.get(v, {}).get(w, {}) for w in groups[:-1]] + [doc["average"].get(v, {})]
        color = colors[k % len(colors)]
        if parts:
            bottom = [0.0] * len(groups)
            for j, part in enumerate(parts):
                heights = [m.get(part, 0.0) for m in source]
                ax.bar(xs, heights, width, bottom=bottom, color=color,
                       hatch=hatches[j % len(hatches)], edgecolor="black", linewidth=0.3,
                       label=f"{v}" if j == 0 else None)  # fmt: skip
                bottom = [b + h for b, h in zip(bottom, heights, strict=True)]
        else:
            ax.bar(xs, [m.get(metric, 0.0) for m in source], width, color=color, label=v)
        if paper and paper.get(v) is not None:
            ax.plot(xs[-1], paper[v], marker="*", color="black", markersize=9)
    names = [(labels or {}).get(g, g.upper()) for g in groups]
    ax.set_xticks(range(len(groups)), names)
    ax.set_title(title + (f"  (stacked: {', '.join(parts)})" if parts else "")
                 + ("  * paper" if paper else ""), fontsize=9)  # fmt: skip
    if metric in ("speedup", "traffic", "energy"):
        ax.axhline(1.0, color="gray", linewidth=0.6)
    ax.legend(fontsize=7, ncol=min(len(variants), 5))
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


__all__ = ["figure_rows", "rich_table", "write_csv", "write_png"]
