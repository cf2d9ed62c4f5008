"""Every shipped system on every workload at ``tiny`` reproduces its golden result exactly."""

from __future__ import annotations

import json

import pytest

from tests.systems.goldens import GOLDEN_FILE, cases, golden_of

GOLDENS = json.loads(GOLDEN_FILE.read_text())


def test_the_goldens_cover_every_system_and_workload():
    assert sorted(GOLDENS) == sorted(f"{s}/{w}" for s, w in cases())


@pytest.mark.parametrize(("system", "workload"), cases(), ids=lambda c: c)
def test_a_run_reproduces_its_golden_result(system, workload):
    want = GOLDENS[f"{system}/{workload}"]
    got = golden_of(system, workload)
    assert got["summary"] == want["summary"]  # readable first: what moved
    assert got["sha256"] == want["sha256"], "a counter outside the summary changed"
