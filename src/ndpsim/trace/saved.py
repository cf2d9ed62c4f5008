"""The saved-trace directory: a workload run kept on disk, so that any system can replay it
(``ndpsim workloads run --save-traces``, ``ndpsim run --trace``, ``ndpsim dram-trace``).

A directory holds ``manifest.json`` (the format and its version; the workload, its size, seed
and parameters and how its outputs compared with the reference; the device memory's
allocations; every other file with its SHA-256; the code that wrote it), ``traces.npz`` (every
kernel launch in order, in the ``ndpsim-trace`` format of :mod:`ndpsim.trace.trace`), and a copy
of the PTX the kernels came from, with the ``.resources.json`` of the registers ptxas allocates
beside it when the run had one. docs/traces.md describes every key. A reader refuses a format
or version it does not know, a file whose digest differs from the manifest's, and a run
without a launch, each naming the file and the key.
"""

from __future__ import annotations

import hashlib
import json
import reprlib
import shutil
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from ndpsim.errors import TraceFormatError
from ndpsim.provenance import code_provenance, now_utc
from ndpsim.textfile import read_text
from ndpsim.trace.trace import MemorySpace, Trace, expand_addresses, load_traces, save_traces

FORMAT = "ndpsim-saved-trace"
VERSION = 1
MANIFEST = "manifest.json"
TRACES = "traces.npz"
#: Memory records whose addresses are checked at once (bounds the memory a check takes).
_RECORDS_PER_CHECK = 1 << 16


@dataclass(frozen=True)
class SavedAllocation:
    """A region of device memory the run allocated."""

    name: str
    address: int
    size_bytes: int


@dataclass(frozen=True)
class MemoryLayout:
    """Where the run's allocations lay: what the timing model needs of its device memory."""

    base_address: int
    alignment_bytes: int
    size_bytes: int  # from the base address to the end of the last allocation
    allocations: tuple[SavedAllocation, ...]


@dataclass(frozen=True)
class SavedTrace:
    """A saved-trace directory whose manifest has been read and whose files match it."""

    directory: Path
    version: int
    workload: str
    size: str
    seed: int
    parameters: dict[str, Any]
    check_passed: bool  # whether the outputs matched the reference
    check_detail: str  # how they compared
    launches: int
    memory: MemoryLayout
    ptx: Path  # the saved copy of the kernels' PTX
    provenance: dict[str, Any]

    def load_traces(self) -> list[Trace]:
        """The launches, in order, each naming the saved PTX as its module (where the timing
        model finds the ``.resources.json`` beside it), their addresses checked to lie in the
        saved device memory."""
        path = self.directory / TRACES
        traces = load_traces(path)
        if len(traces) != self.launches:
            raise TraceFormatError(
                f"{path}: holds {len(traces)} launches; its manifest says {self.launches}"
            )
        low = self.memory.base_address
        for i, trace in enumerate(traces):
            _check_addresses(trace, low, low + self.memory.size_bytes, f"{path} launch {i}")
        return [replace(t, info=replace(t.info, module=str(self.ptx))) for t in traces]


