"""Every plot of a reproduction, drawn one way and ready for a paper: bars per workload and on
average (a paper's figures, and several seeds' means with whiskers from the lowest seed to the
highest), and lines (a study's ratios).

A figure is column wide (3.5 in) when its bars fit there, else page wide (7 in), never wider;
its text is at least 6 pt, x labels turn until they no longer collide, and it is written as a
PDF with its fonts embedded (TrueType) and a 300 dpi PNG, byte for byte the same for the same
document. Each variant has one colour in all of its paper's figures, and the baseline one grey
in every paper (:func:`variant_colors`); the paper's values are black stars, named ``paper`` in
the legend, and the parts of a stacked bar are told apart by hatches the legend names."""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ndpsim.errors import ConfigError
from ndpsim.experiments.paper import LineFigure, Paper

if TYPE_CHECKING:
    from matplotlib.artist import Artist
    from matplotlib.axes import Axes
    from matplotlib.backend_bases import RendererBase
    from matplotlib.figure import Figure

#: The variant every paper normalizes to, and its colour in every paper's figures.
BASELINE = "baseline"
BASELINE_COLOR = "#8c8c8c"
#: Matplotlib's default colours, then the light tones of its 20-colour palette, greys left out
#: for the baseline: 18 variants besides it, each its own colour.
PALETTE = (
    "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
    "#8c564b", "#e377c2", "#bcbd22", "#17becf",
    "#aec7e8", "#ffbb78", "#98df8a", "#ff9896", "#c5b0d5",
    "#c49c94", "#f7b6d2", "#dbdb8d", "#9edae5",
)  # fmt: skip
HATCHES = ("", "////", "....", "xxxx", "\\\\\\\\", "oo")
#: Metrics normalized so that the baseline is 1, drawn with a line at 1.
NORMALIZED = ("speedup", "traffic", "energy")
#: The legend's name for the paper's values.
PAPER_LABEL = "paper"

#: A paper's column and its whole text width, the only widths a figure takes.
COLUMN_IN = 3.5
PAGE_IN = 7.0
#: The narrowest bar that stays readable (and its hatches visible) in print.
MIN_BAR_IN = 0.07
#: Of a figure's width, what its y axis and margins leave to the bars; of a group's slot, what
#: its bars fill.
PLOT_SHARE = 0.8
GROUP_FILL = 0.8
#: The figure's starting height, and the least height left to its axes once the title, legend
#: and labels are placed (the figure grows to keep it).
HEIGHT_IN = 2.5
MIN_AXES_IN = 1.5
PNG_DPI = 300
#: Font sizes in points; print stays legible down to MIN_FONT_PT.
FONT_PT = 7.0
TITLE_PT = 8.0
MIN_FONT_PT = 6.0
#: Matplotlib's settings for every figure: the sizes above, thin lines, and fonts embedded in
#: the PDF as TrueType (Type 42), never as Type 3 bitmaps.
RC: dict[str, Any] = {
    "font.size": FONT_PT,
    "axes.titlesize": TITLE_PT,
    "axes.labelsize": FONT_PT,
    "xtick.labelsize": FONT_PT,
    "ytick.labelsize": FONT_PT,
    "legend.fontsize": FONT_PT,
    "figure.titlesize": TITLE_PT,
    "pdf.fonttype": 42,
    "ps.fonttype": 42,
    "axes.linewidth": 0.6,
    "hatch.linewidth": 0.5,
    "lines.linewidth": 1.0,
}
#: No creation time in the PDF, so that one document always gives the same bytes.
PDF_METADATA = {"CreationDate": None}
#: Tick label turns (degrees) and sizes tried, in order, until no two labels collide.
TICK_LAYOUTS = ((0, FONT_PT), (45, FONT_PT), (90, FONT_PT), (90, MIN_FONT_PT))
#: Points kept clear between two tick labels, and around the figure's text.
GAP_PT = 1.0


