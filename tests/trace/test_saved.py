"""The saved-trace directory: a run written and read back whole, its manifest documented key by
key, and every way a directory can be wrong refused with the file and the key."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

from ndpsim.errors import TraceFormatError
from ndpsim.trace.saved import (
    MANIFEST,
    TRACES,
    VERSION,
    MemoryLayout,
    SavedAllocation,
    read_saved_trace,
    write_saved_trace,
)
from ndpsim.trace.trace import COLUMNS
from ndpsim.trace.work import registers_per_thread
from ndpsim.workloads import execute_workload, run_workload
from ndpsim.workloads.own_kernel import OwnKernel
from ndpsim.workloads.replay import load_replay, save_run
from tests.workloads.own_kernels import write_ptx

DOC = Path(__file__).resolve().parents[2] / "docs" / "traces.md"


@pytest.fixture(scope="module")
def bfs():
    return run_workload("bfs", "tiny", seed=2)


@pytest.fixture
def saved(tmp_path, bfs):
    return save_run(bfs, tmp_path / "bfs-tiny")


def _edit(directory: Path, change) -> None:
    path = directory / MANIFEST
    manifest = json.loads(path.read_text())
    change(manifest)
    path.write_text(json.dumps(manifest))


def test_a_saved_run_reads_back_as_it_ran(saved, bfs):
    trace = read_saved_trace(saved)
    assert (trace.workload, trace.size, trace.seed, trace.version) == ("bfs", "tiny", 2, VERSION)
    assert trace.parameters == bfs.workload.params
    assert (trace.check_passed, trace.check_detail) == (True, "matches reference")
    assert trace.launches == len(bfs.traces) and set(trace.provenance) >= {"git_revision"}
    replay = load_replay(trace)
    for got, want in zip(replay.traces, bfs.traces, strict=True):
        assert got.info.module == str(saved / "bfs.ptx")
        assert (got.info.kernel, got.info.grid, got.info.block) == (
            want.info.kernel, want.info.grid, want.info.block,
        )  # fmt: skip
        assert all(np.array_equal(getattr(got, c), getattr(want, c)) for c in COLUMNS)
        function = replay.module.function(got.info.kernel)
        assert registers_per_thread(function, got.info.module) == registers_per_thread(
            function, want.info.module
        )  # the ptxas counts were saved beside the PTX
    assert replay.memory.allocations == bfs.memory.allocations
    assert replay.memory.size_bytes == bfs.memory.size_bytes


def test_the_manifest_is_documented_key_by_key(saved):
    documented = set(re.findall(r"^\| `([a-z0-9_.\[\]]+)` \|", DOC.read_text(), re.M))

    def keys(node, prefix=""):
        for key, value in node.items():
            if isinstance(value, dict) and key not in ("parameters", "provenance"):
                yield from keys(value, f"{prefix}{key}.")
            elif isinstance(value, list):
                yield f"{prefix}{key}"
                for item in value[:1]:
                    yield from keys(item, f"{prefix}{key}[].")
            else:
                yield f"{prefix}{key}"

    written = set(keys(json.loads((saved / MANIFEST).read_text())))
    assert written <= documented, f"undocumented in docs/traces.md: {written - documented}"


@pytest.mark.parametrize(("change", "complaint"), [
    (lambda m: m.update(version=2),
     "saved-trace format version 2; this ndpsim reads version 1 only"),
    (lambda m: m.update(version="1"), "saved-trace format version '1'"),
    (lambda m: m.update(format="ramulator"), "format 'ramulator'; expected 'ndpsim-saved-trace'"),
    (lambda m: m["workload"].pop("seed"), "missing key 'workload.seed'"),
    (lambda m: m["workload"].update(seed=True), "key 'workload.seed' is True; expected an integer"),
    (lambda m: m["workload"].update(seed=-1), "key 'workload.seed' is -1; expected >= 0"),
    (lambda m: m["files"]["ptx"].update(path="../bfs.ptx"),
     "key 'files.ptx.path' is '../bfs.ptx'; expected a file name in the directory"),
    (lambda m: m["files"]["ptx"].update(path="other.ptx"),
     "other.ptx: missing (the manifest lists it as 'ptx')"),
    (lambda m: m["files"]["resources"].update(path="bfs.ptx", sha256=m["files"]["ptx"]["sha256"]),
     "key 'files.resources.path' is 'bfs.ptx'; the timing model reads 'bfs.resources.json'"),
    (lambda m: m["memory"].update(alignment_bytes=3000),
     "key 'memory.alignment_bytes' is 3000; expected a power of two >= 8"),
    (lambda m: m["memory"]["allocations"].reverse(),
     "allocation 1 ('cost') at 0x"),
    (lambda m: m["memory"].update(size_bytes=4096), "is not after the one before it within"),
    (lambda m: m["memory"]["allocations"][0].update(name=7),
     "key 'memory.allocations[0].name' is 7; expected a string"),
    (lambda m: m["workload"]["check"].update(passed="yes"),
     "key 'workload.check.passed' is 'yes'; expected true or false"),
    (lambda m: m.update(launches=0), "the saved run made no kernel launch"),
])  # fmt: skip
def test_a_bad_manifest_is_refused_naming_the_key(saved, change, complaint):
    _edit(saved, change)
    with pytest.raises(TraceFormatError) as error:
        read_saved_trace(saved)
    assert complaint in str(error.value)


def test_a_file_changed_after_saving_is_refused(saved):
    with (saved / TRACES).open("ab") as stream:
        stream.write(b"\0")
    with pytest.raises(TraceFormatError, match=r"traces\.npz: its SHA-256 differs"):
        read_saved_trace(saved)


@pytest.mark.parametrize(("make", "complaint"), [
    (lambda d: d.with_name("nowhere"), "not a saved-trace directory (not a directory)"),
    (lambda d: (d / MANIFEST).unlink() or d, "not a saved-trace directory (no manifest.json;"),
    (lambda d: (d / MANIFEST).write_text("{") and d, "manifest.json: not JSON"),
    (lambda d: (d / MANIFEST).write_text("[]") and d, "manifest.json: expected a JSON object"),
])  # fmt: skip
def test_what_is_not_a_saved_trace_is_refused(saved, make, complaint):
    with pytest.raises(TraceFormatError) as error:
        read_saved_trace(make(saved))
    assert complaint in str(error.value)


def test_launches_that_disagree_with_the_manifest_are_refused(saved, bfs):
    _edit(saved, lambda m: m.update(launches=3))
    with pytest.raises(TraceFormatError, match=rf"holds {len(bfs.traces)} launches; its manifest"):
        read_saved_trace(saved).load_traces()


def _rewrite(directory: Path, bfs, **changes) -> Path:
    """``bfs`` saved again with some of what describes it changed (digests kept consistent)."""
    saved = read_saved_trace(directory)
    given = {"workload": "bfs", "size": "tiny", "seed": 2, "parameters": {}, "check_passed": True,
             "check_detail": "matches reference", "ptx": saved.ptx, "memory": saved.memory,
             **changes}  # fmt: skip
    return write_saved_trace(directory.with_name("again"), bfs.traces, **given)


def test_an_access_outside_the_saved_memory_is_refused(saved, bfs):
    first = bfs.memory.allocations[0]
    only = SavedAllocation(first.name, first.address, first.size_bytes)
    memory = MemoryLayout(first.address, 4096, first.size_bytes, (only,))
    again = _rewrite(saved, bfs, memory=memory)
    with pytest.raises(TraceFormatError, match=r"launch 0: an access at 0x.* lies outside"):
        read_saved_trace(again).load_traces()


def test_allocations_that_cannot_be_laid_out_again_are_refused(saved, bfs):
    layout = read_saved_trace(saved).memory
    aligned = MemoryLayout(layout.base_address, 8192, layout.size_bytes, layout.allocations)
    again = _rewrite(saved, bfs, memory=aligned)
    with pytest.raises(
        TraceFormatError,
        match=r"allocation '\w+' was at 0x[0-9a-f]+; allocated "
        r"again in order it lands at 0x[0-9a-f]+ \(each .* next 8192-byte",
    ):
        load_replay(read_saved_trace(again))


def test_launches_of_a_kernel_the_saved_ptx_lacks_are_refused(saved, bfs, tmp_path):
    again = _rewrite(saved, bfs, ptx=write_ptx(tmp_path, "NOTHING"))
    with pytest.raises(TraceFormatError, match=r"launch 0 runs kernel 'bfs_.*nothing.ptx does"):
        load_replay(read_saved_trace(again))


def test_an_own_kernel_run_saves_and_replays_too(tmp_path):
    run = execute_workload(OwnKernel(write_ptx(tmp_path, "WHERE3D"), None, "2,2", "8,4",
                                     ["buf:u32:128"]))  # fmt: skip
    replay = load_replay(read_saved_trace(save_run(run, tmp_path / "where3d")))
    assert replay.saved.check_detail == "not checked: an own kernel has no reference"
    assert replay.traces[0].info.grid == (2, 2, 1) and replay.module.path.endswith("where3d.ptx")


def test_the_python_example_of_the_document_runs_as_written(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (code,) = re.findall(r"^```python\n(.*?)^```", DOC.read_text(), re.S | re.M)
    exec(compile(code, str(DOC), "exec"), {"__name__": "docs_example"})
    assert capsys.readouterr().out.endswith(" ps\n")
    assert read_saved_trace(tmp_path / "traces" / "vadd-tiny").workload == "vadd"
