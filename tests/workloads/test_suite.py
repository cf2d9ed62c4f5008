"""Contract tests run over every registered workload."""

from __future__ import annotations

import hashlib
import re

import numpy as np
import pytest

from ndpsim.workloads import SIZES, get_workload, run_workload, workload_names
from ndpsim.workloads.base import KERNEL_DIR

NAMES = workload_names()


@pytest.mark.parametrize("name", NAMES)
def test_interpreted_outputs_match_the_numpy_reference(name):
    run = run_workload(name, "tiny")
    assert run.check.passed, run.check.detail
    assert run.num_warp_instructions > 0


@pytest.mark.parametrize("name", NAMES)
def test_same_seed_gives_the_same_trace(name):
    first = run_workload(name, "tiny", seed=3)
    second = run_workload(name, "tiny", seed=3)
    assert len(first.traces) == len(second.traces)
    for a, b in zip(first.traces, second.traces, strict=True):
        assert np.array_equal(a.run_mask, b.run_mask)
        assert np.array_equal(a.all_addresses(), b.all_addresses())


@pytest.mark.parametrize("name", NAMES)
def test_workload_declares_every_size_and_a_kernel_module(name):
    cls = get_workload(name)
    assert set(SIZES) <= set(cls.sizes)
    module = cls("tiny").module_name
    assert (KERNEL_DIR / f"{module}.cu").exists()
    assert (KERNEL_DIR / f"{module}.ptx").exists()


def test_touched_bytes_count_every_line_of_global_data_once():
    run = run_workload("vadd", "tiny")
    n = get_workload("vadd").sizes["tiny"]["n"]
    # a, b and c: n floats each, every array starting on a page, so on a line boundary
    assert run.touched_bytes(128) == 3 * -(-n * 4 // 128) * 128
    assert run.touched_bytes(128) <= run.memory.size_bytes


def test_shared_memory_is_not_touched_data():
    # The reduction's partial sums go through shared memory, whose addresses start at 0: counted
    # as global, they would add lines outside every allocation.
    run = run_workload("rd", "tiny")
    allocated_lines = sum(-(-a.size_bytes // 128) for a in run.memory.allocations)
    assert run.touched_bytes(128) == allocated_lines * 128


@pytest.mark.parametrize("cu", sorted(KERNEL_DIR.glob("*.cu")), ids=lambda p: p.stem)
def test_committed_ptx_was_generated_from_the_current_source(cu):
    header = cu.with_suffix(".ptx").read_text().splitlines()[0]
    match = re.search(r"sha256=([0-9a-f]{64})", header)
    assert match, f"{cu.with_suffix('.ptx').name} lacks the header of scripts/regenerate_ptx.py"
    assert match.group(1) == hashlib.sha256(cu.read_bytes()).hexdigest(), (
        f"{cu.name} changed: run scripts/regenerate_ptx.py {cu.stem}"
    )