def variant_colors(paper: Paper) -> dict[str, str]:
    """The colour of each of ``paper``'s variants (systems, then derived ones): the baseline
    grey, as in every paper, the others by their place in the paper's list, no two alike."""
    names = (*paper.variant_names, *paper.derived_variants)
    others = [name for name in names if name != BASELINE]
    if len(others) > len(PALETTE):
        raise ConfigError(f"paper {paper.name!r} has {len(others)} variants besides the "
                          f"baseline; its figures tell at most {len(PALETTE)} apart by "
                          "colour")  # fmt: skip
    colors = dict(zip(others, PALETTE, strict=False))
    return {name: BASELINE_COLOR if name == BASELINE else colors[name] for name in names}


def bars(stem: Path, title: str, y_label: str, doc: dict[str, Any], variants: Sequence[str],
         metric: str, parts: Sequence[str], paper: Mapping[str, Mapping[str, float]],
         labels: Mapping[str, str], colors: Mapping[str, str]) -> Figure:  # fmt: skip
    """A paper's figure as ``{stem}.pdf`` and ``{stem}.png``: grouped bars per workload and on
    average (stacked by ``parts`` when given), the paper's values ``{workload or "average":
    {variant: value}}`` as stars. Workloads are named by ``labels`` (default: upper case)."""
    workloads = list(doc["meta"]["workloads"])
    groups = [*workloads, "average"]
    sources = {v: [doc.get(v, {}).get(w, {}) for w in workloads] + [doc["average"].get(v, {})]
               for v in variants}  # fmt: skip
    stacks = {v: [[m.get(p, 0.0) for m in sources[v]] for p in parts or (metric,)]
              for v in variants}  # fmt: skip
    points = {v: [paper.get(g, {}).get(v) for g in groups] for v in variants}
    names = [labels.get(w, w.upper()) for w in workloads] + ["average"]
    with _figure(_width_in(len(groups) * len(variants))) as (fig, ax):
        drawn = _grouped_bars(ax, len(groups), stacks, None, points, colors)
        handles = [_variant_handles(variants, colors),
                   [*_part_handles(parts), *_paper_handles(drawn)]]  # fmt: skip
        if metric in NORMALIZED:
            ax.axhline(1.0, color="gray", linewidth=0.6, zorder=1)
        _finish(fig, ax, stem, title, y_label, names, handles)
    return fig


def seed_bars(stem: Path, title: str, y_label: str, summary: dict[str, dict[str, Any]],
              metric: str, paper: Mapping[str, float] | None, labels: Mapping[str, str],
              colors: Mapping[str, str]) -> Figure:  # fmt: skip
    """Several seeds' results as ``{stem}.pdf`` and ``{stem}.png``: grouped bars of ``metric``
    per workload and on average, one bar per variant at its mean over the seeds with a whisker
    from the lowest seed to the highest, the paper's averages as stars."""
    shown = {v: by[metric] for v, by in summary.items() if metric in by}
    workloads = list(next(iter(shown.values()))["workloads"]) if shown else []
    entries = {v: [m["workloads"][w] for w in workloads] + [m] for v, m in shown.items()}
    stacks = {v: [[e["mean"] for e in es]] for v, es in entries.items()}
    # a mean may lie an ulp outside its seeds' range (0.1 three times sums to 0.30000000000000004)
    whiskers = {v: ([max(0.0, e["mean"] - e["min"]) for e in es],
                    [max(0.0, e["max"] - e["mean"]) for e in es])
                for v, es in entries.items()}  # fmt: skip
    points = {v: [None] * len(workloads) + [(paper or {}).get(v)] for v in shown}
    names = [labels.get(w, w.upper()) for w in workloads] + ["average"]
    with _figure(_width_in((len(workloads) + 1) * len(shown))) as (fig, ax):
        drawn = _grouped_bars(ax, len(names), stacks, whiskers, points, colors)
        handles = [_variant_handles(list(shown), colors),
                   [*_whisker_handles(), *_paper_handles(drawn)]]  # fmt: skip
        ax.axhline(1.0, color="gray", linewidth=0.6, zorder=1)
        _finish(fig, ax, stem, title, y_label, names, handles)
    return fig


