"""Saving, loading and validating traces."""

from __future__ import annotations

import json
import zipfile
from dataclasses import asdict

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ndpsim.errors import TraceFormatError
from ndpsim.ptx import load_traces, save_traces
from ndpsim.trace.trace import (
    AFFINE,
    COLUMNS,
    Trace,
    compact_addresses,
    expand_addresses,
    popcount,
)
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
        explicit = trace.mem_offset != AFFINE
        assert popcount(trace.mem_mask[explicit]).sum() == len(trace.addresses)
        everything = trace.all_addresses()
        assert len(trace.memory_lanes()) == len(everything) == trace.num_memory_accesses
        first = np.cumsum(popcount(trace.mem_mask)) - popcount(trace.mem_mask)
        for record in range(trace.num_memory_instructions):
            lanes = trace.lane_addresses(record)
            assert len(lanes) == bin(int(trace.mem_mask[record])).count("1")
            np.testing.assert_array_equal(lanes, everything[first[record] :][: len(lanes)])


def test_bfs_keeps_its_gathers_explicit_and_its_regular_accesses_affine(bfs_traces):
    offsets = np.concatenate([t.mem_offset for t in bfs_traces])
    assert (offsets == AFFINE).any() and (offsets != AFFINE).any()


_record = st.tuples(
    st.integers(1, 2**32 - 1),  # lane mask
    st.booleans(),  # affine?
    st.integers(0, 2**40),  # base
    st.sampled_from([0, 1, 4, 8, -4, 128, 136, 4096]),  # stride
    st.integers(0, 2**32),  # seed for the scattered addresses
)


@settings(max_examples=60, deadline=None)
@given(st.lists(_record, min_size=1, max_size=12))
def test_affine_records_are_found_and_expand_back_exactly(records):
    masks = np.array([r[0] for r in records], dtype=np.uint32)
    counts = popcount(masks)
    parts = []
    for mask, affine, base, stride, seed in records:
        lanes = np.flatnonzero((mask >> np.arange(32)) & 1)
        if affine:
            parts.append(base + lanes * stride)
        else:
            parts.append(np.random.default_rng(seed).integers(0, 2**40, len(lanes)))
    addresses = np.concatenate(parts).astype(np.uint64)
    starts = np.cumsum(counts) - counts
    offsets, bases, strides, kept = compact_addresses(addresses, starts, masks)
    for (_, affine, *_), offset in zip(records, offsets, strict=True):
        assert offset == AFFINE or not affine
    assert len(kept) == counts[offsets != AFFINE].sum()
    np.testing.assert_array_equal(expand_addresses(masks, offsets, bases, strides, kept), addresses)


def test_version_1_files_load_with_every_record_explicit(tmp_path, bfs_traces):
    trace = bfs_traces[0]
    counts = popcount(trace.mem_mask)
    arrays = {f"launch0/{name}": getattr(trace, name) for name in COLUMNS}
    del arrays["launch0/mem_base"], arrays["launch0/mem_stride"]
    arrays["launch0/addresses"] = trace.all_addresses()
    arrays["launch0/mem_offset"] = np.cumsum(counts) - counts
    header = {"format": "ndpsim-trace", "version": 1, "launches": [asdict(trace.info)]}
    arrays["header"] = np.array(json.dumps(header))
    np.savez(tmp_path / "v1.npz", **arrays)
    (old,) = load_traces(tmp_path / "v1.npz")
    assert (old.mem_offset != AFFINE).all()
    np.testing.assert_array_equal(old.all_addresses(), trace.all_addresses())


def test_concatenation_requires_consecutive_cta_ranges(bfs_traces):
    with pytest.raises(ValueError, match="consecutive"):
        Trace.concatenate([bfs_traces[0], bfs_traces[0]])
