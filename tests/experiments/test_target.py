"""SNDP's Figure 5 study: the traffic of the first-instruction target NSU against the optimal
one, on our 8-HMC hypercube."""

from __future__ import annotations

import numpy as np
import pytest

from ndpsim.errors import ConfigError
from ndpsim.experiments.papers import sndp_target as target


def test_hops_on_the_hypercube_are_the_differing_address_bits():
    hops = target.hop_matrix()
    for a in range(8):
        for b in range(8):
            assert hops[a, b] == bin(a ^ b).count("1")


def test_the_study_is_deterministic_per_seed():
    one = target.target_study(range(1, 9), samples=2000, seed=7)
    two = target.target_study(range(1, 9), samples=2000, seed=7)
    other = target.target_study(range(1, 9), samples=2000, seed=8)
    assert one == two
    assert one != other


def test_a_point_does_not_depend_on_the_other_sizes_asked_for():
    alone = target.target_study([5], samples=2000, seed=1)
    among = target.target_study(range(1, 9), samples=2000, seed=1)
    assert alone[0] == among[4]


@pytest.mark.parametrize("lines", [1, 2, 4])
@pytest.mark.parametrize("topology", ["hypercube", "fully-connected"])
def test_the_optimal_target_never_moves_more_than_any_other(lines, topology):
    rng = np.random.default_rng(0)
    hops = target.hop_matrix(topology=topology)
    for n in (1, 2, 3, 7, 16):
        owners = rng.integers(0, 8, size=(3000, n))
        crossings = target.block_traffic(owners, hops, lines)
        assert np.all(crossings["optimal"] <= crossings["first"])
        assert np.all(crossings["optimal"] <= crossings["majority"])


def test_one_or_two_accesses_cost_the_same_under_every_policy():
    for point in target.target_study([1, 2], samples=5000, seed=0):
        assert point.ratio == pytest.approx(1.0)
    single = target.target_study([1], samples=100)[0]
    assert single.first_bytes == single.optimal_bytes == 0.0


def test_the_first_instruction_target_is_its_most_accessed_hmc_earliest_on_ties():
    hops = target.hop_matrix()
    # the first instruction (4 lines) touches HMC 3 twice, so the block runs there: the one
    # later access on HMC 0 crosses 2 links
    owners = np.array([[5, 3, 3, 6, 0], [6, 5, 6, 5, 7]])
    crossings = target.block_traffic(owners, hops, lines_per_instruction=4)
    expected_first = [hops[[5, 3, 3, 6, 0], 3].sum(), hops[[6, 5, 6, 5, 7], 6].sum()]
    assert list(crossings["first"]) == expected_first


def test_the_majority_target_breaks_ties_towards_the_hmc_reached_first():
    hops = target.hop_matrix()
    # HMCs 6 and 1 hold two accesses each; 6 is reached first
    owners = np.array([[6, 1, 1, 6, 2]])
    crossings = target.block_traffic(owners, hops)
    assert crossings["majority"][0] == hops[[6, 1, 1, 6, 2], 6].sum()


def test_the_paper_s_at_most_15_percent_holds_when_every_remote_access_costs_one_crossing():
    study = target.figure5(seed=0, samples=20_000, max_accesses=32)
    flat = study["studies"]["fully connected"]
    assert 1.10 < flat["max_ratio"] <= 1.16
    ratios = [p["ratio"] for p in flat["points"]]
    assert ratios[-1] < flat["max_ratio"]  # the gap shrinks as blocks grow
    hyper = study["studies"]["hypercube"]
    assert hyper["max_ratio"] > flat["max_ratio"]  # multi-hop routes widen the gap


@pytest.mark.parametrize("kwargs", [{"accesses": [0]}, {"samples": 0},
                                    {"lines_per_instruction": 0}])  # fmt: skip
def test_bad_study_parameters_are_refused(kwargs):
    with pytest.raises(ConfigError):
        target.target_study(**kwargs)


def test_the_figure5_table_prints_some_block_sizes_and_writes_them_all():
    study = target.figure5(seed=0, samples=200, max_accesses=9)
    [table] = target.tables(study)
    printed = [label for label, _ in table.rows]
    assert printed == ["1", "2", "3", "4", "5", "6", "8", "max (ours)", "max (paper)"]
    assert [label for label, _ in table.csv_rows][:9] == [str(n) for n in range(1, 10)]
    assert table.stem == "fig5_target_nsu" and table.rows[-1][1][0] == target.PAPER_MAX_RATIO
    [figure] = target.figures(study)
    assert list(figure.lines) == [f"first, {name}" for name, _, _ in target.STUDIES]
    assert figure.lines["first, hypercube"][0] == list(range(1, 10))