def lines(stem: Path, figure: LineFigure) -> Figure:
    """A study's ratios against its x quantity as ``{stem}.pdf`` and ``{stem}.png``: a line
    per label, a line at 1 and the paper's bound dashed."""
    from matplotlib.lines import Line2D

    with _figure(COLUMN_IN) as (fig, ax):
        handles: list[Artist] = []
        for k, (label, (xs, ys)) in enumerate(figure.lines.items()):
            color = PALETTE[k % len(PALETTE)]
            ax.plot(xs, ys, marker=".", markersize=3, color=color)
            handles.append(Line2D([], [], marker=".", markersize=3, color=color, label=label))
        if figure.paper_bound is not None:
            value, label = figure.paper_bound
            ax.axhline(value, color="black", linestyle="--", linewidth=0.8)
            handles.append(Line2D([], [], color="black", linestyle="--", linewidth=0.8,
                                  label=label))  # fmt: skip
        ax.axhline(1.0, color="gray", linewidth=0.6, zorder=1)
        ax.set_xlabel(figure.x_label)
        _finish(fig, ax, stem, figure.title, figure.y_label, None, [handles])
    return fig


def _width_in(bar_count: int) -> float:
    """Column width when every bar can be :data:`MIN_BAR_IN` wide there, else page width."""
    fits = bar_count * MIN_BAR_IN <= COLUMN_IN * PLOT_SHARE * GROUP_FILL
    return COLUMN_IN if fits else PAGE_IN


@contextmanager
def _figure(width_in: float) -> Iterator[tuple[Figure, Axes]]:
    """A figure and its axes, ``width_in`` wide, drawn with :data:`RC` on the Agg canvas (no
    pyplot: nothing global is left behind)."""
    import matplotlib
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    with matplotlib.rc_context(RC):
        fig = Figure(figsize=(width_in, HEIGHT_IN), layout="constrained")
        FigureCanvasAgg(fig)
        yield fig, fig.add_subplot()


def _grouped_bars(ax: Axes, groups: int, stacks: Mapping[str, Sequence[Sequence[float]]],
                  whiskers: Mapping[str, tuple[list[float], list[float]]] | None,
                  points: Mapping[str, Sequence[float | None]],
                  colors: Mapping[str, str]) -> bool:  # fmt: skip
    """Per variant, a bar in each of the ``groups`` (stacked by its parts' heights, hatched in
    turn), with ``whiskers`` (below, above) when given and a star at each of ``points`` that
    is not None. Whether any star was drawn."""
    count = len(stacks)
    width = GROUP_FILL / max(1, count)
    drawn = False
    for k, (v, heights) in enumerate(stacks.items()):
        xs = [g + (k - (count - 1) / 2) * width for g in range(groups)]
        bottom = [0.0] * len(xs)
        for j, part in enumerate(heights):
            last = j == len(heights) - 1
            error = whiskers[v] if whiskers and last else None
            container = ax.bar(xs, part, width, bottom=bottom, color=colors[v],
                               hatch=HATCHES[j % len(HATCHES)], edgecolor="black",
                               linewidth=0.3, yerr=error, zorder=2,
                               error_kw={"elinewidth": 0.6, "capsize": 1.5, "capthick": 0.6},
                               )  # fmt: skip
            if j > 0:  # a part's base above zero (an empty top part's: the total) must not
                for patch in container:  # stop the axis's margin there
                    patch.sticky_edges.y.clear()
            bottom = [b + h for b, h in zip(bottom, part, strict=True)]
        at = [(x, y) for x, y in zip(xs, points[v], strict=True) if y is not None]
        if at:
            ax.plot(*zip(*at, strict=True), **_paper_style(), zorder=3)
            drawn = True
    ax.set_xlim(-0.5, groups - 0.5)
    return drawn


def _paper_style() -> dict[str, Any]:
    return {"marker": "*", "markersize": 7, "color": "black", "markeredgecolor": "white",
            "markeredgewidth": 0.4, "linestyle": "none"}  # fmt: skip


