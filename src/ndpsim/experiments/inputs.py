"""What ``ndpsim run`` simulates: a workload (of the suite, or defined in a .py file), several
at once (``--workload bfs,spmv``: a mix, each on its own cores and in its own address space), a
kernel of your own (``--ptx``), or a saved trace (``--trace``). Each is checked before anything
long runs, interpreted (or read) the same way, and described the same way in the results
file."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ndpsim.errors import ConfigError
from ndpsim.frontend.ir import Module
from ndpsim.provenance import digest
from ndpsim.simt.limits import Limits
from ndpsim.simt.memory import DeviceMemory
from ndpsim.systems.skeleton.program import Program
from ndpsim.trace.saved import read_saved_trace
from ndpsim.trace.trace import Trace
from ndpsim.workloads import Workload, execute_workload, get_workload
from ndpsim.workloads.from_file import load_workload_file
from ndpsim.workloads.own_kernel import CUSTOM, OwnKernel
from ndpsim.workloads.params import shown
from ndpsim.workloads.replay import load_replay

DEFAULT_SIZE = "small"


@dataclass
class Interpreted:
    """What a system simulates, and how the outputs differed from the reference (None when
    they did not, or there was none). A mix has its programs instead of one program's
    traces, module and memory."""

    traces: list[Trace]
    module: Module | None
    memory: DeviceMemory | None
    problem: str | None
    mix: list[Program] | None = None

    def programs(self, name: str) -> list[Program]:
        """The programs to run at once: the mix's, or the one program (named ``name``)."""
        if self.mix is not None:
            return self.mix
        return [Program(name, self.traces, self.module, self.memory)]


@dataclass
class RunInput:
    """One input of ``ndpsim run``, checked, not yet interpreted."""

    name: str  # the workload's, or the own kernel's
    size: str
    seed: int  # the seed of the run: of its inputs and of the system's random choices
    parameters: dict[str, Any]
    source: dict[str, Any]  # where it came from, recorded as the results' "input"
    activity: str  # what interpreting it is called while it runs
    interpret: Callable[[Limits], Interpreted]

    def document(self) -> dict[str, Any]:
        """The entries of a results file that say what ran."""
        return {"workload": self.name, "size": self.size, "seed": self.seed,
                "workload_parameters": self.parameters, "input": self.source}  # fmt: skip

    @property
    def described_size(self) -> str:
        """Its size, with the parameters given values of their own (``small, n=4096``)."""
        chosen = self.source.get("params")
        return f"{self.size}, {shown(chosen)}" if chosen else self.size

    def file_name(self, system: str, configuration: dict[str, Any]) -> str:
        """The default results file: its hash covers the configuration and, for an input other
        than the suite's, what identifies the input (two own kernels never share a file)."""
        identity = configuration
        if self.source != {"kind": "suite"}:  # a file, own kernel, trace or chosen parameters
            identity = [configuration, self.source, self.parameters]
        return f"run-{system}-{self.name}-{self.size}-s{self.seed}-{digest(identity)}.json"


def choose_input(*, workload: str | None, ptx: Path | None, kernel: str | None,
                 grid: str | None, block: str | None, args: list[str], trace: Path | None,
                 size: str | None, seed: int | None,
                 params: Mapping[str, Any] | None = None) -> RunInput:  # fmt: skip
    """The input the options name: exactly one of ``--workload``, ``--ptx`` and ``--trace``,
    with only the options that apply to it (``params``: the ``--param`` values)."""
    given = [option for option, value in (("--workload", workload), ("--ptx", ptx),
                                          ("--trace", trace)) if value is not None]  # fmt: skip
    if len(given) != 1:
        raise ConfigError(
            "give exactly one of --workload (a suite name or a .py file), --ptx and --trace; "
            f"got {' and '.join(given) or 'none'}"
        )
    launch = {"--kernel": kernel, "--grid": grid, "--block": block, "--arg": args or None}
    stray = [option for option, value in launch.items() if value is not None]
    if ptx is None and stray:
        raise ConfigError(f"{stray[0]} describes the launch of a --ptx kernel; without --ptx it "
                          "does not apply")  # fmt: skip
    if size is not None and workload is None:
        why = "runs the launch its options describe" if ptx else "keeps the size it was saved at"
        raise ConfigError(f"--size applies to --workload; {given[0]} {why}")
    if params and workload is None:
        why = "launches what its options say" if ptx else "replays the parameters it was saved with"
        raise ConfigError(f"--param applies to --workload; {given[0]} {why}")
    if workload is not None and "," in workload:
        return _mix(workload, size or DEFAULT_SIZE, seed or 0, params or {})
    if workload is not None:
        return _workload(workload, size or DEFAULT_SIZE, seed or 0, params or {})
    if ptx is not None:
        missing = [option for option in ("--grid", "--block") if launch[option] is None]
        if missing:
            raise ConfigError(f"--ptx needs {' and '.join(missing)} (X[,Y,Z])")
        return _own_kernel(OwnKernel(ptx, kernel, grid, block, args, seed or 0))
    return _saved(trace, seed)


