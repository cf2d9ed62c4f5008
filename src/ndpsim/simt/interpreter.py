"""The vectorized SIMT interpreter: runs a kernel over a whole grid and records its trace.

Warps are scheduled *by pc*: at each step the interpreter takes the lowest pc any runnable warp
is at and executes the straight-line run starting there for all warps at that pc at once, each
under its own active mask. Lagging warps thereby catch up with the others, so most steps cover
many warps and NumPy does the work. Each warp keeps a SIMT stack (pc, reconvergence pc, mask) as
rows of arrays shared by all warps; a divergent branch pushes both paths and they reconverge at
the branch's immediate post-dominator. ``bar.sync`` parks a warp until every live warp of its CTA
has arrived. A grid is run in chunks of CTAs so that big launches stream in bounded memory; CUDA
does not order CTAs, so running them chunk by chunk is one valid execution.
"""

from __future__ import annotations

import weakref
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np

from ndpsim.analysis import analyze
from ndpsim.errors import (
    LaunchError,
    NdpsimError,
    SimulationError,
    UnsupportedInstruction,
)
from ndpsim.frontend.ir import Function, Module, Space
from ndpsim.frontend.layout import layout, shared_variables
from ndpsim.frontend.parser import MAX_VARIABLE_BYTES
from ndpsim.simt import stacks
from ndpsim.simt.limits import DEFAULT_CHUNK_THREADS, HOW_TO_RAISE, Limits, TraceMeter
from ndpsim.simt.memory import DeviceMemory
from ndpsim.simt.semantics import Decoder, Executor, Step
from ndpsim.simt.state import FULL_MASK, WARP_SIZE, ChunkGeometry, ThreadState
from ndpsim.simt.values import integer_bits, numpy_dtype
from ndpsim.trace.trace import LaunchInfo, Trace, compact_addresses

_LANE_BITS = (np.uint32(1) << np.arange(WARP_SIZE, dtype=np.uint32)).astype(np.uint32)


@dataclass(frozen=True)
class Program:
    """A function decoded for execution."""

    function: Function
    register_index: dict[str, int]
    register_dtypes: list[np.dtype]
    executors: list[Executor | None]
    control: np.ndarray  # per pc: plain, branch, exit or barrier
    run_end: np.ndarray  # per pc: end (exclusive) of the straight-line run starting there
    branch_target: np.ndarray  # per pc: target pc of a branch
    reconvergence: np.ndarray  # per pc: where a divergent branch reconverges
    guard_index: np.ndarray  # per pc: register index of the guard, or -1
    guard_negated: np.ndarray
    shared_static_bytes: int
    shared_align: int
    local_bytes: int
    param_offsets: dict[str, int]
    param_bytes: int

    @property
    def num_instructions(self) -> int:
        return len(self.executors)


