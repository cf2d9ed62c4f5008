"""Dynamic traces of kernel launches, stored as columns of NumPy arrays.

A warp executes straight-line code under one active mask, so the trace stores *runs*: warp
``run_warp`` executed pcs ``run_pc .. run_pc + run_length - 1`` with mask ``run_mask``; these are
instructions ``run_seq ..`` of that warp's own stream. Runs appear in execution order, so each
warp's stream is its runs in order. Memory instructions add one record each (warp, pc, position in
the warp's stream, the mask of lanes that accessed memory, size, kind, space) and its lanes'
addresses, in one of three forms (``mem_form``). Most accesses are affine in the lane index
(``a[tid]``, ``a[tid * k + c]``, a value every lane reads): lane ``l`` accessed
``mem_base + l * mem_stride``. Any other record lists one address per accessing lane, in lane
order, from ``mem_offset`` on: as 4-byte offsets from ``mem_base`` in ``lane_offsets`` when its
lanes lie within 4 GiB of each other, else whole in ``addresses``. A full warp's regular access
then needs 17 bytes of record columns instead of 256 bytes of addresses, and a gather half its
old size: that is what lets paper-size inputs fit in memory.

A thread instruction is counted for every lane in the SIMT active mask, whether or not its guard
predicate held (as GPGPU-Sim counts them).
"""

from __future__ import annotations

import itertools
import json
import reprlib
from collections.abc import Sequence
from dataclasses import asdict, dataclass, fields, replace
from enum import IntEnum
from pathlib import Path

import numpy as np

from ndpsim.errors import TraceFormatError
from ndpsim.numba_cache import compiled
from ndpsim.trace.npz import NpzArchive

FORMAT_VERSION = 2  # 2: records in three forms (mem_form); 1 listed every lane's address
AFFINE, NARROW, WIDE = 0, 1, 2  # mem_form: base + lane * stride; lane_offsets; addresses


class MemoryKind(IntEnum):
    LOAD = 0
    STORE = 1
    ATOMIC = 2
    REDUCTION = 3


class MemorySpace(IntEnum):
    GLOBAL = 0
    SHARED = 1
    LOCAL = 2
    CONST = 3


@dataclass(frozen=True, slots=True)
class LaunchInfo:
    """What was launched: kernel, geometry, and which CTAs this trace covers."""

    kernel: str
    module: str
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    warps_per_cta: int
    cta_begin: int
    cta_end: int
    shared_bytes: int = 0

    @property
    def threads_per_cta(self) -> int:
        return self.block[0] * self.block[1] * self.block[2]

    @property
    def num_ctas(self) -> int:
        return self.grid[0] * self.grid[1] * self.grid[2]


RUN_COLUMNS = {
    "run_warp": np.int32,
    "run_pc": np.int32,
    "run_length": np.int32,
    "run_mask": np.uint32,
    "run_seq": np.int64,
}
MEMORY_COLUMNS = {
    "mem_warp": np.int32,
    "mem_pc": np.int32,
    "mem_seq": np.int64,
    "mem_mask": np.uint32,
    "mem_size": np.uint16,
    "mem_kind": np.uint8,
    "mem_space": np.uint8,
    "mem_form": np.uint8,
    "mem_offset": np.int64,
    "mem_base": np.uint64,
    "mem_stride": np.int64,
}
LANE_COLUMNS = {"lane_offsets": np.uint32, "addresses": np.uint64}
COLUMNS = {**RUN_COLUMNS, **MEMORY_COLUMNS, **LANE_COLUMNS}


def popcount(masks: np.ndarray) -> np.ndarray:
    """Set bits of each uint32 mask, as int64."""
    return np.bitwise_count(masks.astype(np.uint32)).astype(np.int64)


