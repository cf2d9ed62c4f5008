"""The one plotting module: every kind of figure a reproduction draws, and a variant's colour
kept across its paper's figures."""

from __future__ import annotations

from ndpsim.experiments.paper import LineFigure, papers
from ndpsim.experiments.seeds import across_seeds
from ndpsim.reports import plots


def _doc(seed: int = 0, speedup: float = 1.0, energy: float = 1.0) -> dict:
    """A results document with the shape every reproduction writes: two workloads, a
    baseline and one NDP system, energy stacked in two parts."""
    metrics = {"speedup": speedup, "energy": energy, "energy_sm": 0.75 * energy,
               "energy_dram": 0.25 * energy}  # fmt: skip
    base = {"speedup": 1.0, "energy": 1.0, "energy_sm": 0.75, "energy_dram": 0.25}
    return {
        "baseline": {"a": base, "b": base},
        "dyn": {"a": metrics, "b": metrics},
        "average": {"baseline": base, "dyn": metrics},
        "meta": {"size": "tiny", "seed": seed, "workloads": ["a", "b"], "switches": {}},
    }


COLORS = {"baseline": "#1f77b4", "dyn": "#ff7f0e"}


def test_every_kind_of_figure_is_drawn(tmp_path):
    doc = _doc(speedup=1.2, energy=0.9)
    drawn = [tmp_path / name for name in ("bars.png", "stacked.png", "seeds.png", "lines.png")]
    plots.bars_png(drawn[0], "speedup", "speedup (x)", doc, ["baseline", "dyn"], "speedup", (),
                   {"dyn": 1.149}, {"a": "A-paper"}, COLORS)  # fmt: skip
    plots.bars_png(drawn[1], "energy", "energy (normalized)", doc, ["baseline", "dyn"],
                   "energy", ("energy_sm", "energy_dram"), None, {}, COLORS)  # fmt: skip
    summary = across_seeds({s: _doc(s, speedup=1.0 + s / 10) for s in range(3)})
    plots.seeds_png(drawn[2], "speedup by seed", "speedup (x)", summary, "speedup", {}, COLORS)
    lines = {"first": ([1, 2, 3], [1.0, 1.3, 1.2]), "majority": ([1, 2, 3], [1.0, 1.1, 1.05])}
    figure = LineFigure("lines", "ratios", "accesses", "ratio", lines, (1.15, "paper: at most"))
    plots.lines_png(drawn[3], figure)
    for path in drawn:
        assert path.read_bytes().startswith(b"\x89PNG"), path.name


def test_equal_seeds_draw_no_negative_whisker(tmp_path):
    # 0.1 three times sums to 0.30000000000000004: a mean one ulp above the highest seed made
    # matplotlib refuse the negative whisker after a six-minute study
    summary = across_seeds({s: _doc(s, speedup=0.5, energy=0.1) for s in range(3)})
    plots.seeds_png(tmp_path / "energy.png", "energy", "energy", summary, "energy", {}, COLORS)
    assert (tmp_path / "energy.png").stat().st_size > 0


def test_each_variant_of_a_paper_has_its_own_fixed_colour():
    for paper in papers().values():
        colors = plots.variant_colors(paper)
        names = (*paper.variant_names, *paper.derived_variants)
        assert list(colors) == list(names)
        assert len(set(colors.values())) == len(names)  # no two systems of a paper alike
        assert plots.variant_colors(paper) == colors
