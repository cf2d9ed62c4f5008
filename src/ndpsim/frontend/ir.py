"""The intermediate representation of a parsed PTX module.

Everything here is an immutable record of what the text says, enriched only with facts that
follow from the PTX ISA alone (which operands an opcode writes, the widths of its types). Control
flow, liveness and the rest are computed by :mod:`ndpsim.analysis`; execution by :mod:`ndpsim.simt`.
An instruction's ``pc`` is its index in its function, which is what traces and analyses refer to.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from functools import cached_property

from ndpsim.errors import PTXError, SourceLocation


class Space(StrEnum):
    """PTX state spaces that instructions and variables refer to."""

    GLOBAL = "global"
    SHARED = "shared"
    LOCAL = "local"
    PARAM = "param"
    CONST = "const"
    GENERIC = "generic"


@dataclass(frozen=True, slots=True)
class PtxType:
    """A fundamental PTX type such as ``.f32``: kind letter and width in bits."""

    name: str
    kind: str  # "s" signed, "u" unsigned, "b" untyped bits, "f" float, "pred" predicate
    bits: int

    @property
    def size_bytes(self) -> int:
        return max(1, self.bits // 8)

    @property
    def is_float(self) -> bool:
        return self.kind == "f"

    @property
    def is_signed(self) -> bool:
        return self.kind == "s"


def _make_types() -> dict[str, PtxType]:
    types = {"pred": PtxType("pred", "pred", 1)}
    for kind in ("s", "u", "b"):
        for bits in (8, 16, 32, 64):
            types[f"{kind}{bits}"] = PtxType(f"{kind}{bits}", kind, bits)
    types["b128"] = PtxType("b128", "b", 128)
    for bits in (16, 32, 64):
        types[f"f{bits}"] = PtxType(f"f{bits}", "f", bits)
    types["f16x2"] = PtxType("f16x2", "f", 32)
    types["bf16"] = PtxType("bf16", "f", 16)
    types["bf16x2"] = PtxType("bf16x2", "f", 32)
    types["tf32"] = PtxType("tf32", "f", 32)
    return types


PTX_TYPES: dict[str, PtxType] = _make_types()


# ----------------------------------------------------------------------------------- operands
@dataclass(frozen=True, slots=True)
class Register:
    """A virtual register such as ``%r3``; ``negated`` marks a ``!%p`` predicate operand."""

    name: str
    negated: bool = False

    def __str__(self) -> str:
        return ("!" if self.negated else "") + self.name


@dataclass(frozen=True, slots=True)
class SpecialRegister:
    """A read-only hardware register such as ``%tid.x`` (component ``x``) or ``%laneid``."""

    name: str
    component: str | None = None

    def __str__(self) -> str:
        return f"%{self.name}" + (f".{self.component}" if self.component else "")


@dataclass(frozen=True, slots=True)
class Immediate:
    """A literal; ``value`` is an int for integer literals and a float for ``0f``/``0d``/decimal."""

    value: int | float
    text: str

    @property
    def is_float(self) -> bool:
        return isinstance(self.value, float)

    def __str__(self) -> str:
        return self.text


@dataclass(frozen=True, slots=True)
class Symbol:
    """A name: a branch label, or a variable whose address is taken (``mov %r, smem``)."""

    name: str

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True, slots=True)
class Address:
    """A memory operand ``[base+offset]``; base is a register, a variable name, or absent."""

    base: Register | Symbol | None
    offset: int = 0

    def __str__(self) -> str:
        inner = str(self.base) if self.base is not None else ""
        if self.offset or self.base is None:
            inner += f"{'+' if self.offset >= 0 and self.base is not None else ''}{self.offset}"
        return f"[{inner}]"


@dataclass(frozen=True, slots=True)
class Sink:
    """The ``_`` placeholder for a result nobody reads."""

    def __str__(self) -> str:
        return "_"


@dataclass(frozen=True, slots=True)
class Vector:
    """A brace list ``{%f1, %f2}`` used by vector loads/stores."""

    elements: tuple[Operand, ...]

    def __str__(self) -> str:
        return "{" + ", ".join(map(str, self.elements)) + "}"


@dataclass(frozen=True, slots=True)
class RegisterPair:
    """The ``%p|%q`` form by which ``setp`` and ``shfl`` write two destinations."""

    first: Register | Sink
    second: Register | Sink

    def __str__(self) -> str:
        return f"{self.first}|{self.second}"


@dataclass(frozen=True, slots=True)
class ArgumentList:
    """The parenthesised return and argument lists of ``call (ret), f, (a, b)``."""

    elements: tuple[Operand, ...]

    def __str__(self) -> str:
        return "(" + ", ".join(map(str, self.elements)) + ")"


Operand = (
    Register | SpecialRegister | Immediate | Symbol | Address | Sink | Vector | RegisterPair
    | ArgumentList
)  # fmt: skip


def registers_in(operand: Operand) -> tuple[str, ...]:
    """Names of the virtual registers an operand mentions (address bases, vector elements)."""
    match operand:
        case Register(name=name):
            return (name,)
        case Address(base=Register(name=name)):
            return (name,)
        case Vector(elements=elements) | ArgumentList(elements=elements):
            return tuple(n for e in elements for n in registers_in(e))
        case RegisterPair(first=first, second=second):
            return registers_in(first) + registers_in(second)
        case _:
            return ()


# -------------------------------------------------------------------------------- instructions
#: Opcodes that write no register: their operands are all read.
NO_DESTINATION_OPCODES = frozenset(
    {
        "st", "red", "bra", "ret", "exit", "bar", "barrier", "membar", "fence", "prefetch",
        "prefetchu", "trap", "brkpt", "nanosleep", "pmevent", "call", "cp", "stmatrix", "brx",
        "stackrestore", "discard", "applypriority", "setmaxnreg", "sust", "sured",
    }
)  # fmt: skip

TYPE_NAMES = frozenset(PTX_TYPES)
SPACE_NAMES = frozenset(s.value for s in Space if s is not Space.GENERIC)


@dataclass(frozen=True, slots=True)
class Instruction:
    """One PTX instruction: ``[@guard] opcode.modifiers operands;`` at index ``pc``."""

    pc: int
    opcode: str
    modifiers: tuple[str, ...]
    operands: tuple[Operand, ...]
    guard: Register | None
    location: SourceLocation

    @property
    def text(self) -> str:
        guard = f"@{self.guard} " if self.guard else ""
        mnemonic = ".".join((self.opcode, *self.modifiers))
        return f"{guard}{mnemonic} {', '.join(map(str, self.operands))}".rstrip()

    def __str__(self) -> str:
        return self.text

    @property
    def types(self) -> tuple[PtxType, ...]:
        """The type modifiers in the order written (``cvt.f32.s32`` gives f32 then s32)."""
        return tuple(PTX_TYPES[m] for m in self.modifiers if m in TYPE_NAMES)

    @property
    def space(self) -> Space | None:
        """The state space of a memory instruction; ``GENERIC`` when none is written."""
        if self.opcode not in MEMORY_OPCODES:
            return None
        for m in self.modifiers:
            if m in SPACE_NAMES:
                return Space(m)
        return Space.GENERIC

    @property
    def vector_width(self) -> int:
        for m in self.modifiers:
            if m in ("v2", "v4", "v8"):
                return int(m[1:])
        return 1

    def has(self, modifier: str) -> bool:
        return modifier in self.modifiers

    @property
    def num_destinations(self) -> int:
        if self.opcode in NO_DESTINATION_OPCODES or not self.operands:
            return 0
        return 1

    @property
    def destinations(self) -> tuple[Operand, ...]:
        return self.operands[: self.num_destinations]

    @property
    def sources(self) -> tuple[Operand, ...]:
        return self.operands[self.num_destinations :]

    @property
    def defs(self) -> tuple[str, ...]:
        """Registers this instruction writes."""
        return tuple(n for op in self.destinations for n in registers_in(op))

    @property
    def uses(self) -> tuple[str, ...]:
        """Registers this instruction reads, including its guard predicate."""
        names = [n for op in self.sources for n in registers_in(op)]
        if self.guard is not None:
            names.append(self.guard.name)
        return tuple(dict.fromkeys(names))

    @property
    def is_branch(self) -> bool:
        return self.opcode == "bra"

    @property
    def is_exit(self) -> bool:
        return self.opcode in ("ret", "exit")

    @property
    def branch_target(self) -> str | None:
        if self.opcode == "bra" and self.operands and isinstance(self.operands[-1], Symbol):
            return self.operands[-1].name
        return None


MEMORY_OPCODES = frozenset({"ld", "ldu", "st", "atom", "red", "prefetch", "prefetchu"})


# ----------------------------------------------------------------------------- declarations
@dataclass(frozen=True, slots=True)
class Variable:
    """A variable in a state space: shared arrays, local depots, module globals and constants."""

    name: str
    space: Space
    type: PtxType
    size_bytes: int
    align: int
    initializer: tuple[int | float, ...] = ()
    extern: bool = False  # ``.extern .shared`` arrays sized at launch time


@dataclass(frozen=True, slots=True)
class Parameter:
    """A kernel parameter, placed at ``offset`` in the kernel's parameter buffer."""

    name: str
    type: PtxType
    size_bytes: int
    align: int
    offset: int