def _variant_handles(variants: Sequence[str], colors: Mapping[str, str]) -> list[Artist]:
    from matplotlib.patches import Patch

    return [Patch(facecolor=colors[v], edgecolor="black", linewidth=0.3, label=v)
            for v in variants]  # fmt: skip


def _part_handles(parts: Sequence[str]) -> list[Artist]:
    """A white box per stacked part, hatched as its part of every bar."""
    from matplotlib.patches import Patch

    return [Patch(facecolor="white", edgecolor="black", linewidth=0.3,
                  hatch=HATCHES[j % len(HATCHES)], label=part_label(p))
            for j, p in enumerate(parts)]  # fmt: skip


def part_label(part: str) -> str:
    """How the legend names a stacked part: without its metric's prefix, as the average split
    table does (``traffic_memory_to_memory``: ``memory to memory``)."""
    return part.split("_", 1)[-1].replace("_", " ")


def _whisker_handles() -> list[Artist]:
    from matplotlib.lines import Line2D

    return [Line2D([], [], color="black", marker="|", markersize=6, linestyle="none",
                   label="lowest-highest seed")]  # fmt: skip


def _paper_handles(drawn: bool) -> list[Artist]:
    from matplotlib.lines import Line2D

    return [Line2D([], [], **_paper_style(), label=PAPER_LABEL)] if drawn else []


def _finish(fig: Figure, ax: Axes, stem: Path, title: str, y_label: str,
            names: Sequence[str] | None, handles: Sequence[Sequence[Artist]],
            ) -> None:  # fmt: skip
    """The title folded to the figure's width, the legend between it and the axes in as many
    columns as fit, the x labels (``names``, one per group) turned until they do not collide,
    the axes kept at least :data:`MIN_AXES_IN` high and the y label folded to their height;
    then both files."""
    renderer = fig.canvas.get_renderer()  # type: ignore[attr-defined]
    gap_px = _px(fig, GAP_PT)
    width_px = fig.get_figwidth() * fig.dpi - 2 * gap_px
    fig.suptitle(_fold(title, TITLE_PT, width_px, renderer), fontsize=TITLE_PT)
    if names is not None:
        ax.set_xticks(range(len(names)), names)
    ax.tick_params(axis="x", length=2)
    ax.set_ylabel(y_label)
    _layout(fig)
    columns = _legend(fig, ax, handles, max(map(len, handles)), renderer)
    for rotation, size in TICK_LAYOUTS if names is not None else TICK_LAYOUTS[:1]:
        _turn(ax, rotation, size)
        _layout(fig)
        if not overlapping([t.get_window_extent(renderer) for t in ax.get_xticklabels()],
                           gap_px):  # fmt: skip
            break
    short_px = MIN_AXES_IN * fig.dpi - ax.get_window_extent(renderer).height
    if short_px > 0:
        fig.set_figheight(fig.get_figheight() + short_px / fig.dpi)
        _layout(fig)
    ax.set_ylabel(_fold(y_label, FONT_PT, ax.get_window_extent(renderer).height, renderer))
    _layout(fig)
    if _legend(fig, ax, handles, columns, renderer) != columns:  # the axes moved
        _layout(fig)
    fig.savefig(stem.parent / f"{stem.name}.pdf", format="pdf", metadata=PDF_METADATA)
    fig.savefig(stem.parent / f"{stem.name}.png", format="png", dpi=PNG_DPI)


def _layout(fig: Figure) -> None:
    """Place the axes and their decorations (constrained layout) without drawing the bars."""
    fig.get_layout_engine().execute(fig)  # type: ignore[union-attr]


def _px(fig: Figure, points: float) -> float:
    return points * fig.dpi / 72