def write_saved_trace(
    directory: Path,
    traces: Sequence[Trace],
    *,
    workload: str,
    size: str,
    seed: int,
    parameters: dict[str, Any],
    check_passed: bool,
    check_detail: str,
    ptx: Path,
    memory: MemoryLayout,
) -> Path:
    """Write a run into ``directory`` (created if needed; a run saved there before is
    replaced). The manifest is written last, so a directory whose writing was interrupted has
    none and is refused."""
    directory.mkdir(parents=True, exist_ok=True)
    (directory / MANIFEST).unlink(missing_ok=True)
    files = {"traces": TRACES, "ptx": ptx.name}
    shutil.copyfile(ptx, directory / ptx.name)
    resources = ptx.with_suffix(".resources.json")
    if resources.is_file():
        shutil.copyfile(resources, directory / resources.name)
        files["resources"] = resources.name
    save_traces(directory / TRACES, traces)
    manifest = {
        "format": FORMAT,
        "version": VERSION,
        "workload": {
            "name": workload,
            "size": size,
            "seed": seed,
            "parameters": parameters,
            "check": {"passed": check_passed, "detail": check_detail},
        },
        "launches": len(traces),
        "memory": {
            "base_address": memory.base_address,
            "alignment_bytes": memory.alignment_bytes,
            "size_bytes": memory.size_bytes,
            "allocations": [
                {"name": a.name, "address": a.address, "size_bytes": a.size_bytes}
                for a in memory.allocations
            ],
        },
        "files": {
            role: {"path": name, "sha256": _sha256(directory / name)}
            for role, name in files.items()
        },
        "provenance": {**code_provenance(), "created": now_utc()},
    }
    (directory / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n")
    return directory


def read_saved_trace(directory: Path) -> SavedTrace:
    """The saved trace in ``directory``, its manifest and its files' digests checked (the
    launches themselves are read by :meth:`SavedTrace.load_traces`)."""
    if not directory.is_dir():
        raise TraceFormatError(f"{directory}: not a saved-trace directory (not a directory)")
    path = directory / MANIFEST
    if not path.is_file():
        raise TraceFormatError(
            f"{directory}: not a saved-trace directory (no {MANIFEST}; `ndpsim workloads run "
            "--save-traces DIR` writes them)"
        )
    try:
        data = json.loads(read_text(path, TraceFormatError))
    except (ValueError, RecursionError) as error:
        reason = str(error) if isinstance(error, ValueError) else "nested too deeply"
        raise TraceFormatError(f"{path}: not JSON ({reason[:120]})") from None
    manifest = _Manifest(data, path)
    form = data.get("format")
    if form != FORMAT:
        raise TraceFormatError(
            f"{path}: format {reprlib.repr(form)}; expected {FORMAT!r} (docs/traces.md)"
        )
    version = data.get("version")
    if type(version) is not int or version != VERSION:
        raise TraceFormatError(
            f"{path}: saved-trace format version {reprlib.repr(version)}; this ndpsim reads "
            f"version {VERSION} only (docs/traces.md)"
        )
    files = {role: manifest.file(role, directory) for role in ("traces", "ptx")}
    if manifest.has("files.resources"):
        files["resources"] = manifest.file("resources", directory)
        expected = files["ptx"].with_suffix(".resources.json").name
        if files["resources"].name != expected:
            raise TraceFormatError(
                f"{path}: key 'files.resources.path' is {files['resources'].name!r}; the "
                f"timing model reads {expected!r}, beside the PTX"
            )
    launches = manifest.count("launches")
    if launches == 0:
        raise TraceFormatError(
            f"{directory}: the saved run made no kernel launch; there is nothing to simulate"
        )
    return SavedTrace(
        directory=directory,
        version=version,
        workload=manifest.text("workload.name"),
        size=manifest.text("workload.size"),
        seed=manifest.count("workload.seed"),
        parameters=manifest.get("workload.parameters", dict, "an object"),
        check_passed=manifest.get("workload.check.passed", bool, "true or false"),
        check_detail=manifest.text("workload.check.detail"),
        launches=launches,
        memory=manifest.memory(),
        ptx=files["ptx"],
        provenance=manifest.get("provenance", dict, "an object"),
    )


class _Manifest:
    """Typed access to a manifest's keys, each failure naming the file and the key."""

    def __init__(self, data: object, path: Path):
        if not isinstance(data, dict):
            raise TraceFormatError(f"{path}: expected a JSON object")
        self.data = data
        self.path = path

    def has(self, key: str) -> bool:
        node: object = self.data
        for part in key.split("."):
            if not isinstance(node, dict) or part not in node:
                return False
            node = node[part]
        return True

    def get(self, key: str, kind: type, what: str, node: object = None, prefix: str = ""):
        node = self.data if node is None else node
        for part in key.split("."):
            if not isinstance(node, dict) or part not in node:
                raise TraceFormatError(f"{self.path}: missing key {prefix + key!r}")
            node = node[part]
        if not isinstance(node, kind) or (kind is int and isinstance(node, bool)):
            raise TraceFormatError(
                f"{self.path}: key {prefix + key!r} is {reprlib.repr(node)}; expected {what}"
            )
        return node

    def text(self, key: str) -> str:
        return self.get(key, str, "a string")

    def count(self, key: str, node: object = None, prefix: str = "") -> int:
        value = self.get(key, int, "an integer >= 0", node, prefix)
        if value < 0:
            raise TraceFormatError(f"{self.path}: key {prefix + key!r} is {value}; expected >= 0")
        return value

    def file(self, role: str, directory: Path) -> Path:
        """The file the manifest lists under ``role``: a plain name in the directory, whose
        SHA-256 is the one recorded."""
        name = self.text(f"files.{role}.path")
        digest = self.text(f"files.{role}.sha256")
        if Path(name).name != name or name in ("", ".", ".."):
            raise TraceFormatError(
                f"{self.path}: key 'files.{role}.path' is {name!r}; expected a file name in "
                "the directory"
            )
        path = directory / name
        if not path.is_file():
            raise TraceFormatError(f"{path}: missing (the manifest lists it as {role!r})")
        if _sha256(path) != digest:
            raise TraceFormatError(
                f"{path}: its SHA-256 differs from the manifest's; the file changed after the "
                "trace was saved"
            )
        return path

    def memory(self) -> MemoryLayout:
        base = self.count("memory.base_address")
        alignment = self.count("memory.alignment_bytes")
        if alignment < 8 or alignment & (alignment - 1):
            raise TraceFormatError(
                f"{self.path}: key 'memory.alignment_bytes' is {alignment}; expected a power of "
                "two >= 8"
            )
        size = self.count("memory.size_bytes")
        allocations = []
        end = base
        for i, raw in enumerate(self.get("memory.allocations", list, "a list")):
            prefix = f"memory.allocations[{i}]."
            if not isinstance(raw, dict):
                raise TraceFormatError(f"{self.path}: key {prefix[:-1]!r} is not an object")
            name = self.get("name", str, "a string", raw, prefix)
            address = self.count("address", raw, prefix)
            length = self.count("size_bytes", raw, prefix)
            if address < end or address + max(length, 1) > base + size:
                raise TraceFormatError(
                    f"{self.path}: allocation {i} ({name!r}) at {address:#x} of {length} B is "
                    f"not after the one before it within memory.size_bytes from the base"
                )
            end = address + max(length, 1)
            allocations.append(SavedAllocation(name, address, length))
        return MemoryLayout(base, alignment, size, tuple(allocations))


def _sha256(path: Path) -> str:
    with path.open("rb") as stream:
        return hashlib.file_digest(stream, "sha256").hexdigest()


def _check_addresses(trace: Trace, low: int, high: int, where: str) -> None:
    """Every access to device memory (global or constant) must lie in ``[low, high)``: the
    timing model translates them through a page table of that span, unchecked."""
    device = np.isin(trace.mem_space, (MemorySpace.GLOBAL, MemorySpace.CONST))
    for start in range(0, len(trace.mem_mask), _RECORDS_PER_CHECK):
        part = slice(start, start + _RECORDS_PER_CHECK)
        chosen = device[part]
        if not chosen.any():
            continue
        addresses = expand_addresses(
            trace.mem_mask[part][chosen], trace.mem_form[part][chosen],
            trace.mem_offset[part][chosen], trace.mem_base[part][chosen],
            trace.mem_stride[part][chosen], trace.lane_offsets, trace.addresses,
        )  # fmt: skip
        outside = (addresses < np.uint64(low)) | (addresses >= np.uint64(high))
        if outside.any():
            bad = int(addresses[np.flatnonzero(outside)[0]])
            raise TraceFormatError(
                f"{where}: an access at {bad:#x} lies outside the saved device memory "
                f"({low:#x} to {high:#x})"
            )
