"""The one plotting module: every kind of figure a reproduction draws is ready for a paper (a
column or a page wide, labelled, its legend naming every variant, stacked part and the paper's
values, no colliding labels, PDF with embedded TrueType fonts and a 300 dpi PNG, the same bytes
every time), and a variant keeps its colour across its paper's figures."""

from __future__ import annotations

import random
import struct
from dataclasses import replace

import pytest
from matplotlib.text import Text
from matplotlib.transforms import Bbox

from ndpsim.errors import ConfigError
from ndpsim.experiments.paper import LineFigure, papers
from ndpsim.experiments.runner import run_experiment
from ndpsim.experiments.seeds import across_seeds
from ndpsim.reports import plots, reproduction

PAPERS = list(papers().values())
#: The workload every paper's systems run on for its figures: the quickest of the suite.
WORKLOAD = "vadd"
COLORS = {"baseline": plots.BASELINE_COLOR, "dyn": "#ff7f0e", "dyn-cache": "#2ca02c"}


def _doc(seed: int = 0, speedup: float = 1.0, energy: float = 1.0) -> dict:
    """A results document with the shape every reproduction writes: two workloads, a
    baseline and two NDP systems, energy stacked in two parts."""
    metrics = {"speedup": speedup, "energy": energy, "energy_sm": 0.75 * energy,
               "energy_dram": 0.25 * energy}  # fmt: skip
    base = {"speedup": 1.0, "energy": 1.0, "energy_sm": 0.75, "energy_dram": 0.25}
    return {
        "baseline": {"a": base, "b": base},
        "dyn": {"a": metrics, "b": metrics},
        "dyn-cache": {"a": metrics, "b": metrics},
        "average": {"baseline": base, "dyn": metrics, "dyn-cache": metrics},
        "meta": {"size": "tiny", "seed": seed, "workloads": ["a", "b"], "switches": {}},
    }


def _whole_doc(paper) -> dict:
    """A document of every variant of ``paper`` on all of its workloads, random values for
    every metric its figures show (stacked parts adding up to their total) and the paper's
    averages: the widest figures a reproduction draws, without simulating."""
    rng = random.Random(0)
    doc: dict = {}
    names = (*paper.variant_names, *paper.derived_variants)
    for v in names:
        doc[v] = {}
        for w in paper.workloads:
            m: dict[str, float] = {}
            for figure in paper.figures:
                m.update({p: rng.uniform(0.05, 0.6) for p in figure.parts})
                total = sum(m[p] for p in figure.parts)
                m[figure.metric] = total if figure.parts else rng.uniform(0.2, 1.8)
            doc[v][w] = m
    doc["average"] = {v: {k: sum(doc[v][w][k] for w in paper.workloads) / len(paper.workloads)
                          for k in doc[v][paper.workloads[0]]} for v in names}  # fmt: skip
    doc["paper"] = {"average": paper.numbers.averages}
    doc["meta"] = {"size": "small", "seed": 0, "workloads": list(paper.workloads),
                   "switches": paper.switch_values({})}  # fmt: skip
    return doc