def compile_program(function: Function, module: Module) -> Program:
    """Decode a function of ``module`` for execution (cached); raises
    :class:`UnsupportedInstruction` for anything the interpreter cannot run, naming where."""
    program = function.derived.get("program")
    if program is not None:
        return program  # type: ignore[return-value]
    insts = function.instructions
    n = len(insts)
    register_index: dict[str, int] = {}
    register_dtypes: list[np.dtype] = []
    for name, ptype in function.registers.items():
        dtype = numpy_dtype(ptype)
        if dtype is None:
            raise UnsupportedInstruction(
                f"register {name} has type .{ptype.name}, which ndpsim cannot hold",
                function.location,
                name,
            )
        register_index[name] = len(register_dtypes)
        register_dtypes.append(dtype)
    shared = shared_variables(function, module)
    static_shared = [v for v in shared if not v.extern]
    extern_shared = [v for v in shared if v.extern]
    shared_offsets, shared_end, shared_align = layout(static_shared)
    for var in extern_shared:  # dynamic shared memory starts after the static variables
        shared_align = max(shared_align, var.align, 16)
        shared_offsets[var.name] = -(-shared_end // max(var.align, 16)) * max(var.align, 16)
    local_offsets, local_end, _ = layout(function.variables_in(Space.LOCAL))
    param_offsets = {p.name: p.offset for p in function.params}
    decoder = Decoder(
        function, register_index, register_dtypes, shared_offsets, local_offsets, param_offsets
    )
    analysis = analyze(function)
    cfg, dominance = analysis.cfg, analysis.dominance
    control = np.zeros(n, dtype=np.int8)
    branch_target = np.full(n, -1, dtype=np.int64)
    reconvergence = np.full(n, n, dtype=np.int64)
    guard_index = np.full(n, -1, dtype=np.int64)
    guard_negated = np.zeros(n, dtype=bool)
    executors: list[Executor | None] = []
    for inst in insts:
        if inst.guard is not None:
            guard_index[inst.pc] = register_index[inst.guard.name]
            guard_negated[inst.pc] = inst.guard.negated
        if inst.is_branch:
            if inst.branch_target is None:
                raise UnsupportedInstruction("indirect branch", inst.location, inst.text)
            control[inst.pc] = stacks.BRANCH
            branch_target[inst.pc] = function.labels[inst.branch_target]
            reconvergence[inst.pc] = dominance.reconvergence_pc(cfg.block_of_pc[inst.pc])
            executors.append(None)
        elif inst.is_exit:
            control[inst.pc] = stacks.EXIT
            executors.append(None)
        elif inst.opcode in ("bar", "barrier") and not inst.has("warp"):
            if not (inst.has("sync") or inst.modifiers == ()):
                raise UnsupportedInstruction(
                    "only bar.sync / barrier.sync barriers are supported", inst.location, inst.text
                )
            if inst.guard is not None:
                raise UnsupportedInstruction("predicated barrier", inst.location, inst.text)
            control[inst.pc] = stacks.BARRIER
            executors.append(None)
        elif inst.opcode in ("bar", "barrier"):  # bar.warp.sync: lanes already run in lockstep
            executors.append(lambda s: None)
        else:
            executors.append(decoder.decode(inst))
    run_end = np.zeros(n, dtype=np.int64)
    for block in cfg:
        end = block.end
        for pc in range(block.end - 1, block.start - 1, -1):
            if control[pc] == stacks.BARRIER:
                end = pc + 1
            run_end[pc] = end
    program = Program(
        function=function,
        register_index=register_index,
        register_dtypes=register_dtypes,
        executors=executors,
        control=control,
        run_end=run_end,
        branch_target=branch_target,
        reconvergence=reconvergence,
        guard_index=guard_index,
        guard_negated=guard_negated,
        shared_static_bytes=shared_end,
        shared_align=shared_align,
        local_bytes=local_end,
        param_offsets=param_offsets,
        param_bytes=function.param_bytes,
    )
    function.derived["program"] = program
    return program


# ----------------------------------------------------------------------------- recording
#: Bytes a run record and a memory record take in a finished trace (its columns' widths), what
#: the trace budget counts; a memory record's lane addresses come on top, before compaction.
_RUN_RECORD_BYTES = 4 + 4 + 4 + 4 + 8
_MEMORY_RECORD_BYTES = 4 + 4 + 8 + 4 + 2 + 1 + 1
#: Bytes recorded before they are charged to the meter: one call per megabyte, not per record.
_METER_BATCH_BYTES = 1 << 20


class TraceRecorder:
    """Collects the runs and memory accesses of one chunk into trace columns.

    Per call it keeps only the per-warp arrays and the scalars shared by the call; the scalar
    columns are expanded, and affine records compacted to base and stride, once, in
    :meth:`finish`, so recording stays cheap for small groups.
    """

    def __init__(self, first_warp: int, meter: TraceMeter, kernel: str):
        self.first_warp = first_warp
        self.meter = meter
        self._unmetered = 0  # bytes recorded and not yet charged
        self.kernel = kernel
        self.state: ThreadState | None = None
        self._runs: list[tuple] = []
        self._mem: list[tuple] = []
        self._addresses: list[np.ndarray] = []
        self._address_count = 0

    def run(self, warps: np.ndarray, pc: int, length: int, masks: np.ndarray, seq: np.ndarray):
        self._charge(_RUN_RECORD_BYTES * len(warps))
        self._runs.append((warps, pc, length, masks, seq.copy()))

    def memory(self, s: Step, pc: int, lanes, addresses, size: int, kind, space) -> None:
        if lanes is None and s.full:  # every lane of every warp: no per-lane bookkeeping
            warps = s.warps
            masks = s.masks
            starts = np.arange(len(warps), dtype=np.int64) * WARP_SIZE
        else:
            threads = s.threads() if lanes is None else s.threads()[lanes]
            if len(threads) == 0:
                return
            warps, masks, starts = stacks.warp_groups(threads)
        self._charge(_MEMORY_RECORD_BYTES * len(warps) + addresses.nbytes)
        seq = self.state.warp_instructions[warps] + (pc - s.block_start)  # type: ignore[union-attr]
        self._mem.append((warps, pc, seq, masks, size, int(kind), int(space),
                          starts + self._address_count))  # fmt: skip
        self._addresses.append(addresses)
        self._address_count += len(addresses)

    def _charge(self, nbytes: int) -> None:
        self._unmetered += nbytes
        if self._unmetered >= _METER_BATCH_BYTES:
            self.meter.add(self._unmetered, self.kernel)
            self._unmetered = 0

    def finish(self, info: LaunchInfo) -> Trace:
        self.meter.add(self._unmetered, self.kernel)
        self._unmetered = 0
        runs, mem = self._runs, self._mem
        run_counts = np.array([len(r[0]) for r in runs], dtype=np.int64)
        mem_counts = np.array([len(m[0]) for m in mem], dtype=np.int64)

        def gather(parts, i, dtype):
            if not parts:
                return np.zeros(0, dtype=dtype)
            return np.concatenate([p[i] for p in parts]).astype(dtype, copy=False)

        def expand(parts, counts, i, dtype):
            values = np.array([p[i] for p in parts], dtype=dtype)
            return np.repeat(values, counts)

        first = self.first_warp
        addresses = (
            np.concatenate(self._addresses).astype(np.uint64, copy=False)
            if self._addresses else np.zeros(0, np.uint64)
        )  # fmt: skip
        masks = gather(mem, 3, np.uint32)
        lanes = compact_addresses(addresses, gather(mem, 7, np.int64), masks)
        return Trace(
            info,
            run_warp=(gather(runs, 0, np.int64) + first).astype(np.int32),
            run_pc=expand(runs, run_counts, 1, np.int32),
            run_length=expand(runs, run_counts, 2, np.int32),
            run_mask=gather(runs, 3, np.uint32),
            run_seq=gather(runs, 4, np.int64),
            mem_warp=(gather(mem, 0, np.int64) + first).astype(np.int32),
            mem_pc=expand(mem, mem_counts, 1, np.int32),
            mem_seq=gather(mem, 2, np.int64),
            mem_mask=masks,
            mem_size=expand(mem, mem_counts, 4, np.uint16),
            mem_kind=expand(mem, mem_counts, 5, np.uint8),
            mem_space=expand(mem, mem_counts, 6, np.uint8),
            **lanes,
        )


class _NullRecorder(TraceRecorder):
    """Used when no trace is wanted: counts nothing, stores nothing."""

    def run(self, *args) -> None:
        pass

    def memory(self, *args) -> None:
        pass


# ------------------------------------------------------------------------------- execution
class _ChunkRunner:
    """Runs one chunk of CTAs to completion."""

    def __init__(self, program: Program, state: ThreadState, recorder: TraceRecorder, budget: int,
                 limit: int):  # fmt: skip
        self.program = program
        self.budget = budget  # warp-instructions this chunk may still execute
        self.limit = limit  # the launch's whole budget, for the message
        self.state = state
        self.recorder = recorder
        geometry = state.geometry
        nw = geometry.num_warps
        self.num_warps = nw
        self.warps_per_cta = geometry.warps_per_cta
        self.depth = 8
        self.stack_pc = np.zeros((nw, self.depth), dtype=np.int64)
        self.stack_rpc = np.zeros((nw, self.depth), dtype=np.int64)
        self.stack_mask = np.zeros((nw, self.depth), dtype=np.uint32)
        self.sp = np.ones(nw, dtype=np.int64)
        n = program.num_instructions
        self.end_pc = n
        self.stack_rpc[:, 0] = n
        self.stack_mask[:, 0] = geometry.initial_masks()
        self.status = np.full(nw, stacks.RUNNING, dtype=np.int8)
        self.pc = np.zeros(nw, dtype=np.int64)
        self._group = np.zeros(nw, dtype=np.int64)
        self._threads = np.zeros(nw * WARP_SIZE, dtype=np.int64)
        self._no_lanes = np.zeros(0, dtype=np.uint32)

    def run(self) -> None:
        if self.end_pc == 0:
            return
        while True:
            pc, count = stacks.next_group(self.pc, self.status, self._group)
            if count == 0:
                if not np.any(self.status == stacks.WAITING):
                    return
                # No warp runs, so every CTA with waiting warps has all its live warps there.
                if not stacks.release_barriers(self.status, self.warps_per_cta):
                    raise SimulationError("internal: warps wait at a barrier nobody can release")
                continue
            self._execute_run(int(pc), self._group[:count].copy())

    def _execute_run(self, start: int, warps: np.ndarray) -> None:
        program = self.program
        state = self.state
        masks = self.stack_mask[warps, self.sp[warps] - 1]
        end = int(program.run_end[start])
        full = warps[-1] - warps[0] + 1 == len(warps) and bool(np.all(masks == FULL_MASK))
        if full:
            sel = slice(int(warps[0]) * WARP_SIZE, (int(warps[-1]) + 1) * WARP_SIZE)
        else:
            count = stacks.active_threads(warps, masks, self._threads)
            sel = self._threads[:count].copy()
        step = Step(state, sel, warps, masks, self.recorder, start, full)
        length = end - start
        self.budget -= length * len(warps)
        if self.budget < 0:
            raise SimulationError(
                f"kernel {program.function.name!r} exceeded its budget of "
                f"{self.limit:,} warp-instructions per launch (warps are at "
                f"{program.function.instructions[start].location}; an endless loop?); "
                + HOW_TO_RAISE.format(option="--max-instructions", key="instructions_per_launch")
            )
        self.recorder.run(warps, start, length, masks, state.warp_instructions[warps])
        last = end - 1
        pc = start
        try:
            for pc in range(start, last):
                self._execute(pc, step)
            pc = last
            kind = int(program.control[last])
            taken = self._no_lanes
            if kind == stacks.PLAIN:
                self._execute(last, step)
            elif kind in (stacks.BRANCH, stacks.EXIT):
                taken = self._lanes_taken(last, step)
        except NdpsimError as exc:
            inst = program.function.instructions[pc]
            raise type(exc)(f"{inst.location}: in `{inst.text}`: {exc}") from None
        state.warp_instructions[warps] += length
        if kind == stacks.BRANCH and self.depth < int(self.sp[warps].max()) + 2:
            self._grow(int(self.sp[warps].max()) + 2)
        stacks.finish_run(
            warps, masks, kind, last, int(program.branch_target[last]),
            int(program.reconvergence[last]), taken, self.stack_pc, self.stack_rpc,
            self.stack_mask, self.sp, self.status, self.pc, self.end_pc,
        )  # fmt: skip
        if kind in (stacks.EXIT, stacks.BARRIER):
            stacks.release_barriers(self.status, self.warps_per_cta)

    def _guard(self, pc: int, step: Step) -> np.ndarray | None:
        """Per selected lane, whether the guard of ``pc`` holds (None if unguarded)."""
        gi = self.program.guard_index[pc]
        if gi < 0:
            return None
        guard = self.state.regs[gi][step.sel]
        return ~guard if self.program.guard_negated[pc] else guard

    def _execute(self, pc: int, step: Step) -> None:
        guard = self._guard(pc, step)
        if guard is None or guard.all():
            self.program.executors[pc](step)  # type: ignore[misc]
        elif guard.any():
            sub = Step(step.state, step.threads()[guard], step.warps, step.masks, step.recorder,
                       step.block_start, False)  # fmt: skip
            self.program.executors[pc](sub)  # type: ignore[misc]

    def _lanes_taken(self, pc: int, step: Step) -> np.ndarray:
        """Per warp, the lanes for which a branch is taken or a return happens."""
        guard = self._guard(pc, step)
        if guard is None:
            return step.masks
        if step.full:
            bits = guard.reshape(-1, WARP_SIZE) * _LANE_BITS
            return bits.sum(axis=1, dtype=np.uint64).astype(np.uint32)
        return stacks.lane_masks(step.warps, step.threads(), guard)

    def _grow(self, depth: int) -> None:
        grow = max(depth, 2 * self.depth) - self.depth
        pad = ((0, 0), (0, grow))
        self.stack_pc = np.pad(self.stack_pc, pad)
        self.stack_rpc = np.pad(self.stack_rpc, pad)
        self.stack_mask = np.pad(self.stack_mask, pad)
        self.depth += grow


# --------------------------------------------------------------------------------- launch
#: Largest grid and CTA of CUDA (Programming Guide, "Compute Capabilities": x up to 2^31 - 1,
#: y and z up to 65,535 CTAs; x and y up to 1,024 threads, z up to 64).
_MAX_DIMS = {"grid": (2**31 - 1, 65_535, 65_535), "block": (1024, 1024, 64)}


def launch_dims(value, what: str) -> tuple[int, int, int]:
    """A grid or CTA extent (``what``: "grid" or "block") as x, y, z: 1 to 3 positive sizes
    within CUDA's limits, the missing ones 1; else a :class:`LaunchError`."""
    if isinstance(value, int | np.integer):
        value = (int(value),)
    try:
        dims = tuple(int(v) for v in value)
    except (TypeError, ValueError, OverflowError):
        raise LaunchError(f"{what} must be 1 to 3 positive sizes, got {value!r}") from None
    if not 1 <= len(dims) <= 3 or any(d < 1 for d in dims):
        raise LaunchError(f"{what} must be 1 to 3 positive sizes, got {value!r}")
    for axis, d, most in zip("xyz", dims, _MAX_DIMS[what], strict=False):
        if d > most:
            raise LaunchError(f"{what} {axis} may be at most {most:,}, got {d:,}")
    return (*dims, 1, 1)[:3]  # type: ignore[return-value]


def _ctas_per_chunk(program: Program, threads_per_cta: int, shared_total: int,
                    chunk_threads: int, limits: Limits) -> int:  # fmt: skip
    """CTAs interpreted together: ``chunk_threads`` threads, fewer if their registers, local and
    shared memory would pass ``limits.chunk_bytes``; one CTA must fit on its own."""
    warps_per_cta = -(-threads_per_cta // WARP_SIZE)
    thread_bytes = sum(dt.itemsize for dt in program.register_dtypes) + program.local_bytes
    cta_bytes = warps_per_cta * WARP_SIZE * thread_bytes + shared_total
    if cta_bytes > limits.chunk_bytes:
        raise LaunchError(
            f"kernel {program.function.name!r}: one CTA of {threads_per_cta} threads needs "
            f"{cta_bytes / 2**20:,.0f} MiB of registers, local and shared memory, more than the "
            f"{limits.chunk_bytes / 2**20:,.0f} MiB a chunk may take; use smaller CTAs, or "
            "raise Limits(chunk_bytes=...) in the Python API"
        )
    by_threads = max(1, int(chunk_threads) // (warps_per_cta * WARP_SIZE))
    return max(1, min(by_threads, limits.chunk_bytes // max(cta_bytes, 1)))


def _pack_params(function: Function, args: Sequence) -> np.ndarray:
    if len(args) != len(function.params):
        names = ", ".join(p.name for p in function.params)
        raise LaunchError(
            f"kernel {function.name!r} takes {len(function.params)} arguments ({names}), "
            f"got {len(args)}"
        )
    buffer = np.zeros(-(-max(function.param_bytes, 8) // 8) * 8, dtype=np.uint8)
    for param, value in zip(function.params, args, strict=True):
        if isinstance(value, np.ndarray) and value.ndim > 0:
            raw = np.ascontiguousarray(value).view(np.uint8).reshape(-1)
        else:
            dtype = numpy_dtype(param.type)
            if dtype is None or param.size_bytes != dtype.itemsize:
                raise LaunchError(
                    f"argument {param.name!r} is a {param.size_bytes}-byte aggregate: pass it "
                    "as a NumPy array of its bytes"
                )
            if isinstance(value, float | np.floating) and dtype.kind != "f":
                raise LaunchError(
                    f"argument {param.name!r} is .{param.type.name}, got float {value!r}"
                )
            raw = (
                np.asarray(
                    integer_bits(int(value), dtype) if dtype.kind != "f" else dtype.type(value)
                )
                .reshape(1)
                .view(np.uint8)
            )
        if raw.size != param.size_bytes:
            raise LaunchError(
                f"argument {param.name!r} needs {param.size_bytes} bytes, got {raw.size}"
            )
        buffer[param.offset : param.offset + raw.size] = raw
    return buffer


_SYMBOLS: weakref.WeakKeyDictionary[DeviceMemory, weakref.WeakKeyDictionary[Module, dict]] = (
    weakref.WeakKeyDictionary()
)


def _module_symbols(module: Module, memory: DeviceMemory) -> dict[str, int]:
    """Device addresses of the module's .global/.const variables, allocated in ``memory`` (and
    initialized) the first time the module is launched there."""
    per_memory = _SYMBOLS.setdefault(memory, weakref.WeakKeyDictionary())
    addresses = per_memory.setdefault(module, {})
    for var in module.variables.values():
        if var.space not in (Space.GLOBAL, Space.CONST) or var.name in addresses:
            continue
        address = memory.alloc(var.size_bytes, name=var.name)
        if var.initializer:
            dtype = numpy_dtype(var.type)
            if dtype.kind == "f":
                data = np.array(var.initializer, dtype=dtype)
            else:
                data = np.array([integer_bits(int(v), dtype) for v in var.initializer], dtype)
            memory.write(address, data)
        addresses[var.name] = address
    return addresses


def launch_chunks(
    module: Module,
    kernel: str,
    grid,
    block,
    args: Sequence,
    memory: DeviceMemory,
    *,
    shared_bytes: int = 0,
    chunk_threads: int = DEFAULT_CHUNK_THREADS,
    record: bool = True,
    limits: Limits | None = None,
    meter: TraceMeter | None = None,
) -> Iterator[Trace]:
    """Run a kernel chunk by chunk of CTAs, yielding each chunk's trace as soon as it is done.

    Memory effects of a chunk are visible to the chunks after it. ``shared_bytes`` is the dynamic
    shared memory per CTA (``extern __shared__``); ``chunk_threads`` bounds how many threads are
    interpreted together. A launch running more warp-instructions than ``limits`` allows, or
    recording more trace than ``meter`` (shared by a host program's launches) has left, is
    stopped with a :class:`SimulationError`.
    """
    limits = limits or Limits()
    meter = meter or TraceMeter(limits)
    function = module.function(kernel)
    if not function.is_kernel:
        raise LaunchError(f"{kernel!r} is a .func, not a kernel (.entry)")
    program = compile_program(function, module)
    grid3 = launch_dims(grid, "grid")
    block3 = launch_dims(block, "block")
    threads_per_cta = block3[0] * block3[1] * block3[2]
    if threads_per_cta > 1024:
        raise LaunchError(f"a CTA may hold at most 1024 threads, got {threads_per_cta}")
    most_shared = MAX_VARIABLE_BYTES[Space.SHARED]
    if not 0 <= int(shared_bytes) <= most_shared:
        raise LaunchError(
            f"dynamic shared memory must be 0 to {most_shared:,} bytes, got {shared_bytes}"
        )
    params = _pack_params(function, args)
    symbols = _module_symbols(module, memory)
    total_ctas = grid3[0] * grid3[1] * grid3[2]
    warps_per_cta = -(-threads_per_cta // WARP_SIZE)
    shared_total = program.shared_static_bytes
    if shared_bytes:
        shared_total = -(-shared_total // 16) * 16 + int(shared_bytes)
    ctas_per_chunk = _ctas_per_chunk(program, threads_per_cta, shared_total, chunk_threads, limits)
    budget = limits.instructions_per_launch
    for first in range(0, total_ctas, ctas_per_chunk):
        last = min(total_ctas, first + ctas_per_chunk)
        geometry = ChunkGeometry(grid3, block3, first, last)
        state = ThreadState(
            geometry,
            program.register_dtypes,
            memory,
            params,
            shared_total,
            program.local_bytes,
            symbols,
        )
        recording = TraceRecorder if record else _NullRecorder
        recorder = recording(first * warps_per_cta, meter, kernel)
        recorder.state = state
        runner = _ChunkRunner(program, state, recorder, budget, limits.instructions_per_launch)
        with np.errstate(all="ignore"):
            runner.run()
        budget = runner.budget
        info = LaunchInfo(
            kernel=kernel,
            module=module.path,
            grid=grid3,
            block=block3,
            warps_per_cta=warps_per_cta,
            cta_begin=first,
            cta_end=last,
            shared_bytes=int(shared_bytes),
        )
        yield recorder.finish(info)


def launch(
    module: Module,
    kernel: str,
    grid,
    block,
    args: Sequence,
    memory: DeviceMemory,
    *,
    shared_bytes: int = 0,
    chunk_threads: int = DEFAULT_CHUNK_THREADS,
    record: bool = True,
    limits: Limits | None = None,
    meter: TraceMeter | None = None,
) -> Trace:
    """Run a kernel over its whole grid; returns the trace of every warp-instruction."""
    chunks = list(
        launch_chunks(
            module, kernel, grid, block, args, memory,
            shared_bytes=shared_bytes, chunk_threads=chunk_threads, record=record,
            limits=limits, meter=meter,
        )
    )  # fmt: skip
    return Trace.concatenate(chunks)
