"""What a workload is: CUDA kernels (as committed PTX), seeded inputs, a host program, and a
NumPy reference that the interpreted outputs must match.

A workload class states its parameters for each size (``tiny`` for tests, ``small`` by default,
``paper`` for reproductions), draws its inputs from a seeded generator, and runs its launch
sequence on a :class:`Device` (the host side of CUDA: copies and launches, including host loops
that read results back). Registering is one decorator line; the registry is filled by importing
the package and the ``ndpsim.plugins`` entry points, so adding a workload is adding one module.
A workload defined outside the package names its PTX file (``ptx``) instead of a module of
``kernels/``.
"""

from __future__ import annotations

import inspect
import time
from abc import ABC, abstractmethod
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from ndpsim.errors import NdpsimError, SimulationError, WorkloadError
from ndpsim.hostmemory import growth_bounded
from ndpsim.registry import load_plugins
from ndpsim.seeding import generator
from ndpsim.simt.limits import DEFAULT_CHUNK_THREADS, HOW_TO_RAISE, Limits, TraceMeter
from ndpsim.workloads.params import SIZES, shown, with_params

if TYPE_CHECKING:  # the interpreter (and numba) is imported when a workload runs, not listed
    from ndpsim.frontend.ir import Module
    from ndpsim.simt.memory import DeviceMemory
    from ndpsim.trace.trace import Trace

KERNEL_DIR = Path(__file__).parent / "kernels"


@cache
def kernel_module(name: str) -> Module:
    """The committed PTX module ``kernels/<name>.ptx``, parsed and decoded once per process."""
    path = KERNEL_DIR / f"{name}.ptx"
    if not path.exists():
        raise WorkloadError(f"no PTX for kernel module {name!r} (looked for {path})")
    from ndpsim.ptx import load_module

    return load_module(path)


def ptx_file_module(path: Path) -> Module:
    """The PTX module in ``path``, parsed once per process for each version of the file."""
    try:
        stat = path.stat()
    except OSError as error:
        raise WorkloadError(f"{path}: cannot read the PTX file ({error.strerror})") from None
    return _parsed(path.resolve(), stat.st_mtime_ns, stat.st_size)


@cache
def _parsed(path: Path, mtime_ns: int, size: int) -> Module:
    from ndpsim.ptx import load_module

    return load_module(path)


class Device:
    """The host's view of a GPU: allocations, copies and kernel launches, each traced."""

    def __init__(
        self,
        module: Module,
        memory: DeviceMemory | None = None,
        *,
        record: bool = True,
        chunk_threads: int = DEFAULT_CHUNK_THREADS,
        limits: Limits | None = None,
    ):
        from ndpsim.simt.memory import DeviceMemory

        self.module = module
        self.limits = limits or Limits()
        self.memory = memory or DeviceMemory(limit_bytes=self.limits.device_bytes)
        self.record = record
        self.chunk_threads = chunk_threads
        self.meter = TraceMeter(self.limits)  # one trace budget for all the program's launches
        self.traces: list[Trace] = []

    def to_device(self, array: np.ndarray, name: str) -> int:
        return self.memory.to_device(np.ascontiguousarray(array), name)

    def alloc(self, size_bytes: int, name: str) -> int:
        return self.memory.alloc(size_bytes, name)

    def zeros(self, count: int, dtype, name: str) -> int:
        return self.memory.alloc(int(count) * np.dtype(dtype).itemsize, name)

    def from_device(self, address: int, dtype, count: int) -> np.ndarray:
        return self.memory.from_device(address, dtype, count)

    def write(self, address: int, array: np.ndarray) -> None:
        self.memory.write(address, np.ascontiguousarray(array))

    def launch(self, kernel: str, grid, block, args: Sequence, shared_bytes: int = 0) -> Trace:
        if len(self.traces) >= self.limits.launches:
            raise SimulationError(
                f"kernel {kernel!r}: the host program passed its budget of "
                f"{self.limits.launches:,} launches (a host loop that never ends?); "
                + HOW_TO_RAISE.format(option="--max-launches", key="launches")
            )
        from ndpsim.simt.interpreter import launch

        trace = launch(
            self.module, kernel, grid, block, args, self.memory,
            shared_bytes=shared_bytes, chunk_threads=self.chunk_threads, record=self.record,
            limits=self.limits, meter=self.meter,
        )  # fmt: skip
        self.traces.append(trace)
        return trace


@dataclass(frozen=True)
class CheckResult:
    """How the interpreted outputs compare with the reference."""

    passed: bool
    detail: str