@dataclass(eq=False)
class Function:
    """A ``.entry`` kernel (or ``.func`` device function) with its declarations and body."""

    name: str
    is_kernel: bool
    params: list[Parameter]
    registers: dict[str, PtxType]
    variables: dict[str, Variable]
    instructions: list[Instruction]
    labels: dict[str, int]
    location: SourceLocation
    directives: dict[str, tuple[int, ...]] = field(default_factory=dict)
    #: What later layers compute from the function once (its analyses, its decoded program),
    #: kept on it so that they live and die with it: a cache keyed by the function elsewhere
    #: would hold it alive through the values, which refer back to it.
    derived: dict[str, object] = field(default_factory=dict, repr=False)

    @cached_property
    def label_at(self) -> dict[int, str]:
        """The label (if any) naming each pc."""
        return {pc: name for name, pc in self.labels.items()}

    @property
    def param_bytes(self) -> int:
        if not self.params:
            return 0
        last = self.params[-1]
        return last.offset + last.size_bytes

    def variables_in(self, space: Space) -> list[Variable]:
        return [v for v in self.variables.values() if v.space is space]


@dataclass(eq=False)
class Module:
    """A parsed PTX file."""

    path: str
    version: str
    target: str
    address_size: int
    functions: dict[str, Function]
    variables: dict[str, Variable]

    @property
    def kernels(self) -> list[Function]:
        return [f for f in self.functions.values() if f.is_kernel]

    def function(self, name: str) -> Function:
        try:
            return self.functions[name]
        except KeyError:
            known = ", ".join(sorted(self.functions)) or "none"
            raise PTXError(
                f"{self.path}: no function named {name!r}; the module defines: {known}"
            ) from None