def _lanes_of(masks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For every set bit of ``masks``, in order (record by record, lanes ascending): its record
    and its lane."""
    bits = (masks.astype(np.uint32)[:, None] >> np.arange(32, dtype=np.uint32)) & 1
    return np.nonzero(bits)


def compact_addresses(addresses: np.ndarray, offsets: np.ndarray, masks: np.ndarray) -> dict:
    """The compact form of memory records listed in full.

    Record ``r`` accessed, in lane order, ``addresses[offsets[r] ...]``, one per set bit of
    ``masks[r]``. Returns the columns ``mem_form``, ``mem_offset``, ``mem_base``,
    ``mem_stride``, ``lane_offsets`` and ``addresses`` (arithmetic wraps as addresses do).
    """
    if addresses.dtype == np.uint64:
        addresses = addresses.view(np.int64)
    form, offset, base, stride, narrow, wide = _compact(
        addresses.astype(np.int64, copy=False),
        offsets.astype(np.int64, copy=False),
        masks,
        popcount(masks),
    )
    return {
        "mem_form": form,
        "mem_offset": offset,
        "mem_base": base.view(np.uint64),
        "mem_stride": stride,
        "lane_offsets": narrow,
        "addresses": wide.view(np.uint64),
    }


@compiled(allocates=True)
def _compact(addresses, offsets, masks, counts):  # pragma: no cover - compiled
    n = masks.shape[0]
    form = np.empty(n, dtype=np.uint8)
    offset = np.zeros(n, dtype=np.int64)
    base = np.zeros(n, dtype=np.int64)
    stride = np.zeros(n, dtype=np.int64)
    narrow = np.empty(addresses.shape[0], dtype=np.uint32)
    wide = np.empty(addresses.shape[0], dtype=np.int64)
    kn = 0
    kw = 0
    for r in range(n):
        first = offsets[r]
        mask = np.int64(masks[r])
        i = first
        first_lane = -1
        b = 0
        step = 0
        affine = True
        for lane in range(32):
            if (mask >> lane) & 1:
                a = addresses[i]
                i += 1
                if first_lane < 0:
                    first_lane = lane
                    b = a
                elif i == first + 2:  # the second lane fixes the stride
                    step = (a - b) // (lane - first_lane)
                    b -= first_lane * step
                if b + lane * step != a:
                    affine = False
                    break
        if affine:
            form[r] = AFFINE
            base[r] = b
            stride[r] = step
            continue
        end = first + counts[r]
        lo = addresses[first]
        hi = lo
        for j in range(first + 1, end):
            lo = min(lo, addresses[j])
            hi = max(hi, addresses[j])
        if 0 <= hi - lo < 1 << 32:
            form[r] = NARROW
            base[r] = lo
            offset[r] = kn
            for j in range(first, end):
                narrow[kn] = np.uint32(addresses[j] - lo)
                kn += 1
        else:
            form[r] = WIDE
            offset[r] = kw
            for j in range(first, end):
                wide[kw] = addresses[j]
                kw += 1
    return form, offset, base, stride, narrow[:kn].copy(), wide[:kw].copy()


def expand_addresses(masks, forms, offsets, bases, strides, lane_offsets, addresses) -> np.ndarray:
    """Every lane access's address (uint64), record after record, each record's lanes in
    order, from a trace's ``mem_mask``, ``mem_form``, ``mem_offset``, ``mem_base``,
    ``mem_stride``, ``lane_offsets`` and ``addresses`` columns."""
    record, lane = _lanes_of(masks)
    counts = popcount(masks)
    within = np.arange(len(record)) - (np.cumsum(counts) - counts)[record]
    index = offsets[record] + within
    base = bases.view(np.int64)[record]
    form = forms[record]
    with np.errstate(over="ignore"):
        out = base + lane * strides[record]
        narrow = form == NARROW
        out[narrow] = base[narrow] + lane_offsets[index[narrow]].astype(np.int64)
    wide = form == WIDE
    out[wide] = addresses[index[wide]].view(np.int64)
    return out.view(np.uint64)


@dataclass(frozen=True, eq=False)
class Trace:
    """The dynamic trace of one kernel launch (or of a range of its CTAs)."""

    info: LaunchInfo
    run_warp: np.ndarray
    run_pc: np.ndarray
    run_length: np.ndarray
    run_mask: np.ndarray
    run_seq: np.ndarray
    mem_warp: np.ndarray
    mem_pc: np.ndarray
    mem_seq: np.ndarray
    mem_mask: np.ndarray
    mem_size: np.ndarray
    mem_kind: np.ndarray
    mem_space: np.ndarray
    mem_form: np.ndarray
    mem_offset: np.ndarray
    mem_base: np.ndarray
    mem_stride: np.ndarray
    lane_offsets: np.ndarray
    addresses: np.ndarray

    # ------------------------------------------------------------------------ summaries
    @property
    def num_warp_instructions(self) -> int:
        return int(self.run_length.sum(dtype=np.int64))

    @property
    def num_thread_instructions(self) -> int:
        return int((popcount(self.run_mask) * self.run_length).sum())

    @property
    def num_memory_instructions(self) -> int:
        """Memory warp-instructions with at least one accessing lane."""
        return len(self.mem_warp)

    @property
    def num_memory_accesses(self) -> int:
        """Per-lane memory accesses."""
        return int(popcount(self.mem_mask).sum())

    @property
    def num_warps(self) -> int:
        return (self.info.cta_end - self.info.cta_begin) * self.info.warps_per_cta

    @property
    def nbytes(self) -> int:
        """Memory the trace's columns take."""
        return sum(getattr(self, name).nbytes for name in COLUMNS)

    # ------------------------------------------------------------------ per-record views
    @property
    def run_cta(self) -> np.ndarray:
        return self.run_warp // self.info.warps_per_cta

    @property
    def mem_cta(self) -> np.ndarray:
        return self.mem_warp // self.info.warps_per_cta

    def instructions(self) -> dict[str, np.ndarray]:
        """One row per warp-instruction in execution order: warp, cta, pc, active mask and the
        position in the warp's stream (expanded from the runs)."""
        lengths = self.run_length.astype(np.int64)
        total = int(lengths.sum())
        run_index = np.repeat(np.arange(len(lengths)), lengths)
        first = np.cumsum(lengths) - lengths
        step = np.arange(total, dtype=np.int64) - first[run_index]
        warp = self.run_warp[run_index]
        return {
            "warp": warp,
            "cta": warp // self.info.warps_per_cta,
            "pc": (self.run_pc[run_index] + step).astype(np.int32),
            "mask": self.run_mask[run_index],
            "seq": self.run_seq[run_index] + step,
        }

    def lane_addresses(self, record: int) -> np.ndarray:
        """The addresses accessed by memory record ``record``, one per set bit of its mask."""
        one = slice(record, record + 1)
        return expand_addresses(self.mem_mask[one], self.mem_form[one], self.mem_offset[one],
                                self.mem_base[one], self.mem_stride[one], self.lane_offsets,
                                self.addresses)  # fmt: skip

    def memory_lanes(self) -> np.ndarray:
        """For every lane access (as :meth:`all_addresses` lists them), its memory record."""
        counts = popcount(self.mem_mask)
        return np.repeat(np.arange(len(counts)), counts)

    def all_addresses(self) -> np.ndarray:
        """Every lane access's address, record after record, each record's lanes in order."""
        return expand_addresses(self.mem_mask, self.mem_form, self.mem_offset, self.mem_base,
                                self.mem_stride, self.lane_offsets, self.addresses)  # fmt: skip

    # ---------------------------------------------------------------------- combination
    @staticmethod
    def concatenate(traces: Sequence[Trace]) -> Trace:
        """Join traces of consecutive CTA ranges of one launch, in order."""
        if not traces:
            raise ValueError("nothing to concatenate")
        first = traces[0]
        for prev, nxt in itertools.pairwise(traces):
            if nxt.info.cta_begin != prev.info.cta_end or nxt.info.kernel != first.info.kernel:
                raise ValueError("traces must be consecutive CTA ranges of the same launch")
        columns = {name: np.concatenate([getattr(t, name) for t in traces]) for name in COLUMNS}
        offsets = []  # each explicit record's offset moves by its form's entries before it
        narrow_before = wide_before = 0
        for t in traces:
            shift = np.where(t.mem_form == NARROW, narrow_before, 0)
            offsets.append(t.mem_offset + np.where(t.mem_form == WIDE, wide_before, shift))
            narrow_before += len(t.lane_offsets)
            wide_before += len(t.addresses)
        columns["mem_offset"] = np.concatenate(offsets)
        info = replace(first.info, cta_end=traces[-1].info.cta_end)
        return Trace(info=info, **columns)

    # ------------------------------------------------------------------------- storage
    def save(self, path: str | Path) -> None:
        """Write this trace to an ``.npz`` file (see :func:`save_traces`)."""
        save_traces(path, [self])

    @staticmethod
    def load(path: str | Path) -> Trace:
        traces = load_traces(path)
        if len(traces) != 1:
            raise TraceFormatError(f"{path}: holds {len(traces)} launches, expected exactly 1")
        return traces[0]

    def validate(self, source: str = "trace") -> None:
        """Check the columns are consistent; raise :class:`TraceFormatError` naming the column."""
        for group in (RUN_COLUMNS, MEMORY_COLUMNS):
            lengths = {name: len(getattr(self, name)) for name in group}
            if len(set(lengths.values())) > 1:
                raise TraceFormatError(f"{source}: columns of different lengths: {lengths}")
        counts = popcount(self.mem_mask)
        if np.any(counts == 0):
            raise TraceFormatError(f"{source}: column 'mem_mask' has a record with no lanes")
        if np.any(self.mem_form > WIDE):
            raise TraceFormatError(f"{source}: column 'mem_form' has a form other than 0, 1, 2")
        for form, column in ((NARROW, "lane_offsets"), (WIDE, "addresses")):
            listed = self.mem_form == form
            size = len(getattr(self, column))
            # compared as offset > size - count: offset + count could wrap around
            if np.any(self.mem_offset[listed] < 0) or np.any(
                self.mem_offset[listed] > size - counts[listed]
            ):
                raise TraceFormatError(
                    f"{source}: column 'mem_offset' points outside '{column}' ({size} entries)"
                )
        if len(self.run_length) and self.run_length.min() <= 0:
            raise TraceFormatError(f"{source}: column 'run_length' has a non-positive length")
        first = self.info.cta_begin * self.info.warps_per_cta
        end = self.info.cta_end * self.info.warps_per_cta
        for column in ("run_warp", "mem_warp"):
            warps = getattr(self, column)
            if len(warps) and (warps.min() < first or warps.max() >= end):
                raise TraceFormatError(
                    f"{source}: column '{column}' has a warp outside this trace's warps "
                    f"{first}..{end - 1}"
                )
        for column in ("run_pc", "run_seq", "mem_pc", "mem_seq"):
            values = getattr(self, column)
            if len(values) and values.min() < 0:
                raise TraceFormatError(f"{source}: column '{column}' has a negative entry")
        for column, kind in (("mem_kind", MemoryKind), ("mem_space", MemorySpace)):
            if np.any(getattr(self, column) >= len(kind)):
                raise TraceFormatError(
                    f"{source}: column '{column}' has a value other than "
                    f"{', '.join(f'{k.value} ({k.name})' for k in kind)}"
                )


def save_traces(path: str | Path, traces: Sequence[Trace]) -> None:
    """Write launches to one compressed ``.npz`` (generated once, simulated many times)."""
    arrays: dict[str, np.ndarray] = {}
    infos = []
    for i, trace in enumerate(traces):
        infos.append(asdict(trace.info))
        for name in COLUMNS:
            arrays[f"launch{i}/{name}"] = getattr(trace, name)
    header = {"format": "ndpsim-trace", "version": FORMAT_VERSION, "launches": infos}
    arrays["header"] = np.array(json.dumps(header))
    np.savez_compressed(Path(path), **arrays)


def load_traces(path: str | Path) -> list[Trace]:
    """Read launches written by :func:`save_traces`, checking every column."""
    path = Path(path)
    with NpzArchive(path, "trace file") as data:
        return _read_launches(path, data)


def _read_launches(path: Path, data: NpzArchive) -> list[Trace]:
    if "header" not in data.files:
        raise TraceFormatError(f"{path}: missing 'header'; not an ndpsim trace")
    text = data["header"]
    if text.dtype.kind != "U" or text.ndim != 0:
        raise TraceFormatError(f"{path}: 'header' is {text.dtype}[{text.ndim}d], not a string")
    try:
        header = json.loads(str(text))
    except (ValueError, RecursionError) as exc:  # bad JSON, an integer of 4300+ digits, depth
        reason = str(exc) if isinstance(exc, ValueError) else "nested too deeply"
        raise TraceFormatError(f"{path}: corrupt header ({reason[:120]})") from None
    if not isinstance(header, dict) or not isinstance(header.get("launches", []), list):
        raise TraceFormatError(
            f"{path}: corrupt header (expected an object with a 'launches' list)"
        )
    version = header.get("version")
    if header.get("format") != "ndpsim-trace" or version not in (1, FORMAT_VERSION):
        raise TraceFormatError(
            f"{path}: format {reprlib.repr(header.get('format'))} version "
            f"{reprlib.repr(version)}, expected 'ndpsim-trace' version 1 or {FORMAT_VERSION}"
        )
    traces = []
    for i, raw_info in enumerate(header.get("launches", [])):
        columns = {}
        for name, dtype in COLUMNS.items():
            key = f"launch{i}/{name}"
            if version == 1 and name in ("mem_form", "mem_base", "mem_stride", "lane_offsets"):
                continue  # version 1 listed every lane's address
            if key not in data.files:
                raise TraceFormatError(f"{path}: missing column {key!r}")
            column = data[key]
            if column.dtype != np.dtype(dtype) or column.ndim != 1:
                raise TraceFormatError(
                    f"{path}: column {key!r} is {column.dtype}[{column.ndim}d], "
                    f"expected {np.dtype(dtype)}[1d]"
                )
            columns[name] = column
        if version == 1:
            records = len(columns["mem_offset"])
            columns["mem_form"] = np.full(records, WIDE, dtype=np.uint8)
            columns["mem_base"] = np.zeros(records, dtype=np.uint64)
            columns["mem_stride"] = np.zeros(records, dtype=np.int64)
            columns["lane_offsets"] = np.zeros(0, dtype=np.uint32)
        info = _launch_info(raw_info, f"{path}: launch {i}")
        trace = Trace(info=info, **columns)
        trace.validate(f"{path} launch {i}")
        traces.append(trace)
    return traces


def _launch_info(raw: object, where: str) -> LaunchInfo:
    """The launch a trace header describes, each field checked as the simulator uses it."""
    keys = set(raw) if isinstance(raw, dict) else set()
    if not isinstance(raw, dict) or not _INFO_KEYS - {"shared_bytes"} <= keys <= _INFO_KEYS:
        raise TraceFormatError(
            f"{where}: its header is not an object with the keys {', '.join(sorted(_INFO_KEYS))}"
        )
    checks = {
        "kernel": isinstance(raw["kernel"], str),
        "module": isinstance(raw["module"], str),
        "grid": _extent(raw["grid"], _MAX_GRID),
        "block": _extent(raw["block"], _MAX_BLOCK),
        "warps_per_cta": _count(raw["warps_per_cta"], 1),
        "cta_begin": _count(raw["cta_begin"], 0),
        "cta_end": _count(raw["cta_end"], 0),
        "shared_bytes": _count(raw.get("shared_bytes", 0), 0),
    }
    bad = [key for key, good in checks.items() if not good]
    if bad:
        raise TraceFormatError(f"{where}: bad {', '.join(bad)} in its header")
    info = LaunchInfo(**{**raw, "grid": tuple(raw["grid"]), "block": tuple(raw["block"])})
    if not info.cta_begin <= info.cta_end <= info.num_ctas:
        raise TraceFormatError(
            f"{where}: CTAs {info.cta_begin} to {info.cta_end} are not a range of its grid's "
            f"{info.num_ctas}"
        )
    if info.threads_per_cta > _MAX_BLOCK[0] or info.warps_per_cta != -(-info.threads_per_cta // 32):
        raise TraceFormatError(
            f"{where}: {info.warps_per_cta} warps per CTA of {info.threads_per_cta} threads "
            f"(at most {_MAX_BLOCK[0]})"
        )
    return info


_INFO_KEYS = frozenset(field.name for field in fields(LaunchInfo))
#: CUDA's largest grid and CTA, per dimension, as the interpreter launches them (a CTA also
#: holds at most 1024 threads in all).
_MAX_GRID, _MAX_BLOCK = (2**31 - 1, 65_535, 65_535), (1024, 1024, 64)


def _count(value: object, least: int) -> bool:
    """Whether a JSON value is an integer (not a boolean) of at least ``least``."""
    return type(value) is int and value >= least


def _extent(value: object, limits: tuple[int, int, int]) -> bool:
    """Whether a JSON value is a grid or block extent: three positive integers within
    ``limits``."""
    return (
        isinstance(value, list)
        and len(value) == 3
        and all(_count(n, 1) and n <= limit for n, limit in zip(value, limits, strict=True))
    )
