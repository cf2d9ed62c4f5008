"""Saving, loading and validating traces."""

from __future__ import annotations

import zipfile

import numpy as np
import pytest

from ndpsim.errors import TraceFormatError
from ndpsim.ptx import load_traces, save_traces
from ndpsim.trace.trace import COLUMNS, Trace
from ndpsim.workloads import run_workload


@pytest.fixture(scope="module")
def bfs_traces():
    return run_workload("bfs", "tiny").traces


def test_a_saved_trace_loads_back_identically(tmp_path, bfs_traces):
    path = tmp_path / "bfs.npz"
    save_traces(path, bfs_traces)
    loaded = load_traces(path)
    assert len(loaded) == len(bfs_traces)
    for a, b in zip(bfs_traces, loaded, strict=True):
        assert a.info == b.info
        for name in COLUMNS:
            np.testing.assert_array_equal(getattr(a, name), getattr(b, name))
            assert getattr(a, name).dtype == getattr(b, name).dtype


def test_single_launch_save_and_load(tmp_path, bfs_traces):
    path = tmp_path / "one.npz"
    bfs_traces[0].save(path)
    assert Trace.load(path).num_warp_instructions == bfs_traces[0].num_warp_instructions
    save_traces(tmp_path / "two.npz", bfs_traces[:2])
    with pytest.raises(TraceFormatError, match="holds 2 launches"):
        Trace.load(tmp_path / "two.npz")


def test_corrupt_files_are_reported_with_their_problem(tmp_path, bfs_traces):
    garbage = tmp_path / "garbage.npz"
    garbage.write_bytes(b"not a zip at all")
    with pytest.raises(TraceFormatError, match="not a readable trace"):
        load_traces(garbage)

    good = tmp_path / "good.npz"
    save_traces(good, bfs_traces[:1])
    arrays = dict(np.load(good))
    missing = dict(arrays)
    del missing["launch0/addresses"]
    np.savez(tmp_path / "missing.npz", **missing)
    with pytest.raises(TraceFormatError, match="missing column 'launch0/addresses'"):
        load_traces(tmp_path / "missing.npz")

    wrong = dict(arrays)
    wrong["launch0/run_pc"] = wrong["launch0/run_pc"].astype(np.float64)
    np.savez(tmp_path / "wrong.npz", **wrong)
    with pytest.raises(TraceFormatError, match="'launch0/run_pc' is float64"):
        load_traces(tmp_path / "wrong.npz")

    short = dict(arrays)
    short["launch0/run_mask"] = short["launch0/run_mask"][:-1]
    np.savez(tmp_path / "short.npz", **short)
    with pytest.raises(TraceFormatError, match="different lengths"):
        load_traces(tmp_path / "short.npz")

    other = dict(arrays)
    other["header"] = np.array('{"format": "something-else", "version": 1}')
    np.savez(tmp_path / "other.npz", **other)
    with pytest.raises(TraceFormatError, match="expected 'ndpsim-trace'"):
        load_traces(tmp_path / "other.npz")

    truncated = tmp_path / "truncated.npz"
    truncated.write_bytes(good.read_bytes()[:200])
    with pytest.raises(TraceFormatError):
        load_traces(truncated)
    assert zipfile.is_zipfile(good)


def test_memory_records_point_inside_the_address_column(bfs_traces):
    for trace in bfs_traces:
        trace.validate()
        lanes = trace.memory_lanes()
        assert len(lanes) == len(trace.addresses)
        if trace.num_memory_instructions:
            first = trace.lane_addresses(0)
            assert len(first) == bin(int(trace.mem_mask[0])).count("1")


def test_concatenation_requires_consecutive_cta_ranges(bfs_traces):
    with pytest.raises(ValueError, match="consecutive"):
        Trace.concatenate([bfs_traces[0], bfs_traces[0]])
