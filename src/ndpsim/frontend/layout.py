"""Where a function's declared variables live in their state space: packed in declaration order,
each at its alignment. The interpreter lays out shared and local memory this way, and the timing
model needs the same static shared-memory size to know how many CTAs fit on an SM."""

from __future__ import annotations

from ndpsim.frontend.ir import Address, Function, Module, Space, Symbol, Variable


def layout(variables, start: int = 0) -> tuple[dict[str, int], int, int]:
    """Offsets of variables packed in declaration order; returns offsets, end, max alignment."""
    offsets: dict[str, int] = {}
    offset = start
    max_align = 1
    for var in variables:
        offset = -(-offset // var.align) * var.align
        offsets[var.name] = offset
        offset += var.size_bytes
        max_align = max(max_align, var.align)
    return offsets, offset, max_align


def shared_variables(function: Function, module: Module) -> list[Variable]:
    """The function's own shared variables and the module-scope ones it names (nvcc declares
    ``extern __shared__`` arrays at module scope)."""
    named = {
        op.name if isinstance(op, Symbol) else op.base.name
        for inst in function.instructions
        for op in inst.operands
        if isinstance(op, Symbol) or (isinstance(op, Address) and isinstance(op.base, Symbol))
    }
    own = function.variables_in(Space.SHARED)
    scoped = [
        v for v in module.variables.values()
        if v.space is Space.SHARED and v.name in named and v.name not in function.variables
    ]  # fmt: skip
    return own + scoped


def static_shared_bytes(function: Function, module: Module) -> int:
    """Bytes of the statically sized shared variables a CTA of ``function`` holds."""
    return layout(v for v in shared_variables(function, module) if not v.extern)[1]