def _legend(fig: Figure, ax: Axes, groups: Sequence[Sequence[Artist]], columns: int,
            renderer: RendererBase) -> int:  # fmt: skip
    """The legend centred above the axes, each of ``groups`` (the variants; the stacked parts
    and the paper's values) starting a row, in at most ``columns`` columns, as many as keep it
    inside the figure where the axes stand now, then as few as keep its rows (no row of one
    entry under full ones). The columns it took."""
    if not any(groups):
        return 0
    inside = fig.bbox.padded(-_px(fig, GAP_PT))
    box = ax.get_window_extent(renderer)
    centre = (box.x0 + box.x1) / 2
    room_px = 2 * min(centre - inside.x0, inside.x1 - centre)
    while True:
        legend = _place_legend(ax, groups, columns)
        if columns == 1 or legend.get_window_extent(renderer).width <= room_px:
            break
        columns -= 1

    def rows(c: int) -> int:
        return sum(math.ceil(len(g) / c) for g in groups)

    fewest = min(c for c in range(1, columns + 1) if rows(c) == rows(columns))
    if fewest != columns:
        _place_legend(ax, groups, fewest)
    return fewest


def _place_legend(ax: Axes, groups: Sequence[Sequence[Artist]], columns: int) -> Any:
    return ax.legend(handles=_row_major(_rows(groups, columns), columns), loc="lower center",
                     bbox_to_anchor=(0.5, 1.0), ncols=columns, frameon=False, handlelength=1.5,
                     columnspacing=1.0, handletextpad=0.4, borderaxespad=0.3)  # fmt: skip


def _rows(groups: Sequence[Sequence[Artist]], columns: int) -> list[Artist]:
    """The entries of ``groups`` in reading order, each group but the last filled up to whole
    rows with blank entries, so that the next starts a row."""
    from matplotlib.patches import Patch

    entries: list[Artist] = []
    for k, group in enumerate(g for g in groups if g):
        entries += group
        if k < len(groups) - 1:
            entries += [Patch(visible=False, label="") for _ in range(-len(group) % columns)]
    return entries


def _row_major(handles: Sequence[Artist], columns: int) -> list[Artist]:
    """``handles`` ordered so that a legend, which fills its columns one after the other (the
    first ``len % columns`` one entry longer), reads them along its rows."""
    rows, longer = divmod(len(handles), columns)
    sizes = [rows + (j < longer) for j in range(columns)]
    starts = [sum(sizes[:j]) for j in range(columns)]
    slots = [starts[j] + i for i in range(max(sizes)) for j in range(columns) if i < sizes[j]]
    ordered: list[Artist] = list(handles)
    for handle, slot in zip(handles, slots, strict=True):
        ordered[slot] = handle
    return ordered


def _turn(ax: Axes, rotation: float, size: float) -> None:
    """Set the x tick labels at ``rotation`` degrees and ``size`` points, under their tick."""
    for label in ax.get_xticklabels():
        label.set_rotation(rotation)
        label.set_fontsize(size)
        label.set_horizontalalignment("center" if rotation in (0, 90) else "right")
        label.set_rotation_mode("default" if rotation in (0, 90) else "anchor")


def overlapping(boxes: Sequence[Any], gap_px: float = 0.0) -> bool:
    """Whether two of ``boxes`` (display-space extents) overlap, or come closer than
    ``gap_px`` side by side."""
    return any(a.x1 + gap_px > b.x0 and b.x1 + gap_px > a.x0 and a.y1 > b.y0 and b.y1 > a.y0
               for k, a in enumerate(boxes) for b in boxes[k + 1:])  # fmt: skip


def _fold(text: str, size_pt: float, width_px: float, renderer: RendererBase) -> str:
    """``text`` broken between words into lines no wider than ``width_px`` at ``size_pt``
    (a word longer than the width keeps a line of its own)."""
    from matplotlib.font_manager import FontProperties

    font = FontProperties(size=size_pt)
    lines: list[str] = []
    line = ""
    for word in text.split():
        longer = f"{line} {word}" if line else word
        if line and renderer.get_text_width_height_descent(longer, font, False)[0] > width_px:
            lines.append(line)
            longer = word
        line = longer
    return "\n".join([*lines, line])


__all__ = ["BASELINE", "BASELINE_COLOR", "COLUMN_IN", "HATCHES", "PAGE_IN", "PALETTE",
           "PAPER_LABEL", "PNG_DPI", "bars", "lines", "overlapping", "part_label",
           "seed_bars", "variant_colors"]  # fmt: skip
