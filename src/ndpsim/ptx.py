"""The public API for PTX: load a module, give it device memory, launch kernels, get traces.

from ndpsim.ptx import load_module, DeviceMemory, launch
mod = load_module("k.ptx")
mem = DeviceMemory()
x = mem.to_device(np.arange(1024, dtype=np.float32))
y = mem.alloc(1024 * 4)
trace = launch(mod, "kernel", grid=(4, 1, 1), block=(256, 1, 1),
               args=[x, y, np.int32(1024)], memory=mem)
out = mem.from_device(y, np.float32, 1024)
"""

from __future__ import annotations

from pathlib import Path

from ndpsim.frontend.ir import Function, Instruction, Module
from ndpsim.frontend.parser import parse_ptx, parse_ptx_file
from ndpsim.simt.interpreter import compile_program, launch, launch_chunks
from ndpsim.simt.memory import Allocation, DeviceMemory
from ndpsim.trace.trace import LaunchInfo, MemoryKind, MemorySpace, Trace, load_traces, save_traces

__all__ = [
    "Allocation",
    "DeviceMemory",
    "Function",
    "Instruction",
    "LaunchInfo",
    "MemoryKind",
    "MemorySpace",
    "Module",
    "Trace",
    "launch",
    "launch_chunks",
    "load_module",
    "load_traces",
    "parse_ptx",
    "save_traces",
]


def load_module(path: str | Path) -> Module:
    """Parse a PTX file and prepare every kernel in it for execution.

    Errors surface here rather than at launch: malformed text is a ``PTXSyntaxError`` and an
    instruction the interpreter cannot execute an ``UnsupportedInstruction``, both naming the
    file, line and column.
    """
    module = parse_ptx_file(path)
    for function in module.kernels:
        compile_program(function, module)
    return module