class Workload(ABC):
    """A kernel suite entry. Subclasses set the class attributes and the three methods."""

    name: ClassVar[str]  # short name used everywhere: "vadd", "bfs" ...
    title: ClassVar[str]  # one line for tables
    papers: ClassVar[tuple[str, ...]] = ()  # which papers' suites use it
    module: ClassVar[str] = ""  # PTX module in kernels/ (defaults to ``name``)
    # a PTX file outside kernels/ (a workload of your own); a relative path is taken from the
    # directory of the file defining the class
    ptx: ClassVar[str | Path | None] = None
    sizes: ClassVar[dict[str, dict[str, Any]]]  # parameters of each size
    rtol: ClassVar[float] = 1e-5  # float tolerance of the reference check
    atol: ClassVar[float] = 1e-6

    def __init__(self, size: str = "small", seed: int = 0,
                 params: Mapping[str, Any] | None = None):  # fmt: skip
        """``params``: values of the size's parameters to use instead of its own
        (:mod:`ndpsim.workloads.params`; strings as ``--param`` gives them, or values)."""
        if size not in self.sizes:
            raise WorkloadError(
                f"workload {self.name!r} has no size {size!r}; expected one of "
                f"{', '.join(self.sizes)}"
            )
        self.size = size
        self.seed = seed
        self.params = with_params(self.name, self.sizes[size], params or {})
        #: the parameters given one by one, as converted: what sets this run apart from its size
        self.chosen = {key: self.params[key] for key in params or {}}

    @property
    def module_name(self) -> str:
        return self.module or self.name

    @property
    def ptx_file(self) -> Path:
        """The PTX file its kernels come from."""
        if self.ptx is None:
            return KERNEL_DIR / f"{self.module_name}.ptx"
        path = Path(self.ptx)
        return path if path.is_absolute() else Path(inspect.getfile(type(self))).parent / path

    def ptx_module(self) -> Module:
        """Its kernels' PTX, parsed (once per process)."""
        if self.ptx is None:
            return kernel_module(self.module_name)
        return ptx_file_module(self.ptx_file)

    def rng(self) -> np.random.Generator:
        """The generator of this workload's inputs: the same for the same seed."""
        return generator(self.seed, f"workload/{self.name}")

    @abstractmethod
    def inputs(self, rng: np.random.Generator) -> dict[str, Any]:
        """Host inputs, drawn from ``rng``."""

    @abstractmethod
    def run(self, device: Device, inputs: dict[str, Any]) -> dict[str, np.ndarray]:
        """The host program: copy inputs, launch kernels (possibly in a loop), read outputs."""

    @abstractmethod
    def reference(self, inputs: dict[str, Any]) -> dict[str, np.ndarray]:
        """The expected outputs, computed with NumPy."""

    def check(self, outputs: dict[str, np.ndarray], expected: dict[str, np.ndarray]) -> CheckResult:
        """Integers must match exactly, floats within ``rtol``/``atol``."""
        problems = []
        for key, want in expected.items():
            got = outputs.get(key)
            if got is None:
                problems.append(f"{key}: missing")
                continue
            want = np.asarray(want)
            got = np.asarray(got)
            if got.shape != want.shape:
                problems.append(f"{key}: shape {got.shape}, expected {want.shape}")
                continue
            if want.dtype.kind == "f":
                close = np.isclose(got, want, rtol=self.rtol, atol=self.atol)
                if not close.all():
                    bad = int(np.flatnonzero(~close.reshape(-1))[0])
                    problems.append(
                        f"{key}: {int((~close).sum())} of {close.size} differ, first at "
                        f"{bad}: {got.reshape(-1)[bad]!r} vs {want.reshape(-1)[bad]!r}"
                    )
            elif not np.array_equal(got, want):
                diff = got.reshape(-1) != want.reshape(-1)
                bad = int(np.flatnonzero(diff)[0])
                problems.append(
                    f"{key}: {int(diff.sum())} of {diff.size} differ, first at {bad}: "
                    f"{got.reshape(-1)[bad]!r} vs {want.reshape(-1)[bad]!r}"
                )
        if problems:
            return CheckResult(False, "; ".join(problems))
        return CheckResult(True, "matches reference")