def _workload(name: str, size: str, seed: int, params: Mapping[str, Any]) -> RunInput:
    if name.endswith(".py"):
        path = Path(name)
        cls = load_workload_file(path)
        source = {"kind": "file", "path": str(path.resolve()), "sha256": _sha256(path)}
    else:
        cls = get_workload(name)
        source = {"kind": "suite"}
    workload = cls(size, seed, params)  # a parameter it has not, or a bad value, fails now
    workload.ptx_module()  # a PTX file that cannot be read or parsed fails now
    if workload.chosen:
        source = {**source, "params": workload.chosen}
    return RunInput(workload.name, size, seed, workload.params, source,
                    f"interpreting {workload.name} ({size})", _interpreter(workload))  # fmt: skip


def _mix(names: str, size: str, seed: int, params: Mapping[str, Any]) -> RunInput:
    """Several workloads at once (``bfs,spmv``), each interpreted as alone with the same size
    and seed; a name given twice names its second program ``bfs.2``."""
    parts = [n.strip() for n in names.split(",")]
    if len(parts) < 2 or not all(parts):
        raise ConfigError(f"--workload {names!r}: a mix names two or more workloads, comma "
                          "separated (bfs,spmv)")  # fmt: skip
    if params:
        raise ConfigError("--param applies to one workload; a mix runs each at its size's "
                          "parameters")  # fmt: skip
    inputs = [_workload(n, size, seed, {}) for n in parts]
    names_seen: dict[str, int] = {}
    programs = []
    for part in inputs:
        names_seen[part.name] = names_seen.get(part.name, 0) + 1
        count = names_seen[part.name]
        programs.append(part.name if count == 1 else f"{part.name}.{count}")

    def interpret(limits: Limits) -> Interpreted:
        mix, problems = [], []
        for name, part in zip(programs, inputs, strict=True):
            done = part.interpret(limits)
            mix.append(Program(name, done.traces, done.module, done.memory))
            if done.problem is not None:
                problems.append(f"{name}: {done.problem}")
        return Interpreted([], None, None, "; ".join(problems) or None, mix)

    source = {
        "kind": "mix",
        "programs": [{"name": n, **part.source} for n, part in zip(programs, inputs, strict=True)],
    }
    parameters = {n: part.parameters for n, part in zip(programs, inputs, strict=True)}
    return RunInput("+".join(programs), size, seed, parameters, source,
                    f"interpreting {', '.join(programs)} ({size})", interpret)  # fmt: skip


def _own_kernel(workload: OwnKernel) -> RunInput:
    source = {"kind": "ptx", "path": workload.params["ptx"],
              "sha256": workload.params["ptx_sha256"]}  # fmt: skip
    return RunInput(workload.name, CUSTOM, workload.seed, workload.params, source,
                    f"interpreting {workload.name}", _interpreter(workload))  # fmt: skip


def _interpreter(workload: Workload) -> Callable[[Limits], Interpreted]:
    def interpret(limits: Limits) -> Interpreted:
        run = execute_workload(workload, limits=limits)
        return Interpreted(run.traces, run.module, run.memory,
                           None if run.check.passed else run.check.detail)  # fmt: skip

    return interpret


def _saved(directory: Path, seed: int | None) -> RunInput:
    saved = read_saved_trace(directory)

    def interpret(limits: Limits) -> Interpreted:
        replay = load_replay(saved)
        problem = None if saved.check_passed else saved.check_detail
        return Interpreted(replay.traces, replay.module, replay.memory, problem)

    source = {"kind": "trace", "directory": str(directory.resolve()),
              "format_version": saved.version, "seed": saved.seed,
              "provenance": saved.provenance}  # fmt: skip
    return RunInput(saved.workload, saved.size, saved.seed if seed is None else seed,
                    saved.parameters, source, f"reading the saved trace {directory}",
                    interpret)  # fmt: skip


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()
