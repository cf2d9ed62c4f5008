"""Saving, loading and validating traces."""

from __future__ import annotations

import io
import json
import re
import struct
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
    NARROW,
    WIDE,
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


def test_memory_records_point_inside_their_address_columns(bfs_traces):
    for trace in bfs_traces:
        trace.validate()
        counts = popcount(trace.mem_mask)
        assert counts[trace.mem_form == NARROW].sum() == len(trace.lane_offsets)
        assert counts[trace.mem_form == WIDE].sum() == len(trace.addresses)
        everything = trace.all_addresses()
        assert len(trace.memory_lanes()) == len(everything) == trace.num_memory_accesses
        first = np.cumsum(counts) - counts
        for record in range(trace.num_memory_instructions):
            lanes = trace.lane_addresses(record)
            assert len(lanes) == counts[record]
            np.testing.assert_array_equal(lanes, everything[first[record] :][: len(lanes)])


def test_bfs_keeps_its_gathers_listed_and_its_regular_accesses_affine(bfs_traces):
    forms = np.concatenate([t.mem_form for t in bfs_traces])
    assert (forms == AFFINE).any() and (forms == NARROW).any()


_record = st.tuples(
    st.integers(1, 2**32 - 1),  # lane mask
    st.sampled_from(["affine", "near", "far"]),  # how the lanes' addresses are spread
    st.integers(0, 2**40),  # base
    st.sampled_from([0, 1, 4, 8, -4, 128, 136, 4096]),  # stride
    st.integers(0, 2**32),  # seed for the scattered addresses
)
_SPREAD = {"near": 2**20, "far": 2**40}


@settings(max_examples=60, deadline=None)
@given(st.lists(_record, min_size=1, max_size=12))
def test_records_take_their_compact_form_and_expand_back_exactly(records):
    masks = np.array([r[0] for r in records], dtype=np.uint32)
    counts = popcount(masks)
    parts = []
    for mask, spread, base, stride, seed in records:
        lanes = np.flatnonzero((mask >> np.arange(32)) & 1)
        if spread == "affine":
            parts.append(base + lanes * stride)
        else:
            rng = np.random.default_rng(seed)
            parts.append(base + rng.integers(0, _SPREAD[spread], len(lanes)))
    addresses = np.concatenate(parts).astype(np.uint64)
    columns = compact_addresses(addresses, np.cumsum(counts) - counts, masks)
    for (_, spread, *_), form in zip(records, columns["mem_form"], strict=True):
        if spread == "affine":
            assert form == AFFINE
        elif spread == "near":
            assert form in (AFFINE, NARROW)
    expanded = expand_addresses(
        masks,
        *(
            columns[name]
            for name in (
                "mem_form",
                "mem_offset",
                "mem_base",
                "mem_stride",
                "lane_offsets",
                "addresses",
            )
        ),
    )
    np.testing.assert_array_equal(expanded, addresses)


def test_version_1_files_load_with_every_address_listed(tmp_path, bfs_traces):
    trace = bfs_traces[0]
    counts = popcount(trace.mem_mask)
    arrays = {f"launch0/{name}": getattr(trace, name) for name in COLUMNS}
    for name in ("mem_form", "mem_base", "mem_stride", "lane_offsets"):
        del arrays[f"launch0/{name}"]
    arrays["launch0/addresses"] = trace.all_addresses()
    arrays["launch0/mem_offset"] = np.cumsum(counts) - counts
    header = {"format": "ndpsim-trace", "version": 1, "launches": [asdict(trace.info)]}
    arrays["header"] = np.array(json.dumps(header))
    np.savez(tmp_path / "v1.npz", **arrays)
    (old,) = load_traces(tmp_path / "v1.npz")
    assert (old.mem_form == WIDE).all()
    np.testing.assert_array_equal(old.all_addresses(), trace.all_addresses())


def test_concatenation_requires_consecutive_cta_ranges(bfs_traces):
    with pytest.raises(ValueError, match="consecutive"):
        Trace.concatenate([bfs_traces[0], bfs_traces[0]])


# ------------------------------------------------------------ archives numpy would trust
def _arrays(path) -> dict[str, np.ndarray]:
    with np.load(path) as data:
        return {name: data[name] for name in data.files}


def _header(arrays: dict) -> dict:
    return json.loads(str(arrays["header"]))


def _with_launch(arrays: dict, **changes) -> np.ndarray:
    header = _header(arrays)
    header["launches"][0].update(changes)
    return np.array(json.dumps(header))


