"""Every plot of a reproduction, drawn one way: bars per workload and on average (a paper's
figures, and several seeds' means with whiskers from the lowest seed to the highest), and lines
(a study's ratios). Each variant has one colour in all of its paper's plots
(:func:`variant_colors`), so a reader follows a system from figure to figure."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from ndpsim.experiments.paper import LineFigure, Paper

#: Matplotlib's default colours, then the light tones of its 20-colour palette: 20 variants
#: before a colour repeats.
PALETTE = (
    "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
    "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf",
    "#aec7e8", "#ffbb78", "#98df8a", "#ff9896", "#c5b0d5",
    "#c49c94", "#f7b6d2", "#c7c7c7", "#dbdb8d", "#9edae5",
)  # fmt: skip
HATCHES = ("", "//", "..", "xx", "\\\\", "oo")
#: Metrics normalized so that the baseline is 1, drawn with a line at 1.
NORMALIZED = ("speedup", "traffic", "energy")


def variant_colors(paper: Paper) -> dict[str, str]:
    """The colour of each of ``paper``'s variants (systems, then derived ones), fixed by its
    place in the paper's list."""
    names = (*paper.variant_names, *paper.derived_variants)
    return {name: PALETTE[k % len(PALETTE)] for k, name in enumerate(names)}


@contextmanager
def _axes(path: Path, width_in: float, title: str, y_label: str) -> Iterator[Any]:
    """A figure's axes, titled, labelled and saved to ``path`` once drawn."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(width_in, 3.6))
    try:
        yield ax
        ax.set_title(title, fontsize=9)
        ax.set_ylabel(y_label, fontsize=8)
        fig.tight_layout()
        fig.savefig(path, dpi=120)
    finally:
        plt.close(fig)


def _offsets(groups: int, bars: int) -> tuple[float, list[list[float]]]:
    """The width of a bar and, per bar of a group, its x position in every group."""
    width = 0.8 / max(1, bars)
    return width, [[g + (k - (bars - 1) / 2) * width for g in range(groups)] for k in range(bars)]


def bars_png(path: Path, title: str, y_label: str, doc: dict[str, Any], variants: Sequence[str],
             metric: str, parts: Sequence[str], paper: Mapping[str, float] | None,
             labels: Mapping[str, str], colors: Mapping[str, str]) -> None:  # fmt: skip
    """A paper's figure: grouped bars per workload (stacked by ``parts`` when given), the
    paper's averages as markers on the average group. Workloads are named by ``labels``
    (default: upper case)."""
    groups = [*doc["meta"]["workloads"], "average"]
    width, xs = _offsets(len(groups), len(variants))
    full_title = (title + (f"  (stacked: {', '.join(parts)})" if parts else "")
                  + ("  * paper" if paper else ""))  # fmt: skip
    width_in = max(6, 1.1 * len(groups) * max(1, len(variants)) / 2)
    with _axes(path, width_in, full_title, y_label) as ax:
        for v, x in zip(variants, xs, strict=True):
            source = [doc.get(v, {}).get(w, {}) for w in groups[:-1]] + [doc["average"].get(v, {})]
            if parts:
                bottom = [0.0] * len(groups)
                for j, part in enumerate(parts):
                    heights = [m.get(part, 0.0) for m in source]
                    ax.bar(x, heights, width, bottom=bottom, color=colors[v],
                           hatch=HATCHES[j % len(HATCHES)], edgecolor="black", linewidth=0.3,
                           label=v if j == 0 else None)  # fmt: skip
                    bottom = [b + h for b, h in zip(bottom, heights, strict=True)]
            else:
                ax.bar(x, [m.get(metric, 0.0) for m in source], width, color=colors[v], label=v)
            if paper and paper.get(v) is not None:
                ax.plot(x[-1], paper[v], marker="*", color="black", markersize=9)
        ax.set_xticks(range(len(groups)), [labels.get(g, g.upper()) for g in groups])
        if metric in NORMALIZED:
            ax.axhline(1.0, color="gray", linewidth=0.6)
        ax.legend(fontsize=7, ncol=min(len(variants), 5))


def seeds_png(path: Path, title: str, y_label: str, summary: dict[str, dict[str, Any]],
              metric: str, labels: Mapping[str, str],
              colors: Mapping[str, str]) -> None:  # fmt: skip
    """Several seeds' results: grouped bars of ``metric`` per workload and on average, one bar
    per variant at its mean over the seeds, a whisker from the lowest seed to the highest."""
    shown = {v: by[metric] for v, by in summary.items() if metric in by}
    workloads = list(next(iter(shown.values()))["workloads"]) if shown else []
    width, xs = _offsets(len(workloads) + 1, len(shown))
    width_in = max(6, 0.6 * (len(workloads) + 1) * max(1, len(shown)))
    with _axes(path, width_in, title, y_label) as ax:
        for (v, m), x in zip(shown.items(), xs, strict=True):
            entries = [m["workloads"][w] for w in workloads] + [m]
            heights = [e["mean"] for e in entries]
            below = [e["mean"] - e["min"] for e in entries]
            above = [e["max"] - e["mean"] for e in entries]
            ax.bar(x, heights, width, yerr=[below, above], capsize=2, color=colors[v], label=v)
        names = [*(labels.get(w, w.upper()) for w in workloads), "average"]
        ax.set_xticks(range(len(workloads) + 1), names)
        ax.axhline(1.0, color="gray", linewidth=0.6)
        ax.legend(fontsize=7, ncol=min(len(shown), 5))


def lines_png(path: Path, figure: LineFigure) -> None:
    """A study's ratios against its x quantity, a line per label, with a line at 1 and the
    paper's bound dashed."""
    with _axes(path, 6, figure.title, figure.y_label) as ax:
        for label, (xs, ys) in figure.lines.items():
            ax.plot(xs, ys, marker=".", label=label)
        if figure.paper_bound is not None:
            value, label = figure.paper_bound
            ax.axhline(value, color="black", linestyle="--", linewidth=0.8, label=label)
        ax.axhline(1.0, color="gray", linewidth=0.6)
        ax.set_xlabel(figure.x_label)
        ax.legend(fontsize=7)


__all__ = ["PALETTE", "bars_png", "lines_png", "seeds_png", "variant_colors"]
