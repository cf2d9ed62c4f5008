"""Synthetic PTX kernels of a chosen size and shape, to check the analyses scale.

Shared by ``tests/analysis/test_scaling.py`` and ``bench/analysis.py``. Every shape is built from
the code nvcc emits for ``y[i] = f(x[i])``: address arithmetic, global loads and stores, float
arithmetic, and rotated (do-while) loops closed by a backward conditional branch. As in nvcc's
PTX, every value gets a register of its own (so the number of registers grows with the kernel),
except the accumulator, which every element updates in place.

* ``straight``: one basic block of loads, arithmetic and stores;
* ``nested``: loop nests of depth three, one after another; inner loops count to a constant
  (static trip count) and also gather through an index (``x[idx[i]]``, an indirect load), the
  others count to a parameter (known at loop entry);
* ``branches``: a chain of small loops, one backward branch every ten instructions.
"""

from __future__ import annotations

from dataclasses import dataclass

SHAPES = ("straight", "nested", "branches")

_NEST_DEPTH = 3


@dataclass(frozen=True, slots=True)
class SyntheticKernel:
    """A generated kernel ``k`` and what the analyses should find in it."""

    shape: str
    ptx: str
    num_instructions: int
    num_loops: int
    num_indirect_loads: int


class _Writer:
    """Writes a kernel's body line by line and counts what it wrote."""

    def __init__(self):
        self.lines: list[str] = []
        self.num_instructions = 0
        self.num_loops = 0
        self.num_indirect_loads = 0
        self.step = 0  # elements written so far, which sets each one's offset
        self.registers = {"%r": 10, "%rd": 10, "%f": 10}  # the next free number of each kind

    def emit(self, text: str) -> None:
        self.lines.append(f"\t{text};")
        self.num_instructions += 1

    def fresh(self, kind: str) -> str:
        number = self.registers[kind]
        self.registers[kind] += 1
        return f"{kind}{number}"

    def label(self, name: str) -> None:
        self.lines.append(f"{name}:")

    def element(self) -> None:
        """``y[k] = x[k] * 2 + acc; acc += x[k]``: six instructions, one load and one store."""
        offset_bytes = 4 * (self.step % 1024)
        self.step += 1
        a, x, y, z = self.fresh("%rd"), self.fresh("%f"), self.fresh("%f"), self.fresh("%f")
        self.emit(f"add.s64 {a}, %rd3, {offset_bytes}")
        self.emit(f"ld.global.f32 {x}, [{a}]")
        self.emit(f"mul.f32 {y}, {x}, 0f40000000")
        self.emit(f"add.f32 {z}, {y}, %f1")
        self.emit(f"add.f32 %f1, %f1, {x}")
        self.emit(f"st.global.f32 [{a}+4096], {z}")

    def indirect(self) -> None:
        """``acc += x[idx[k]]``: an index load, then a load whose address depends on it."""
        offset_bytes = 4 * (self.step % 1024)
        self.step += 1
        index, scaled = self.fresh("%r"), self.fresh("%rd")
        a, x = self.fresh("%rd"), self.fresh("%f")
        self.emit(f"ld.global.u32 {index}, [%rd4+{offset_bytes}]")
        self.emit(f"mul.wide.u32 {scaled}, {index}, 4")
        self.emit(f"add.s64 {a}, %rd3, {scaled}")
        self.emit(f"ld.global.f32 {x}, [{a}]")
        self.emit(f"add.f32 %f1, %f1, {x}")
        self.num_indirect_loads += 1

    def loop(self, depth: int, body) -> None:
        """A rotated loop around ``body`` at nesting ``depth`` (0: outermost), counting to a
        parameter, or to a constant if it is a nest's innermost loop."""
        index = self.num_loops
        self.num_loops += 1
        counter = self.fresh("%r")
        bound = "8" if depth == _NEST_DEPTH - 1 else "%r1"
        self.emit(f"mov.u32 {counter}, 0")
        self.label(f"$L__loop{index}")
        body()
        self.emit(f"add.s32 {counter}, {counter}, 1")
        self.emit(f"setp.lt.s32 %p{1 + depth}, {counter}, {bound}")
        self.emit(f"@%p{1 + depth} bra $L__loop{index}")

    def nest(self, depth: int = 0) -> None:
        """Loops nested to the full depth, each with an element before its inner loop."""
        if depth == _NEST_DEPTH:
            self.element()
            self.indirect()
            return
        self.loop(depth, lambda: (self.element(), self.nest(depth + 1)))


def synthetic_kernel(shape: str, num_instructions: int) -> SyntheticKernel:
    """A kernel of about ``num_instructions`` instructions (at least that many) of ``shape``."""
    if shape not in SHAPES:
        raise ValueError(f"unknown shape {shape!r}; expected one of {SHAPES}")
    w = _Writer()
    w.emit("ld.param.u64 %rd1, [k_param_0]")
    w.emit("ld.param.u64 %rd2, [k_param_1]")
    w.emit("ld.param.u32 %r1, [k_param_2]")
    w.emit("mov.u32 %r9, %tid.x")
    w.emit("mul.wide.u32 %rd5, %r9, 4")
    w.emit("cvta.to.global.u64 %rd6, %rd1")
    w.emit("add.s64 %rd3, %rd6, %rd5")
    w.emit("cvta.to.global.u64 %rd4, %rd2")
    w.emit("mov.f32 %f1, 0f00000000")
    while w.num_instructions < num_instructions:
        if shape == "straight":
            w.element()
        elif shape == "nested":
            w.nest()
        else:
            w.loop(0, w.element)
    w.emit("st.global.f32 [%rd3], %f1")
    w.emit("ret")
    ptx = "\n".join(
        [
            ".version 9.0",
            ".target sm_75",
            ".address_size 64",
            "",
            ".visible .entry k(",
            "\t.param .u64 k_param_0,",
            "\t.param .u64 k_param_1,",
            "\t.param .u32 k_param_2",
            ")",
            "{",
            f"\t.reg .pred \t%p<{_NEST_DEPTH + 2}>;",
            f"\t.reg .f32 \t%f<{w.registers['%f']}>;",
            f"\t.reg .b32 \t%r<{w.registers['%r']}>;",
            f"\t.reg .b64 \t%rd<{w.registers['%rd']}>;",
            "",
            *w.lines,
            "}",
            "",
        ]
    )
    return SyntheticKernel(shape, ptx, w.num_instructions, w.num_loops, w.num_indirect_loads)