@pytest.fixture
def saved(tmp_path, bfs_traces):
    path = tmp_path / "good.npz"
    save_traces(path, bfs_traces[:1])
    return _arrays(path)


@pytest.mark.parametrize(
    "change,complaint",
    [
        (lambda a: {"header": np.arange(3)}, "'header' is int64[1d], not a string"),
        (lambda a: {"header": np.array("[1, 2]")}, "corrupt header (expected an object"),
        (lambda a: {"header": np.array("[" * 100_000)}, "corrupt header (nested too deeply)"),
        (lambda a: {"header": np.array('{"version": ' + "1" * 5_000 + "}")},
         "corrupt header (Exceeds the limit"),
        (lambda a: {"header": np.array(json.dumps({**_header(a), "launches": 5}))},
         "corrupt header (expected an object with a 'launches' list)"),
        (lambda a: {"header": np.array(json.dumps({**_header(a), "launches": [5]}))},
         "launch 0: its header is not an object with the keys"),
        (lambda a: {"header": _with_launch(a, grid=[True, 1, 1])}, "launch 0: bad grid"),
        (lambda a: {"header": _with_launch(a, grid=[2**40, 1, 1])}, "launch 0: bad grid"),
        (lambda a: {"header": _with_launch(a, warps_per_cta=0)}, "bad warps_per_cta"),
        (lambda a: {"header": _with_launch(a, kernel=7)}, "bad kernel"),
        (lambda a: {"header": _with_launch(a, cta_end=10**6)}, "are not a range of its grid"),
        (lambda a: {"header": _with_launch(a, warps_per_cta=99)}, "99 warps per CTA of"),
        (lambda a: {"launch0/mem_offset": np.full_like(a["launch0/mem_offset"], 2**63 - 1),
                    "launch0/mem_form": np.full_like(a["launch0/mem_form"], NARROW)},
         "column 'mem_offset' points outside 'lane_offsets'"),
        (lambda a: {"launch0/run_warp": a["launch0/run_warp"] + 10**6},
         "column 'run_warp' has a warp outside this trace's warps"),
        (lambda a: {"launch0/mem_warp": a["launch0/mem_warp"] - 10**6},
         "column 'mem_warp' has a warp outside"),
        (lambda a: {"launch0/mem_kind": a["launch0/mem_kind"] + 9},
         "column 'mem_kind' has a value other than 0 (LOAD), 1 (STORE)"),
        (lambda a: {"launch0/mem_space": a["launch0/mem_space"] + 4}, "column 'mem_space'"),
        (lambda a: {"launch0/run_pc": a["launch0/run_pc"] - 10**6},
         "column 'run_pc' has a negative entry"),
    ],
)  # fmt: skip
def test_a_trace_whose_header_or_columns_would_crash_the_model_is_refused(
    tmp_path, saved, change, complaint
):
    path = tmp_path / "damaged.npz"
    np.savez(path, **{**saved, **change(saved)})
    with pytest.raises(TraceFormatError) as info:
        load_traces(path)
    assert str(path) in str(info.value) and complaint in str(info.value)


def test_an_npy_file_or_a_huge_header_is_refused_before_allocating(tmp_path, saved):
    npy = tmp_path / "one.npz"
    buffer = io.BytesIO()
    np.save(buffer, saved["launch0/run_pc"])
    npy.write_bytes(buffer.getvalue())
    with pytest.raises(
        TraceFormatError, match=re.escape("a single .npy array, not an .npz archive")
    ):
        load_traces(npy)
    huge = tmp_path / "huge.npz"
    header = b"{'descr': '<i4', 'fortran_order': False, 'shape': (1099511627776,), }\n"
    member = b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header + b"\0" * 16
    with zipfile.ZipFile(huge, "w") as archive:
        archive.writestr("header.npy", _member(saved["header"]))
        archive.writestr("launch0/run_warp.npy", member)
    with pytest.raises(TraceFormatError, match=re.escape(
        f"{huge}: member 'launch0/run_warp.npy': its header claims (1099511627776,) elements"
    )):  # fmt: skip
        load_traces(huge)


def test_a_column_of_python_objects_is_refused(tmp_path, saved):
    path = tmp_path / "objects.npz"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("header.npy", _member(saved["header"]))
        archive.writestr("launch0/run_warp.npy", _member(np.array([1, None], dtype=object)))
    with pytest.raises(
        TraceFormatError, match=re.escape("'launch0/run_warp.npy' holds Python objects")
    ):
        load_traces(path)


def _member(array: np.ndarray) -> bytes:
    buffer = io.BytesIO()
    np.save(buffer, array, allow_pickle=True)
    return buffer.getvalue()
