"""A sweep's results drawn as one figure: a counter against a swept key, one line (or one bar
per group) for each value of a third column.

Rows that share an x and a hue (other seeds, workloads or keys not on the plot) are averaged,
with whiskers from the lowest to the highest of them, and the axis says so. A numeric x gives
lines, anything else grouped bars. The figure is written as PDF (fonts embedded) and PNG, at a
column's width (3.5 in) when it fits, else a page's (7 in).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ndpsim.errors import ConfigError

#: Widths of a figure in a paper: one column, the whole page.
COLUMN_IN, PAGE_IN = 3.5, 7.0
HEIGHT_IN = 2.6
#: The most bars a column-wide figure holds before it takes the page's width.
COLUMN_BARS = 12


def _numeric(values: Sequence[Any]) -> bool:
    return all(isinstance(v, int | float) and not isinstance(v, bool) for v in values)


def _groups(rows: Sequence[dict[str, Any]], x: str, y: str,
            hue: str | None) -> dict[Any, dict[Any, list[float]]]:  # fmt: skip
    """{hue value: {x value: [y values]}}, rows without a y left out."""
    out: dict[Any, dict[Any, list[float]]] = {}
    for row in rows:
        value = row[y]
        if value is None:
            continue
        out.setdefault(row[hue] if hue else None, {}).setdefault(row[x], []).append(value)
    return out


def _order(values: Sequence[Any]) -> list[Any]:
    """Distinct values sorted, numbers by value and the rest as text, empty ones last."""
    present = [v for v in dict.fromkeys(values) if v is not None]
    key = (lambda v: v) if _numeric(present) else str
    return sorted(present, key=key) + ([None] if None in values else [])


def sweep_plot(rows: Sequence[dict[str, Any]], x: str, y: str, hue: str | None,
               stem: Path) -> list[Path]:  # fmt: skip
    """Draw ``y`` against ``x`` for each ``hue`` over ``rows`` (dicts by column name), to
    ``stem``.pdf and ``stem``.png; the files written."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    groups = _groups(rows, x, y, hue)
    if not groups:
        raise ConfigError(f"--plot: no row has a value of {y!r} to plot")
    if not all(_numeric(v) for xs in groups.values() for v in xs.values()):
        raise ConfigError(
            f"--plot: {y!r} is not a number in every row; only numbers can be plotted"
        )
    hues = _order(list(groups))
    xs = _order([value for by_x in groups.values() for value in by_x])
    averaged = any(len(v) > 1 for by_x in groups.values() for v in by_x.values())
    lines = _numeric([v for v in xs if v is not None]) and None not in xs
    bars = len(xs) * len(hues)
    width = COLUMN_IN if lines or bars <= COLUMN_BARS else PAGE_IN
    with matplotlib.rc_context({"pdf.fonttype": 42, "ps.fonttype": 42, "font.size": 7}):
        fig, ax = plt.subplots(figsize=(width, HEIGHT_IN))
        try:
            step = 0.8 / len(hues)
            for k, group in enumerate(hues):
                by_x = groups[group]
                present = [v for v in xs if v in by_x]
                means = [sum(by_x[v]) / len(by_x[v]) for v in present]
                low = [m - min(by_x[v]) for m, v in zip(means, present, strict=True)]
                high = [max(by_x[v]) - m for m, v in zip(means, present, strict=True)]
                label = f"{hue} = {group}" if hue else None
                if lines:
                    ax.errorbar(present, means, yerr=[low, high] if averaged else None,
                                marker="o", markersize=3, linewidth=1, capsize=2,
                                label=label)  # fmt: skip
                else:
                    where = [xs.index(v) - 0.4 + step * (k + 0.5) for v in present]
                    ax.bar(where, means, step, yerr=[low, high] if averaged else None,
                           capsize=2, label=label)  # fmt: skip
            if not lines:
                ax.set_xticks(range(len(xs)), [str(v) for v in xs], rotation=30, ha="right")
            ax.set_xlabel(x)
            ax.set_ylabel(f"{y}\n(mean, whiskers min-max)" if averaged else y)
            if hue:
                ax.legend(fontsize=6, frameon=False)
            fig.tight_layout()
            stem.parent.mkdir(parents=True, exist_ok=True)
            written = [stem.parent / f"{stem.name}.pdf", stem.parent / f"{stem.name}.png"]
            fig.savefig(written[0], metadata={"CreationDate": None})
            fig.savefig(written[1], dpi=300, metadata={"Software": None})
        finally:
            plt.close(fig)
    return written


__all__ = ["COLUMN_IN", "PAGE_IN", "sweep_plot"]
