"""The contract every registered paper honours, checked over the whole registry: a paper
registered is tested here without a line added. Its variants are valid systems for every
switch value it allows, its figures name only its variants and metrics its metrics function
produces, its numbers name its workloads and variants, its document and reports come out of a
tiny run, and its switches are options of its command."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
from typer.testing import CliRunner

from ndpsim.cli.main import app
from ndpsim.errors import ConfigError
from ndpsim.experiments.paper import Figure, LineFigure, get_paper, papers, register
from ndpsim.experiments.runner import run_experiment
from ndpsim.reports import reproduction
from ndpsim.systems import load_system_config
from ndpsim.workloads import get_workload

PAPERS = list(papers().values())
each_paper = pytest.mark.parametrize("paper", PAPERS, ids=[p.name for p in PAPERS])
#: The workload the contract runs every paper's systems on: the quickest of the suite.
WORKLOAD = "vadd"


def _switch_settings(paper):
    """The switch values to build the variants with: the defaults, then each allowed value of
    every switch that lists them."""
    yield {}
    for s in paper.switches:
        for value in s.choices:
            yield {s.name: value}


@each_paper
def test_a_paper_builds_every_variant_it_names_in_its_order(paper):
    built = [v.name for v in paper.build_variants(**paper.switch_values({}))]
    assert built == list(paper.variant_names)
    assert len(set(built)) == len(built)
    assert "baseline" in built  # --variants always adds it; every metric is relative to it
    assert not set(paper.derived_variants) & set(built)


@each_paper
def test_a_paper_s_variants_load_as_valid_systems_for_every_allowed_switch_value(paper):
    for setting in _switch_settings(paper):
        for variant in paper.variants(**setting):
            load_system_config(variant.preset, variant.overrides)


@each_paper
def test_a_paper_s_workloads_are_in_the_suite(paper):
    for name in paper.workloads:
        get_workload(name)
    assert set(paper.workload_names) <= set(paper.workloads)


@each_paper
def test_a_paper_s_figures_name_only_its_variants(paper):
    known = {*paper.variant_names, *paper.derived_variants}
    for figure in paper.figures:
        assert set(figure.variants) <= known, figure.stem
        assert figure.y_label, figure.stem
    stems = [f.stem for f in paper.figures]
    assert len(set(stems)) == len(stems)


@each_paper
def test_a_paper_s_numbers_name_its_workloads_and_variants(paper):
    known = {*paper.variant_names, *paper.derived_variants}
    every = [paper.numbers, *(n for s in paper.switches for n in s.numbers.values())]
    for numbers in every:
        for by_workload in numbers.workloads.values():
            assert set(by_workload) <= set(paper.workloads)
            for by_variant in by_workload.values():
                assert set(by_variant) <= known


@each_paper
def test_a_switch_refuses_a_value_it_does_not_allow_naming_its_option(paper):
    for s in paper.switches:
        bad = "none of these" if s.type is str else -1
        if s.choices or s.positive:
            with pytest.raises(ConfigError, match=s.option):
                paper.variants(**{s.name: bad})


@each_paper
def test_a_paper_s_switches_and_studies_are_options_of_its_command(paper):
    result = CliRunner().invoke(app, ["reproduce", paper.name, "--help"],
                                env={"COLUMNS": "200"})  # fmt: skip
    assert result.exit_code == 0, result.output
    for option in [*(s.option for s in paper.switches), *(f"--{s.key}" for s in paper.studies)]:
        assert option in result.output
    assert paper.summary.split(":")[0] in result.output


def test_reproduce_lists_every_registered_paper():
    result = CliRunner().invoke(app, ["reproduce", "--help"], env={"COLUMNS": "200"})
    assert result.exit_code == 0
    for paper in PAPERS:
        assert paper.name in result.output


@pytest.fixture(scope="module", params=PAPERS, ids=[p.name for p in PAPERS])
def ran(request):
    """A paper with every one of its systems run on :data:`WORKLOAD` at tiny, seed 0."""
    paper = request.param
    return paper, run_experiment([WORKLOAD], "tiny", 0, paper.variants(), processes=1)


def test_a_paper_s_figures_show_metrics_its_metrics_function_produces(ran):
    paper, runs = ran
    per_variant = paper.metrics(runs)
    for figure in paper.figures:
        for variant in figure.variants:
            metrics = per_variant[variant][WORKLOAD]
            assert figure.metric in metrics, (figure.stem, variant)
            if figure.parts:  # a misspelt part would leave the stack short of the total
                stacked = sum(metrics[p] for p in figure.parts if p in metrics)
                assert stacked == pytest.approx(metrics[figure.metric]), (figure.stem, variant)


def test_a_paper_s_document_survives_json_and_reports_come_out_of_it(ran, tmp_path):
    paper, runs = ran
    doc = paper.document(runs, "tiny", 0, paper.switch_values({}))
    assert json.loads(json.dumps(doc)) == doc
    assert doc["meta"]["experiment"] == paper.name and doc["meta"]["workloads"] == [WORKLOAD]
    assert set(paper.variant_names) <= set(doc) and "average" in doc["paper"]
    assert reproduction.figures(paper, doc, tmp_path)
    reproduction.tables(paper, doc, tmp_path)
    for figure in paper.figures:
        for suffix in ("pdf", "png"):
            assert (tmp_path / f"{figure.stem}.{suffix}").stat().st_size > 0


def test_a_figure_without_a_y_label_is_refused_naming_it():
    with pytest.raises(ConfigError, match="figure 'fig1': y_label must name the quantity"):
        Figure("fig1", "Figure 1", "speedup", ("baseline",), "  ")
    with pytest.raises(ConfigError, match="figure 'lines': y_label"):
        LineFigure("lines", "Figure 5", "accesses", "", {})


def test_a_paper_cannot_be_registered_twice_under_one_name():
    with pytest.raises(ConfigError, match="registered twice"):
        register(replace(PAPERS[0], workloads=(WORKLOAD,)))


def test_an_unknown_paper_is_refused_naming_the_registered_ones():
    with pytest.raises(ConfigError, match="unknown paper 'nope'; registered: ") as error:
        get_paper("nope")
    assert all(p.name in str(error.value) for p in PAPERS)
