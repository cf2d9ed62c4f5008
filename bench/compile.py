#!/usr/bin/env python3
"""What compiling the simulator costs, and where that time goes.

For each shipped system preset, a fresh process with an empty compilation cache (a temporary
``NDPSIM_CACHE_DIR``) runs ``ndpsim run --system PRESET --workload vadd --size tiny``; a second
process runs it again on the cache the first one filled, so the difference in CPU seconds is
what compiling cost (the second run also shows that everything was found in the cache). Then
the first runs of all presets, one after another on one shared cache (what a user pays to try
every system, and what each preset's code adds to those before it: the last, ``mpu``, is what
the MPU kind adds), and finally the cost of an edit: one event handler's body changes (in a copy of
the package) and the same run compiles again.

Inside each process numba's event API (``numba.core.event``) records every compilation
(``numba:compile``) with the CPU clock. A separate first run of the first preset, and the run
after the edit, also record every compiler pass (``numba:run_pass``) and every hold of the LLVM
lock (``numba:llvm_lock``), which slows them by about a sixth, so the compile time splits into:

* by entry point: each function compiled from Python (not as the callee of another one), with
  all the callees it compiled;
* by phase: the untyped passes, numba's IR inlining (``inline_inlinables`` and friends), type
  inference, lowering to LLVM IR (Python side), LLVM (optimising and generating machine code),
  the other typed passes, and the rest (cache I/O, the dispatcher).

Each phase figure is exclusive: a pass that compiles a callee is not charged for the callee's
passes.

    python bench/compile.py [--systems tom-baseline,...] [--workload vadd] [--no-edit]
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

PRESETS = ("gpu-baseline", "tom-baseline", "tom-ndp", "sndp-baseline", "sndp-ndp", "v100", "mpu")
#: the handler whose body the edit measurement changes: (module under src/ndpsim, function)
EDITED = ("systems/gpu/model.py", "_dram_done")

PHASES = {
    "inline_inlinables": "IR inlining",
    "inline_closure_likes": "IR inlining",
    "inline_overloads": "IR inlining",
    "nopython_type_inference": "type inference",
    "native_lowering": "lowering (Python)",
    "ndpsim_lowering": "lowering (Python)",  # ndpsim.numba_cache's lowering passes
    "ndpsim_inlined_lowering": "lowering (Python)",
}
UNTYPED = {
    "extract_bytecode", "translate_bytecode", "fixup_args", "ir_processing",
    "rewrite_semantic_constants", "dead_branch_prune", "generic_rewrites", "with_lifting",
    "find_literally", "canonicalize_loop_exit", "canonicalize_loop_entry",
    "make_function_op_code_to_jit_function", "transform_literal_unroll_const_list_to_tuple",
    "mixed_container_unroller", "iter_loop_canonicalisation", "PropagateLiterals",
    "LiteralPropagation", "literal_unroll", "simplify_cfg", "reconstruct_ssa",
    "Rewrite dynamic raises", "preserve_ir",
}  # fmt: skip
PHASE_ORDER = ("untyped passes", "IR inlining", "type inference", "lowering (Python)", "LLVM",
               "other typed passes", "rest (cache, dispatcher)")  # fmt: skip

CHILD = r"""
import json, sys, time
from numba.core import event

records = []


class Recorder(event.Listener):
    def on_start(self, ev):
        records.append((time.process_time(), 1, ev.kind, _name(ev)))

    def on_end(self, ev):
        records.append((time.process_time(), 0, ev.kind, ""))


def _name(ev):
    data = ev.data or {}
    if ev.kind == "numba:compile":
        py = data["dispatcher"].py_func
        return f"{py.__module__}.{py.__qualname__}"
    if ev.kind == "numba:run_pass":
        return data["name"].split(" [")[0]
    return ""


recorder = Recorder()
for kind in sys.argv[2].split(","):
    event.register(kind, recorder)
started = time.process_time()
from ndpsim.cli.main import app
try:
    app(args=sys.argv[3:], prog_name="ndpsim", standalone_mode=False)
finally:
    with open(sys.argv[1], "w") as out:
        json.dump({"records": records, "cpu_s": time.process_time() - started}, out)
