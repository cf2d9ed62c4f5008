"""Operand types checked against the PTX ISA before anything runs.

PTX is typed: every register has a declared type and every instruction a type modifier, and the
ISA (section "Operand Type Information") lets an operand differ from the instruction's type only
where they are *compatible*: a bit-size type (``.b32``) goes with every type of its size, signed
and unsigned integers of one size go with each other, and nothing converts silently otherwise.
``ld``, ``st`` and ``cvt`` relax this (section "Operand Size Exceeding Instruction-Type Size"): a
register wider than the instruction's type is zero- or sign-extended on a load and truncated on a
store. Each opcode also admits only some kinds of type (``neg`` takes signed and float types,
``and`` bits and predicates, ``shfl`` exactly ``.b32``).

The parser checks the shape of an instruction (operand count, a label for ``bra``, one address);
this pass checks what its operands *are*: the register's type in each position, vector arity,
literal ranges, names that are variables and not functions. A violation is a
:class:`PTXTypeError` at the instruction, saying what the position expected and what it found.
The rules below cover every opcode the interpreter executes (``CHECKED_OPCODES``); the others are
rejected as unsupported when a module is loaded.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import NoReturn

from ndpsim.errors import PTXTypeError
from ndpsim.frontend.ir import (
    PTX_TYPES,
    Address,
    ArgumentList,
    Function,
    Immediate,
    Instruction,
    Module,
    Operand,
    PtxType,
    Register,
    RegisterPair,
    Sink,
    SpecialRegister,
    Symbol,
    Vector,
)

PRED = PTX_TYPES["pred"]
U32 = PTX_TYPES["u32"]
B32 = PTX_TYPES["b32"]
B64 = PTX_TYPES["b64"]

#: Packed formats of cvt (``.f16x2``, ``.e4m3x2``, ``.e2m1x4``).
_PACKED = re.compile(r"[a-z0-9]+x[24]")
#: Special registers of 64 bits (PTX ISA "Special Registers"); the rest are 32-bit.
_SPECIAL_64 = frozenset({"clock64", "globaltimer", "gridid"})
#: Special registers with ``.x``/``.y``/``.z`` components.
_SPECIAL_VECTORS = frozenset({"tid", "ntid", "ctaid", "nctaid"})

#: Which kinds of instruction type each opcode admits (PTX ISA, each instruction's ``.type`` set;
#: "s"/"u" signed/unsigned integer, "b" bits, "f" float, "pred" predicate).
_KINDS: dict[str, frozenset[str]] = {
    **dict.fromkeys(("add", "sub", "mul", "mad", "min", "max", "div"), frozenset("suf")),
    **dict.fromkeys(("mul24", "mad24", "rem", "sad", "bfe", "bfind"), frozenset("su")),
    **dict.fromkeys(("abs", "neg"), frozenset("sf")),
    **dict.fromkeys(
        ("fma", "sqrt", "rsqrt", "rcp", "sin", "cos", "ex2", "lg2", "tanh", "copysign", "testp"),
        frozenset("f"),
    ),
    **dict.fromkeys(("and", "or", "xor", "not"), frozenset({"b", "pred"})),
    **dict.fromkeys(
        ("cnot", "shl", "popc", "clz", "brev", "bfi", "prmt", "lop3", "shf"), frozenset("b")
    ),
    "shr": frozenset("bsu"),
    **dict.fromkeys(
        ("setp", "selp", "slct", "ld", "ldu", "st", "atom", "red", "cvt"), frozenset("bsuf")
    ),
    "set": frozenset("suf"),
    "mov": frozenset({"b", "s", "u", "f", "pred"}),
    "cvta": frozenset("u"),
    "shfl": frozenset("b"),
    "vote": frozenset({"b", "pred"}),
    "activemask": frozenset("b"),
}

#: Opcodes whose operands are not typed values (control, barriers, hints, calls).
_UNTYPED = frozenset({
    "bra", "ret", "exit", "bar", "barrier", "membar", "fence", "prefetch", "prefetchu",
    "nanosleep", "pmevent", "trap", "brkpt", "call", "isspacep",
})  # fmt: skip

#: Every opcode this pass knows; a test checks it covers all the interpreter executes.
CHECKED_OPCODES = frozenset(_KINDS) | _UNTYPED


@dataclass(frozen=True, slots=True)
class Slot:
    """What one operand position takes: a value of ``type`` (``wider``: a register wider than
    the type is allowed, as ld/st/cvt allow), a destination or not, a vector of ``vector``
    elements, a predicate pair ``d|p``, or an address."""

    type: PtxType | None = None
    destination: bool = False
    wider: bool = False
    vector: int = 0
    pair: bool = False
    address: bool = False
    any: bool = False


ANY = Slot(any=True)
ADDRESS = Slot(address=True)


def _dest(t: PtxType, **kw) -> Slot:
    return Slot(t, destination=True, **kw)


def _src(t: PtxType, **kw) -> Slot:
    return Slot(t, **kw)


def _double(t: PtxType) -> PtxType:
    return PTX_TYPES.get(f"{t.kind}{t.bits * 2}", t)


def check_module(module: Module) -> None:
    """Check every function of ``module``; raises :class:`PTXTypeError` at the first fault."""
    for function in module.functions.values():
        checker = _Checker(module, function)
        for inst in function.instructions:
            checker.instruction(inst)


class _Checker:
    def __init__(self, module: Module, function: Function):
        self.module = module
        self.function = function

    def fail(self, inst: Instruction, message: str) -> NoReturn:
        raise PTXTypeError(message, inst.location, inst.text)

    # ------------------------------------------------------------------------ instruction
    def instruction(self, inst: Instruction) -> None:
        if inst.guard is not None:
            self.register_type(inst, inst.guard, Slot(PRED), "the guard")
        if inst.opcode in _UNTYPED or inst.opcode not in _KINDS:
            return
        types = inst.types
        if not types:
            self.fail(inst, "the instruction needs a type such as .u32 or .f32")
        first = types[0]
        allowed = _KINDS[inst.opcode]
        if first.kind not in allowed:
            self.fail(inst, f"{inst.opcode} does not take .{first.name}; it takes "
                            f"{_kind_names(allowed)} types")  # fmt: skip
        self.modifiers(inst, first)
        n = len(inst.operands)
        if inst.has("L2::cache_hint"):  # a 64-bit cache policy follows the other operands
            slots = [*_slots(inst, first, types, n - 1)[: n - 1], _src(B64)]
        else:
            slots = _slots(inst, first, types, n)
        if len(slots) < len(inst.operands):  # the parser bounds the count; extra are hints
            slots = slots + [ANY] * (len(inst.operands) - len(slots))
        for position, (op, slot) in enumerate(zip(inst.operands, slots, strict=False)):
            self.operand(inst, op, slot, _ordinal(position))

    def modifiers(self, inst: Instruction, t: PtxType) -> None:
        """Modifiers that fit only some types: ``.wide``/``.hi``/``.lo`` need integers."""
        opcode = inst.opcode
        if opcode in ("mul", "mad") and (inst.has("wide") or inst.has("hi") or inst.has("lo")):
            if t.kind == "f":
                self.fail(inst, f"{opcode} .wide/.hi/.lo apply to integer types, not .{t.name}")
            if inst.has("wide") and t.bits not in (16, 32):
                self.fail(inst, f"{opcode}.wide takes a 16- or 32-bit type, not .{t.name}")
        elif inst.has("wide"):
            self.fail(inst, f"{opcode} has no .wide form")
        if opcode == "shfl" and t.bits != 32:
            self.fail(inst, f"shfl moves .b32 values, not .{t.name}")
        if opcode in ("cvta", "prmt", "lop3", "shf") and t.bits not in (32, 64):
            self.fail(inst, f"{opcode} takes a 32- or 64-bit type, not .{t.name}")
        if opcode == "set" and inst.types[0].name not in ("u32", "s32", "f32"):
            self.fail(inst, f"set writes .u32, .s32 or .f32, not .{inst.types[0].name}")
        if opcode == "set" and len(inst.types) < 2:
            self.fail(inst, "set takes a destination type and a source type (set.lt.u32.f32)")
        if opcode == "slct" and (len(inst.types) < 2 or inst.types[1].name not in ("s32", "f32")):
            self.fail(inst, "slct takes a second type, .s32 or .f32, for its selector")
        if opcode == "cvt" and len(inst.types) < 2 and not _packed_cvt(inst):
            self.fail(inst, "cvt takes a destination type and a source type (cvt.f32.s32)")

    # ----------------------------------------------------------------------------- operands
    def operand(self, inst: Instruction, op: Operand, slot: Slot, where: str) -> None:
        if slot.any:
            return
        if slot.address:
            if not isinstance(op, Address):
                self.fail(inst, f"the {where} operand must be an address [...], found {op}")
            if isinstance(op.base, Symbol) and op.base.name in self.module.functions:
                self.fail(inst, f"{op.base.name!r} is a function; an address names a variable")
            return
        if isinstance(op, Address):
            self.fail(inst, f"the {where} operand cannot be an address")
        if isinstance(op, Vector):
            if slot.vector <= 1 and not _packs(inst):
                self.fail(inst, f"the {where} operand cannot be a vector {{...}}")
            if slot.vector > 1 and len(op.elements) != slot.vector:
                self.fail(inst, f".v{slot.vector} takes {slot.vector} elements in its vector, "
                                f"found {len(op.elements)}")  # fmt: skip
            if _packs(inst):
                self.packed(inst, op, slot, where)
                return
            for element in op.elements:
                self.value(inst, element, slot, f"{where} operand's element")
            return
        if slot.vector > 1:
            self.fail(inst, f".v{slot.vector} takes a vector of {slot.vector} registers as its "
                            f"{where} operand, found {op}")  # fmt: skip
        if isinstance(op, RegisterPair):
            if not slot.pair:
                self.fail(inst, f"the {where} operand cannot be a pair d|p")
            self.value(inst, op.first, slot, f"{where} operand's first half")
            self.value(inst, op.second, Slot(PRED, destination=True), f"{where} operand's second")
            return
        self.value(inst, op, slot, f"{where} operand")

    def packed(self, inst: Instruction, vector: Vector, slot: Slot, where: str) -> None:
        """``mov.b64 %rd, {%r1, %r2}``: the elements together are as wide as the type."""
        t = slot.type
        assert t is not None
        widths = []
        for element in vector.elements:
            if isinstance(element, Register):
                widths.append(self.declared(element).bits)
            elif isinstance(element, Sink):
                widths.append(t.bits // len(vector.elements))
            else:
                self.fail(inst, f"the {where} operand's elements must be registers, found "
                                f"{element}")  # fmt: skip
        if len(set(widths)) != 1 or sum(widths) != t.bits:
            self.fail(inst, f"the {where} vector must split .{t.name} into equal registers; its "
                            f"elements are {', '.join(f'{w}-bit' for w in widths)}")  # fmt: skip

    def value(self, inst: Instruction, op: Operand, slot: Slot, where: str) -> None:
        t = slot.type
        assert t is not None
        match op:
            case Sink():
                if not slot.destination:
                    self.fail(inst, f"'_' can only be a destination, not the {where}")
            case Register():
                if op.negated and t.kind != "pred":
                    self.fail(inst, f"'!' negates predicates; the {where} is .{t.name}")
                self.register_type(inst, op, slot, f"the {where}")
            case Immediate():
                self.immediate(inst, op, t, where)
            case SpecialRegister():
                self.special(inst, op, t, slot, where)
            case Symbol():
                self.symbol(inst, op, t, where)
            case ArgumentList() | Vector() | RegisterPair() | Address():
                self.fail(inst, f"the {where} cannot be {op}")

    def declared(self, reg: Register) -> PtxType:
        return self.function.registers[reg.name]  # the parser refuses undeclared registers

    def register_type(self, inst: Instruction, reg: Register, slot: Slot, where: str) -> None:
        t = slot.type
        assert t is not None
        have = self.declared(reg)
        if not compatible(t, have, wider=slot.wider):
            wider = " or a wider integer or bit register" if slot.wider and t.kind != "pred" else ""
            self.fail(inst, f"{where} must be a .{t.name} register{wider} (or a compatible type "
                            f"of that size); {reg.name} is .{have.name}")  # fmt: skip

    def immediate(self, inst: Instruction, imm: Immediate, t: PtxType, where: str) -> None:
        if t.kind == "pred":
            # nvcc writes "true" as -1 (``mov.pred %p, -1``), as LLVM prints an i1 true; ptxas
            # takes it
            if imm.is_float or imm.value not in (0, 1, -1):
                self.fail(inst, f"the {where} is a predicate; a literal there must be 0, 1 "
                                "or -1 (true)")  # fmt: skip
            return
        if imm.is_float:
            if t.kind in "su":
                self.fail(inst, f"the {where} is .{t.name}: a floating-point literal "
                                f"({imm.text}) is not an integer")  # fmt: skip
            if t.kind == "b" and imm.text.lstrip("-")[:2].lower() == "0d" and t.bits < 64:
                self.fail(inst, f"the {where} is .{t.name}: a 64-bit 0d literal does not fit")
            return
        if t.kind == "f":
            return  # an integer literal in a float instruction is its value
        low = -(1 << (t.bits - 1))
        high = (1 << t.bits) - 1
        if not low <= imm.value <= high:
            self.fail(inst, f"the literal {imm.text} does not fit the {where}, which is "
                            f".{t.name} ({t.bits} bits)")  # fmt: skip

    def special(self, inst: Instruction, op: SpecialRegister, t: PtxType, slot: Slot,
                where: str) -> None:  # fmt: skip
        name, component = op.name, op.component
        if name in _SPECIAL_VECTORS and component not in ("x", "y", "z"):
            self.fail(inst, f"%{name} is read by component: %{name}.x, .y or .z")
        if name not in _SPECIAL_VECTORS and component is not None:
            self.fail(inst, f"%{name} has no components")
        bits = 64 if name in _SPECIAL_64 else 32
        if t.kind in ("pred", "f") or (t.bits != bits and not (slot.wider and t.bits > bits)):
            self.fail(inst, f"%{name} is a {bits}-bit integer; the {where} is .{t.name}")

    def symbol(self, inst: Instruction, sym: Symbol, t: PtxType, where: str) -> None:
        """A name as a value is the address of a variable (``mov.u64 %rd, smem``)."""
        name = sym.name
        if name in self.module.functions:  # the parser refuses labels and unknown names
            self.fail(inst, f"{name!r} is a function; the {where} takes a value or the address "
                            "of a variable")  # fmt: skip
        if t.kind not in "bsu" or t.bits not in (32, 64):
            self.fail(inst, f"the address of {name!r} is a 32- or 64-bit integer; the {where} "
                            f"is .{t.name}")  # fmt: skip


def compatible(want: PtxType, have: PtxType, *, wider: bool = False) -> bool:
    """Whether a register of type ``have`` may stand where the instruction expects ``want``.

    Same size: bit types match anything but predicates, signed and unsigned integers match,
    floats match only themselves. ``wider`` (ld, st, cvt): an integer or bit register wider than
    an integer or bit type, or a bit register wider than a float type.
    """
    if want.kind == "pred" or have.kind == "pred":
        return want.kind == have.kind
    if want.bits == have.bits:
        if "b" in (want.kind, have.kind):
            return True
        if want.kind in "su" and have.kind in "su":
            return True
        return want.name == have.name
    if wider and have.bits > want.bits:
        if want.kind in "bsu":
            return have.kind in "bsu"
        return have.kind == "b"
    return False


def _packed_cvt(inst: Instruction) -> bool:
    return inst.opcode == "cvt" and any(_PACKED.fullmatch(m) for m in inst.modifiers)


def _packs(inst: Instruction) -> bool:
    return inst.opcode == "mov"


def _slots(inst: Instruction, t: PtxType, types: tuple[PtxType, ...], n: int) -> list[Slot]:
    """The ``n`` operand positions of ``inst`` (first type ``t``), by the PTX ISA's syntax."""
    op = inst.opcode
    second = types[1] if len(types) > 1 else t
    if op in ("mul", "mul24") and inst.has("wide"):
        return [_dest(_double(t)), _src(t), _src(t)]
    if op in ("mad", "mad24") and inst.has("wide"):
        return [_dest(_double(t)), _src(t), _src(t), _src(_double(t))]
    if op in ("popc", "clz", "bfind"):
        return [_dest(U32), _src(t)]
    if op in ("shl", "shr"):
        return [_dest(t), _src(t), _src(U32)]
    if op == "bfe":
        return [_dest(t), _src(t), _src(U32), _src(U32)]
    if op == "bfi":
        return [_dest(t), _src(t), _src(t), _src(U32), _src(U32)]
    if op == "shf":
        return [_dest(t), _src(t), _src(t), _src(U32)]
    if op == "lop3":
        if n != 5:  # lop3.and/.or writes d|p and reads a predicate
            return [ANY] * n
        return [_dest(t), _src(t), _src(t), _src(t), _src(B32)]
    if op == "setp":
        return [_dest(PRED, pair=True), _src(t), _src(t), _src(PRED)]
    if op == "set":
        return [_dest(t), _src(second), _src(second), _src(PRED)]
    if op == "selp":
        return [_dest(t), _src(t), _src(t), _src(PRED)]
    if op == "slct":
        return [_dest(t), _src(t), _src(t), _src(second)]
    if op == "testp":
        return [_dest(PRED), _src(t)]
    if op == "cvt":
        if _packed_cvt(inst):  # .f16x2, .e4m3x2, ...: packing rules of their own
            return [ANY] * n
        return [_dest(t, wider=True), _src(second, wider=True)]
    if op == "cvta":
        return [_dest(t), _src(t)]
    if op in ("ld", "ldu"):
        return [_dest(t, wider=True, vector=_width(inst)), ADDRESS]
    if op == "st":
        return [ADDRESS, _src(t, wider=True, vector=_width(inst))]
    if op == "atom":
        return [_dest(t), ADDRESS, *[_src(t)] * (n - 2)]
    if op == "red":
        return [ADDRESS, *[_src(t)] * (n - 1)]
    if op == "shfl":
        return [_dest(t, pair=True), _src(t), _src(U32), _src(U32), _src(U32)]
    if op == "vote":
        dest = _dest(B32) if inst.has("ballot") else _dest(PRED)
        return [dest, _src(PRED), _src(U32)]
    if op == "activemask":
        return [_dest(B32)]
    # one destination and sources of the instruction's type: add, fma, and, not, mov, ...
    return [_dest(t), *[_src(t)] * (n - 1)]


def _width(inst: Instruction) -> int:
    return inst.vector_width if inst.vector_width > 1 else 0


def _ordinal(position: int) -> str:
    return ("first", "second", "third", "fourth", "fifth", "sixth")[min(position, 5)]


def _kind_names(kinds: frozenset[str]) -> str:
    names = {"s": "signed", "u": "unsigned", "b": "bit", "f": "float", "pred": "predicate"}
    ordered = [names[k] for k in ("s", "u", "b", "f", "pred") if k in kinds]
    return ", ".join(ordered[:-1]) + (" or " if len(ordered) > 1 else "") + ordered[-1]