@dataclass
class WorkloadRun:
    """Everything one execution of a workload produced."""

    workload: Workload
    traces: list[Trace]
    outputs: dict[str, np.ndarray]
    check: CheckResult
    seconds: float
    memory: DeviceMemory = field(repr=False)
    module: Module = field(repr=False)  # the PTX its kernels came from

    @property
    def threads(self) -> int:
        return sum(t.info.num_ctas * t.info.threads_per_cta for t in self.traces)

    @property
    def num_warp_instructions(self) -> int:
        return sum(t.num_warp_instructions for t in self.traces)

    @property
    def num_thread_instructions(self) -> int:
        return sum(t.num_thread_instructions for t in self.traces)

    @property
    def num_memory_accesses(self) -> int:
        return sum(t.num_memory_accesses for t in self.traces)

    def touched_bytes(self, line_bytes: int) -> int:
        """Global memory the kernels read or write, counted in cache lines of ``line_bytes``.

        This, not what the host allocates, is what competes for the GPU's caches: a size is
        chosen so that it exceeds them (docs/workloads.md).
        """
        from ndpsim.trace.trace import MemorySpace

        lines = np.zeros(0, dtype=np.uint64)
        for trace in self.traces:
            is_global = trace.mem_space[trace.memory_lanes()] == MemorySpace.GLOBAL
            lines = np.union1d(lines, trace.all_addresses()[is_global] // line_bytes)
        return len(lines) * line_bytes


_REGISTRY: dict[str, type[Workload]] = {}


def register(cls: type[Workload]) -> type[Workload]:
    """Class decorator adding a workload to the suite under ``cls.name``."""
    if cls.name in _REGISTRY and _REGISTRY[cls.name] is not cls:
        raise WorkloadError(f"two workloads are named {cls.name!r}")
    missing = [s for s in SIZES if s not in cls.sizes]
    if missing:
        raise WorkloadError(f"workload {cls.name!r} does not define sizes {missing}")
    _REGISTRY[cls.name] = cls
    return cls


def workload_names() -> list[str]:
    _load_all()
    return sorted(_REGISTRY)


def mix_parts(name: str) -> list[str]:
    """The workloads of ``name``: one, or the parts of a mix run at once (``bfs,spmv``)."""
    return [part.strip() for part in name.split(",")]


def get_workload(name: str) -> type[Workload]:
    _load_all()
    key = name.lower()
    if key not in _REGISTRY:
        raise WorkloadError(
            f"unknown workload {name!r}; the suite has: {', '.join(sorted(_REGISTRY))}"
        )
    return _REGISTRY[key]


def run_workload(
    name: str,
    size: str = "small",
    seed: int = 0,
    *,
    params: Mapping[str, Any] | None = None,
    record: bool = True,
    chunk_threads: int = DEFAULT_CHUNK_THREADS,
    limits: Limits | None = None,
) -> WorkloadRun:
    """Generate inputs, interpret the launch sequence within ``limits``, check the outputs.
    ``params`` replace parameters of the size (:mod:`ndpsim.workloads.params`)."""
    workload = get_workload(name)(size, seed, params)
    return execute_workload(workload, record=record, chunk_threads=chunk_threads, limits=limits)


def execute_workload(
    workload: Workload,
    *,
    record: bool = True,
    chunk_threads: int = DEFAULT_CHUNK_THREADS,
    limits: Limits | None = None,
) -> WorkloadRun:
    """:func:`run_workload` for a workload already built: one of the suite's, one loaded from
    a file, or an own kernel."""
    module = workload.ptx_module()
    device = Device(module, record=record, chunk_threads=chunk_threads, limits=limits)
    # the inputs and the reference are NumPy arrays the parameters size: bounded by the device
    # memory's budget before they are made, not after (a MemoryError names the parameters)
    budget = device.limits.device_bytes
    with _blaming_chosen_params(workload):
        with growth_bounded(budget):
            inputs = workload.inputs(workload.rng())
        start = time.perf_counter()
        outputs = workload.run(device, inputs)
        seconds = time.perf_counter() - start
        with growth_bounded(budget):
            reference = workload.reference(inputs)
        check = workload.check(outputs, reference)
    return WorkloadRun(workload, device.traces, outputs, check, seconds, device.memory, module)


@contextmanager
def _blaming_chosen_params(workload: Workload) -> Iterator[None]:
    """A workload given parameters of its own may be asked for what it cannot do (a CTA
    larger than the hardware's, a filter longer than its data, inputs beyond the machine's
    memory): its failure is reported as the parameters' error, naming them, not as a fault of
    ndpsim. ndpsim's own errors already say what went wrong and pass unchanged."""
    try:
        yield
    except NdpsimError:
        raise
    except (ArithmeticError, LookupError, MemoryError, TypeError, ValueError) as error:
        chosen = getattr(workload, "chosen", None)  # a plug-in may set up its own __init__
        if not chosen:
            raise
        raise WorkloadError(
            f"workload {workload.name!r} ({workload.size}) cannot run with "
            f"--param {shown(chosen)}: "
            f"{type(error).__name__}: {error}"
        ) from error


#: Modules of the package that define no workload of the suite.
_NOT_WORKLOADS = frozenset({"base", "generators", "own_kernel", "from_file", "replay"})


def _load_all() -> None:
    import importlib
    import pkgutil

    import ndpsim.workloads as package

    load_plugins()  # an installed package may register workloads too
    for info in pkgutil.iter_modules(package.__path__):
        if info.name not in _NOT_WORKLOADS:
            importlib.import_module(f"ndpsim.workloads.{info.name}")