"""


#: what a run listens to: compilations only (a few hundred events, no measurable cost), or also
#: every compiler pass and hold of the LLVM lock (which costs about a sixth of the compile time)
COMPILATIONS, PHASES_TOO = "numba:compile", "numba:compile,numba:run_pass,numba:llvm_lock"


def run_child(system: str, workload: str, cache_dir: str, work_dir: str,
              pythonpath: str | None = None, listen: str = COMPILATIONS) -> dict:  # fmt: skip
    """One ``ndpsim run`` in a fresh process on ``cache_dir``: its CPU seconds, peak RSS and
    the compile events it recorded (``listen``), summarised."""
    env = dict(os.environ, NDPSIM_CACHE_DIR=cache_dir)
    env.pop("NUMBA_CACHE_DIR", None)
    if pythonpath:
        env["PYTHONPATH"] = pythonpath
    events = os.path.join(work_dir, "events.json")
    result = os.path.join(work_dir, "result.json")
    command = [sys.executable, "-c", CHILD, events, listen, "run", "--system", system,
               "--workload", workload, "--size", "tiny", "--json", result]  # fmt: skip
    start = time.perf_counter()
    child = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(child.pid, 0)  # this child's own peak, not the largest so far
    wall_s = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{' '.join(command[:1] + command[4:])} failed")
    with open(events) as f:
        recorded = json.load(f)
    return {
        "wall_s": wall_s,
        "cpu_s": usage.ru_utime + usage.ru_stime,
        "peak_mb": usage.ru_maxrss / 1024,
        **summarise(recorded["records"]),
    }


def summarise(records: list) -> dict:
    """Exclusive CPU seconds by phase, inclusive by entry point, and the compile count."""
    phases: dict[str, float] = defaultdict(float)
    entries: dict[str, float] = defaultdict(float)
    stack: list[list] = []  # [kind, name, start, time of children]
    compiled = 0
    for t, is_start, kind, name in records:
        if is_start:
            stack.append([kind, name, t, 0.0])
            continue
        kind, name, start, children = stack.pop()
        spent = t - start
        if stack:
            stack[-1][3] += spent
        own = spent - children
        if kind == "numba:llvm_lock":
            phases["LLVM"] += own
        elif kind == "numba:run_pass":
            phase = PHASES.get(name) or ("untyped passes" if name in UNTYPED else
                                         "other typed passes")  # fmt: skip
            phases[phase] += own
        else:
            compiled += 1
            phases["rest (cache, dispatcher)"] += own
            if not any(frame[0] == "numba:compile" for frame in stack):
                entries[name] += spent
    return {"phases": dict(phases), "entries": dict(entries), "compiled": compiled,
            "compile_s": sum(phases.values())}  # fmt: skip


def edit_handler(package: Path) -> str:
    """Change the body of the :data:`EDITED` handler in the package copy at ``package``: one
    statement assigning a constant, before its first statement. Returns what was edited."""
    path = package / EDITED[0]
    source = path.read_text()
    tree = ast.parse(source)
    function = next(node for node in ast.walk(tree)
                    if isinstance(node, ast.FunctionDef) and node.name == EDITED[1])  # fmt: skip
    first = function.body[0]
    if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):  # a docstring
        first = function.body[1]
    lines = source.splitlines(keepends=True)
    indent = " " * first.col_offset
    lines.insert(first.lineno - 1, f"{indent}edited_for_bench = 1\n")
    path.write_text("".join(lines))
    return f"{EDITED[0]}:{EDITED[1]}"


def print_split(title: str, result: dict) -> None:
    phases = result["phases"]
    print(f"  {title}: {result['compile_s']:.1f} CPU s in {result['compiled']} compilations")
    for phase in PHASE_ORDER:
        if phases.get(phase):
            print(f"    {phase:<28}{phases[phase]:>8.1f} s")
    top = sorted(result["entries"].items(), key=lambda item: -item[1])
    for name, seconds in top[:8]:
        print(f"    entry {name:<60}{seconds:>8.1f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--systems", default=",".join(PRESETS))
    parser.add_argument("--workload", default="vadd")
    parser.add_argument("--no-edit", action="store_true", help="skip the edit measurement")
    parser.add_argument("--no-together", action="store_true",
                        help="skip the run of all presets on one cache")  # fmt: skip
    args = parser.parse_args()
    systems = args.systems.split(",")
    import ndpsim

    source = Path(ndpsim.__file__).resolve().parent
    print(f"{'system':<16}{'first CPU s':>12}{'compile s':>11}{'peak MB':>9}"
          f"{'second CPU s':>14}{'compiled':>10}")  # fmt: skip
    for system in systems:
        with tempfile.TemporaryDirectory() as cache, tempfile.TemporaryDirectory() as work:
            first = run_child(system, args.workload, cache, work)
            second = run_child(system, args.workload, cache, work)
        compile_s = first["cpu_s"] - second["cpu_s"]
        print(f"{system:<16}{first['cpu_s']:>12.1f}{compile_s:>11.1f}{first['peak_mb']:>9.0f}"
              f"{second['cpu_s']:>14.1f}{second['compiled']:>10}")  # fmt: skip
    with tempfile.TemporaryDirectory() as cache, tempfile.TemporaryDirectory() as work:
        split = run_child(systems[0], args.workload, cache, work, listen=PHASES_TOO)
    print(f"\nwhere the first run's compile time goes ({systems[0]}, a run of its own: listening "
          "to every pass and LLVM call slows it; CPU s, exclusive by phase):")  # fmt: skip
    print_split(systems[0], split)
    if not args.no_together:
        total, peak = 0.0, 0.0
        with tempfile.TemporaryDirectory() as cache, tempfile.TemporaryDirectory() as work:
            added = []
            for system in systems:
                result = run_child(system, args.workload, cache, work)
                total += result["compile_s"]
                peak = max(peak, result["peak_mb"])
                added.append(f"{system} {result['compile_s']:.1f}")
        print(f"\nall {len(systems)} presets one after another on one cache: "
              f"{total:.1f} CPU s of compilation, peak {peak:.0f} MB; what each added to "
              f"those before it (CPU s): {', '.join(added)}")  # fmt: skip
    if not args.no_edit:
        system = systems[0]
        with (tempfile.TemporaryDirectory() as cache, tempfile.TemporaryDirectory() as work,
              tempfile.TemporaryDirectory() as copy):  # fmt: skip
            shutil.copytree(source, Path(copy) / "ndpsim")
            run_child(system, args.workload, cache, work, pythonpath=copy)
            edited = edit_handler(Path(copy) / "ndpsim")
            result = run_child(system, args.workload, cache, work, pythonpath=copy,
                               listen=PHASES_TOO)  # fmt: skip
        print(f"\nafter editing {edited} ({system}): {result['compile_s']:.1f} CPU s of "
              f"compilation, {result['wall_s']:.1f} s wall for the whole run")  # fmt: skip
        print_split("recompile", result)


if __name__ == "__main__":
    main()