def _png_size_px(path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data.startswith(b"\x89PNG\r\n\x1a\n"), path.name
    return struct.unpack(">II", data[16:24])


def assert_paper_ready(fig, stem, entries=(), paper=False, parts=(), ticks=True):
    """What every figure must be: its size, y label, legend (``entries``, the ``paper`` entry
    exactly when ``paper``, a hatched box per stacked part as hatched as its bars), text of
    at least 6 pt inside the figure, x tick labels apart, and both files, the PDF's fonts
    embedded as TrueType."""
    width_in = fig.get_figwidth()
    assert width_in in (plots.COLUMN_IN, plots.PAGE_IN), width_in
    ax = fig.axes[0]
    assert ax.get_ylabel().strip(), "no y label"
    assert "*" not in fig.get_suptitle()
    legend = ax.get_legend()
    shown = [t.get_text() for t in legend.get_texts()]
    assert set(entries) <= set(shown), (entries, shown)
    named = [t for t in shown if t == plots.PAPER_LABEL or t.startswith(plots.PAPER_LABEL + ":")]
    assert len(named) == paper, shown
    handles = dict(zip(shown, legend.legend_handles, strict=True))
    bar_hatches = {p.get_hatch() or "" for p in ax.patches}
    part_hatches = [handles[plots.part_label(p)].get_hatch() or "" for p in parts]
    assert len(set(part_hatches)) == len(parts) and set(part_hatches) <= bar_hatches
    fig.draw_without_rendering()  # at the figure's own dpi: saving the PNG drew it at 300
    renderer = fig.canvas.get_renderer()
    inside = fig.bbox.padded(1.0)
    for text in _drawn_texts(fig):
        assert text.get_fontsize() >= 6, text.get_text()
        box = text.get_window_extent(renderer)
        assert inside.contains(box.x0, box.y0) and inside.contains(box.x1, box.y1), (
            text.get_text())  # fmt: skip
    labels = [t for t in _in_view(ax.get_xticklabels(), ax.get_xlim(), 0) if t.get_text()]
    if ticks:
        assert labels
    assert not plots.overlapping([t.get_window_extent(renderer) for t in labels])
    png = stem.parent / f"{stem.name}.png"
    assert _png_size_px(png)[0] == round(width_in * plots.PNG_DPI)
    pdf = (stem.parent / f"{stem.name}.pdf").read_bytes()
    assert pdf.startswith(b"%PDF") and b"/FontFile2" in pdf and b"/Type3" not in pdf


def _in_view(labels, limits, axis):
    """The tick labels matplotlib draws: those of ticks within the axis's limits."""
    low, high = sorted(limits)
    return [t for t in labels if low <= t.get_position()[axis] <= high]


def _drawn_texts(fig):
    """Every text of the figure that is drawn: its tick labels within the axes' limits and
    every other visible, non-empty text."""
    ax = fig.axes[0]
    ticks = {*ax.get_xticklabels(), *ax.get_yticklabels()}
    shown = [*_in_view(ax.get_xticklabels(), ax.get_xlim(), 0),
             *_in_view(ax.get_yticklabels(), ax.get_ylim(), 1)]  # fmt: skip
    others = [t for t in fig.findobj(Text) if t not in ticks]
    return [t for t in (*shown, *others) if t.get_visible() and t.get_text().strip()]


def test_bars_name_every_variant_and_star_the_paper_s_values(tmp_path):
    doc = _doc(speedup=1.2)
    paper = {"average": {"dyn": 1.149}, "a": {"dyn-cache": 1.3}}
    fig = plots.bars(tmp_path / "bars", "Figure 7: speedup", "speedup (x)", doc,
                     ["baseline", "dyn", "dyn-cache"], "speedup", (), paper, {"a": "A-paper"},
                     COLORS)  # fmt: skip
    assert_paper_ready(fig, tmp_path / "bars", ["baseline", "dyn", "dyn-cache"], paper=True)
    assert fig.get_figwidth() == plots.COLUMN_IN  # six bars fit a column
    stars = [line for line in fig.axes[0].get_lines() if line.get_marker() == "*"]
    assert sorted(x for s in stars for x in s.get_xdata()) == pytest.approx([0.8 / 3, 2])
    assert [t.get_text() for t in fig.axes[0].get_xticklabels()] == ["A-paper", "B", "average"]


def test_stacked_bars_name_their_parts_hatches_and_the_paper(tmp_path):
    parts = ("energy_sm", "energy_dram")
    fig = plots.bars(tmp_path / "stacked", "Figure 10: energy", "energy (normalized)",
                     _doc(energy=0.9), ["baseline", "dyn"], "energy", parts,
                     {"average": {"dyn": 0.89}}, {}, COLORS)  # fmt: skip
    assert_paper_ready(fig, tmp_path / "stacked", ["baseline", "dyn", "sm", "dram"], paper=True,
                       parts=parts)  # fmt: skip


def test_bars_without_the_paper_s_values_have_no_paper_entry(tmp_path):
    fig = plots.bars(tmp_path / "bars", "speedup", "speedup (x)", _doc(), ["dyn"], "speedup",
                     (), {"average": {"baseline": 1.0}}, {}, COLORS)  # fmt: skip
    assert_paper_ready(fig, tmp_path / "bars", ["dyn"], paper=False)


def test_seed_bars_have_whiskers_and_the_paper_s_average(tmp_path):
    summary = across_seeds({s: _doc(s, speedup=1.0 + s / 10) for s in range(3)})
    fig = plots.seed_bars(tmp_path / "seeds", "speedup by seed", "speedup (x)", summary,
                          "speedup", {"dyn": 1.1}, {}, COLORS)  # fmt: skip
    assert_paper_ready(fig, tmp_path / "seeds", ["baseline", "dyn", "lowest-highest seed"],
                       paper=True)  # fmt: skip
    whiskers = [c.errorbar for c in fig.axes[0].containers if getattr(c, "errorbar", None)]
    assert len(whiskers) == 3  # one per variant
    texts = fig.axes[0].get_legend().get_texts()
    renderer = fig.canvas.get_renderer()
    at = {t.get_text(): t.get_window_extent(renderer) for t in texts}
    reading = sorted(at, key=lambda name: (-round(at[name].y0), at[name].x0))
    assert reading == ["baseline", "dyn", "dyn-cache", "lowest-highest seed", "paper"]


def test_equal_seeds_draw_no_negative_whisker(tmp_path):
    # 0.1 three times sums to 0.30000000000000004: a mean one ulp above the highest seed made
    # matplotlib refuse the negative whisker after a six-minute study
    summary = across_seeds({s: _doc(s, speedup=0.5, energy=0.1) for s in range(3)})
    fig = plots.seed_bars(tmp_path / "energy", "energy", "energy", summary, "energy", None, {},
                          COLORS)  # fmt: skip
    assert_paper_ready(fig, tmp_path / "energy", ["baseline", "dyn"])


def test_lines_name_every_line_and_the_paper_s_bound(tmp_path):
    lines = {"first": ([1, 2, 3], [1.0, 1.3, 1.2]), "majority": ([1, 2, 3], [1.0, 1.1, 1.05])}
    figure = LineFigure("lines", "ratios", "accesses", "ratio", lines, (1.15, "paper"))
    fig = plots.lines(tmp_path / "lines", figure)
    assert_paper_ready(fig, tmp_path / "lines", ["first", "majority"], paper=True)
    assert fig.axes[0].get_xlabel() == "accesses"


def test_many_bars_take_the_page_width_and_their_labels_turn_apart(tmp_path):
    doc = _doc()
    doc["meta"]["workloads"] = [f"workload-{k}" for k in range(16)]
    fig = plots.bars(tmp_path / "wide", "speedup", "speedup (x)", doc,
                     ["baseline", "dyn", "dyn-cache"], "speedup", (), {}, {}, COLORS)  # fmt: skip
    assert fig.get_figwidth() == plots.PAGE_IN
    assert_paper_ready(fig, tmp_path / "wide", ["baseline", "dyn", "dyn-cache"])
    assert fig.axes[0].get_xticklabels()[0].get_rotation() != 0


def test_long_titles_and_labels_fold_inside_a_column(tmp_path):
    title = "Figure 8: GPU no-issue cycles (normalized to the baseline's total), " * 2
    label = "GPU link bytes (normalized to the baseline's off-chip total) " * 2
    fig = plots.bars(tmp_path / "long", title, label, _doc(), ["dyn"], "speedup", (), {}, {},
                     COLORS)  # fmt: skip
    assert fig.get_figwidth() == plots.COLUMN_IN
    assert "\n" in fig.get_suptitle() and "\n" in fig.axes[0].get_ylabel()
    assert_paper_ready(fig, tmp_path / "long", ["dyn"])


def test_a_figure_is_the_same_bytes_every_time(tmp_path):
    for run in ("one", "two"):
        (tmp_path / run).mkdir()
        plots.bars(tmp_path / run / "fig", "energy", "energy (normalized)", _doc(energy=0.9),
                   ["baseline", "dyn"], "energy", ("energy_sm", "energy_dram"),
                   {"average": {"dyn": 0.89}}, {}, COLORS)  # fmt: skip
    for suffix in ("pdf", "png"):
        one, two = (tmp_path / run / f"fig.{suffix}" for run in ("one", "two"))
        assert one.read_bytes() == two.read_bytes(), suffix


def test_overlapping_tells_touching_labels_from_apart_ones():
    left, right = Bbox([[0, 0], [10, 5]]), Bbox([[12, 0], [20, 5]])
    assert not plots.overlapping([left, right])
    assert plots.overlapping([left, right], gap_px=3)
    assert plots.overlapping([right, Bbox([[-5, 1], [30, 2]]), left])


def test_each_variant_of_a_paper_has_its_own_fixed_colour():
    for paper in PAPERS:
        colors = plots.variant_colors(paper)
        names = (*paper.variant_names, *paper.derived_variants)
        assert list(colors) == list(names)
        assert len(set(colors.values())) == len(names)  # no two systems of a paper alike
        assert plots.variant_colors(paper) == colors


def test_the_baseline_has_one_colour_in_every_paper_and_no_other_variant_has_it():
    for paper in PAPERS:
        colors = plots.variant_colors(paper)
        assert colors[plots.BASELINE] == plots.BASELINE_COLOR
        others = [c for v, c in colors.items() if v != plots.BASELINE]
        assert plots.BASELINE_COLOR not in others


def test_a_paper_with_more_variants_than_colours_is_refused():
    paper = replace(PAPERS[0], variant_names=tuple(f"v{k}" for k in range(40)))
    with pytest.raises(ConfigError, match="tell at most 18 apart"):
        plots.variant_colors(paper)


FIGURES = [(p, f) for p in PAPERS for f in p.figures]


@pytest.mark.parametrize(("paper", "figure"), FIGURES,
                         ids=[f"{p.name}-{f.stem}" for p, f in FIGURES])  # fmt: skip
def test_each_figure_of_a_paper_is_ready_on_every_workload(paper, figure, tmp_path):
    doc = _whole_doc(paper)
    fig = reproduction.draw(paper, figure, doc, tmp_path)
    assert_paper_ready(fig, tmp_path / figure.stem, figure.variants,
                       _gives_values(paper, figure, doc), figure.parts)  # fmt: skip


def _gives_values(paper, figure, doc) -> bool:
    """Whether the paper gives a value of ``figure`` for a variant and workload ``doc`` ran,
    or an average the document holds."""
    averages = doc["paper"]["average"].get(figure.metric, {})
    by_workload = paper.numbers_for(doc["meta"]["switches"]).workloads.get(figure.metric, {})
    given = [averages, *(by_workload.get(w, {}) for w in doc["meta"]["workloads"])]
    return any(v in values for values in given for v in figure.variants)


@pytest.fixture(scope="module", params=PAPERS, ids=[p.name for p in PAPERS])
def tiny(request):
    """A paper's results document from every one of its systems run at tiny on one workload."""
    paper = request.param
    runs = run_experiment([WORKLOAD], "tiny", 0, paper.variants(), processes=1)
    return paper, paper.document(runs, "tiny", 0, paper.switch_values({}))


def test_a_paper_s_figures_from_a_tiny_run_are_ready_and_keep_their_colours(tiny, tmp_path):
    paper, doc = tiny
    colors = plots.variant_colors(paper)
    for figure in paper.figures:
        fig = reproduction.draw(paper, figure, doc, tmp_path)
        parts = [p for p in figure.parts if any(p in doc[v][WORKLOAD] for v in figure.variants)]
        assert_paper_ready(fig, tmp_path / figure.stem, figure.variants,
                           _gives_values(paper, figure, doc), parts)  # fmt: skip
        legend = fig.axes[0].get_legend()
        names = [t.get_text() for t in legend.get_texts()]
        patches = dict(zip(names, legend.legend_handles, strict=True))
        for variant in figure.variants:
            assert patches[variant].get_facecolor() == pytest.approx(_rgba(colors[variant]))


def _rgba(color: str) -> tuple[float, ...]:
    from matplotlib.colors import to_rgba

    return to_rgba(color)


def test_a_paper_s_studies_draw_ready_figures(tmp_path):
    for paper in PAPERS:
        for study in paper.studies:
            result = study.run(0)
            for figure in study.figures(result):
                fig = plots.lines(tmp_path / figure.stem, figure)
                assert_paper_ready(fig, tmp_path / figure.stem, list(figure.lines),
                                   paper=figure.paper_bound is not None)  # fmt: skip
