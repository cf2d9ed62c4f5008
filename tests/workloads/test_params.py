"""Workload parameters chosen one by one (``--param KEY=VALUE``): each value converted to its
parameter's type or refused in one line naming what is accepted, and a run with them runs what
they say."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from ndpsim.errors import WorkloadError
from ndpsim.hostmemory import growth_bounded
from ndpsim.simt.limits import Limits
from ndpsim.workloads import get_workload, run_workload
from ndpsim.workloads.params import (
    MAX_INTEGER,
    params_for_each,
    parse_param_options,
    shown,
    with_params,
)

DECLARED = {"n": 5_000, "cells": (4, 4, 4), "rate": 0.5, "exact": True, "mode": "fast"}


def test_options_split_at_the_first_equals_sign():
    assert parse_param_options(["n=1000", " mode = a=b "]) == {"n": "1000", "mode": "a=b"}


@pytest.mark.parametrize(
    ("options", "complaint"),
    [(["n"], "expected KEY=VALUE"), (["=3"], "expected KEY=VALUE"),
     (["n=1", "n=2"], "'n' is given twice")],
)  # fmt: skip
def test_a_malformed_option_is_refused(options, complaint):
    with pytest.raises(WorkloadError, match=complaint):
        parse_param_options(options)


def test_values_take_their_parameters_types_from_strings_and_from_values():
    strings = with_params("w", DECLARED, {"n": "1_000", "cells": "(8, 2,1)", "rate": "2e-1",
                                          "exact": "False", "mode": "slow"})  # fmt: skip
    values = with_params("w", DECLARED, {"n": 1000, "cells": [8, 2, 1], "rate": 0.2,
                                         "exact": False, "mode": "slow"})  # fmt: skip
    assert strings == values == {"n": 1000, "cells": (8, 2, 1), "rate": 0.2, "exact": False,
                                 "mode": "slow"}  # fmt: skip
    assert with_params("w", DECLARED, {}) == DECLARED


@pytest.mark.parametrize(
    ("given", "complaint"),
    [
        ({"m": "3"}, r"workload 'w' has no parameter 'm'; it takes n, cells, rate, exact, mode"),
        ({"n": "1.5"}, "parameter 'n': expected an integer, got '1.5'"),
        ({"n": True}, "expected an integer"),
        ({"n": "0"}, r"from 1 to 2,147,483,647 \(the kernels take 32-bit sizes\), got 0"),
        ({"n": str(MAX_INTEGER + 1)}, "from 1 to"),
        ({"cells": "4,4"}, "parameter 'cells': expected 3 integers separated by commas"),
        ({"cells": "4,x,4"}, "expected an integer, got 'x'"),
        ({"rate": "nan"}, "expected a finite number"),
        ({"exact": "yes"}, "expected true or false"),
        ({"mode": 3}, "expected a string"),
    ],
)  # fmt: skip
def test_a_bad_value_is_a_one_line_error_saying_what_is_expected(given, complaint):
    with pytest.raises(WorkloadError, match=complaint):
        with_params("w", DECLARED, given)


@given(st.text(max_size=20), st.sampled_from(sorted(DECLARED)))
def test_any_text_converts_or_is_refused_as_a_workload_error(text, key):
    try:
        value = with_params("w", DECLARED, {key: text})[key]
    except WorkloadError:
        return
    assert type(value) is type(DECLARED[key])


@given(st.integers(1, MAX_INTEGER))
def test_every_allowed_integer_round_trips_through_its_text(n):
    chosen = with_params("w", DECLARED, {"n": str(n)})
    assert chosen["n"] == n and shown({"n": chosen["n"]}) == f"n={n}"


def test_a_command_over_several_workloads_gives_each_the_keys_it_has():
    declared = {"vadd": {"n": 1, "block": 2}, "bfs": {"nodes": 3, "block": 4}}
    assert params_for_each(declared, {"block": "64", "nodes": "9"}) == {
        "vadd": {"block": "64"}, "bfs": {"block": "64", "nodes": "9"}
    }  # fmt: skip
    with pytest.raises(WorkloadError, match=r"none of the workloads \(vadd, bfs\) has that "
                       "parameter; they take block, n, nodes"):  # fmt: skip
        params_for_each(declared, {"nodez": "9"})


def test_a_run_with_parameters_runs_what_they_say():
    run = run_workload("vadd", "tiny", params={"n": "3000", "block": 128})
    assert run.check.passed
    assert run.workload.params == {"n": 3000, "block": 128}
    assert run.workload.chosen == {"n": 3000, "block": 128}
    assert run.threads == 24 * 128  # ceil(3000 / 128) CTAs
    assert get_workload("vadd")("tiny").chosen == {}


def test_a_combination_the_workload_cannot_run_names_the_parameters():
    with pytest.raises(WorkloadError, match=r"workload 'fwt' \(tiny\) cannot run with --param "
                       r"log2_kernel=12: ValueError: "):  # fmt: skip
        run_workload("fwt", "tiny", params={"log2_kernel": 12})


def test_inputs_larger_than_the_device_budget_fail_before_they_are_made():
    # 50M floats per array: 200 MB each, against a 64 MiB budget; refused as the parameter's
    # error when NumPy asks for the memory, not after it took it
    with pytest.raises(WorkloadError, match=r"--param n=50000000: MemoryError"):
        run_workload("vadd", "tiny", params={"n": 50_000_000},
                     limits=Limits(device_bytes=64 << 20))  # fmt: skip


def test_a_bounded_block_refuses_growth_past_its_bound_and_restores_the_limit():
    import resource

    before = resource.getrlimit(resource.RLIMIT_AS)
    with pytest.raises(MemoryError), growth_bounded(32 << 20):
        np.ones(1 << 27)  # 1 GiB
    assert resource.getrlimit(resource.RLIMIT_AS) == before
    with growth_bounded(32 << 20):
        small = np.ones(1 << 20)  # 8 MiB
    assert small.sum() == 1 << 20
