"""PTX text to :class:`~ndpsim.frontend.ir.Module`.

A hand-written lexer and recursive-descent parser for the subset of PTX that nvcc emits for
CUDA kernels (module directives, ``.entry``/``.func`` with parameters, register and variable
declarations, labels, predicated instructions and their operands, calls). It also checks what the
PTX ISA asks of an instruction: a writable destination, type suffixes that are types, the operand
count of each opcode ndpsim executes, and a callee the module defines or declares. Anything it
cannot read or that breaks these rules is a :class:`PTXSyntaxError`; an opcode outside the PTX
ISA is an :class:`UnsupportedInstruction`. Both name the file, line, column and token.
"""

from __future__ import annotations

import bisect
import re
import struct
from dataclasses import dataclass
from pathlib import Path

from ndpsim.errors import PTXSyntaxError, SourceLocation, UnsupportedInstruction
from ndpsim.frontend.ir import (
    NO_DESTINATION_OPCODES,
    PTX_TYPES,
    Address,
    ArgumentList,
    Function,
    Immediate,
    Instruction,
    Module,
    Operand,
    Parameter,
    PtxType,
    Register,
    RegisterPair,
    Sink,
    Space,
    SpecialRegister,
    Symbol,
    Variable,
    Vector,
)
from ndpsim.frontend.typecheck import check_module
from ndpsim.textfile import read_text

#: Registers one function may declare. nvcc's largest in our suite is 651; the bound stops a
#: typo such as %r<4000000000> from exhausting memory while the declaration is expanded.
MAX_REGISTERS = 1 << 20

#: Every opcode of the PTX ISA (through 9.0). Opcodes outside this set are rejected by the parser;
#: opcodes inside it that the interpreter cannot execute are rejected when a module is loaded.
PTX_OPCODES = frozenset(
    """abs activemask add addc alloca and applypriority atom bar barrier bfe bfi bfind bmsk bra
    brev brkpt brx call clz cnot copysign cos cp createpolicy cvt cvta discard div dp2a dp4a
    elect ex2 exit fence fma fns getctarank griddepcontrol isspacep istypep ld ldmatrix ldu lg2
    lop3 mad mad24 madc mapa match max mbarrier membar min mma mov movmatrix mul mul24 multimem
    nanosleep neg not or pmevent popc prefetch prefetchu prmt rcp red redux rem ret rsqrt sad
    selp set setmaxnreg setp shf shfl shl shr sin slct sqrt st stackrestore stacksave stmatrix
    sub subc suld suq sured sust szext tanh testp tex tld4 trap txq vabsdiff vadd vmad vmax
    vmin vote vset vshl vshr vsub wgmma wmma xor""".split()  # noqa: SIM905
)

#: Special (hardware) registers; any other ``%name`` is a virtual register.
SPECIAL_REGISTERS = frozenset(
    """tid ntid ctaid nctaid laneid warpid nwarpid smid nsmid gridid clock clock64 clock_hi
    lanemask_eq lanemask_le lanemask_lt lanemask_ge lanemask_gt globaltimer globaltimer_lo
    globaltimer_hi total_smem_size dynamic_smem_size aggr_smem_size""".split()  # noqa: SIM905
)

#: Operands each opcode the interpreter executes takes (the allowed counts), from the PTX ISA's
#: "Instruction Set" chapter: "Integer Arithmetic", "Floating-Point", "Half Precision", "Comparison
#: and Selection", "Logic and Shift", "Data Movement and Conversion", "Parallel Synchronization and
#: Communication" and "Control Flow" instructions. A pair ``p|q``, a vector ``{a, b}`` and an
#: address ``[a+8]`` are one operand each. Where a later ISA added an input (``min``/``max`` with
#: three sources, ISA 8.8) or a form leaves one out (``vote``/``shfl`` without ``.sync`` take no
#: member mask), both counts are allowed. Opcodes not listed are left to the interpreter, which
#: rejects them when a module is loaded.
OPERAND_COUNTS: dict[str, tuple[int, ...]] = {
    **dict.fromkeys(("ret", "exit", "trap", "brkpt", "membar"), (0,)),
    **dict.fromkeys(("bra", "activemask", "nanosleep", "pmevent", "prefetch", "prefetchu"), (1,)),
    **dict.fromkeys(
        """neg abs not cnot popc clz brev bfind sqrt rsqrt rcp ex2 lg2 sin cos tanh testp mov cvt
        cvta isspacep ld ldu st red""".split(),  # noqa: SIM905
        (2,),
    ),
    **dict.fromkeys(
        "add sub mul mul24 div rem copysign and or xor shl shr setp set atom".split(),  # noqa: SIM905
        (3,),
    ),
    **dict.fromkeys("mad mad24 fma bfe prmt shf sad selp slct".split(), (4,)),  # noqa: SIM905
    **dict.fromkeys(("bfi", "lop3"), (5,)),
    **dict.fromkeys(("min", "max"), (3,)),  # the three-source form is not executed
    "fence": (0, 2),  # fence.proxy.tensormap::generic.acquire takes [addr], size
    "bar": (1, 2),  # bar.sync a{, b}; bar.warp.sync membermask
    "barrier": (1, 2),
    "vote": (2, 3),
    "shfl": (4, 5),
}

#: Modifiers that change an opcode's operand counts (same sections of the PTX ISA): ``setp``/``set``
#: with a BoolOp read a third predicate; ``atom.cas`` a swap value; ``st.async``/``red.async`` an
#: mbarrier and ``st.bulk`` an initial value; ``lop3`` with a BoolOp writes ``d|p`` and reads a
#: predicate; ``bar.red`` writes a result and reads a predicate; ``barrier.cluster`` takes none.
OPERAND_COUNTS_WITH: dict[tuple[str, str], tuple[int, ...]] = {
    **{(op, logic): (4,) for op in ("setp", "set") for logic in ("and", "or", "xor")},
    ("atom", "cas"): (4,),
    ("st", "async"): (3,),
    ("st", "bulk"): (3,),
    ("red", "async"): (3,),
    ("lop3", "and"): (6,),
    ("lop3", "or"): (6,),
    ("bar", "red"): (3, 4),
    ("barrier", "red"): (3, 4),
    ("barrier", "cluster"): (0,),
}

#: ``cvt`` to or from a packed type (``.f16x2``, ``.e4m3x2``, ``.e2m1x4``, ...) reads one source,
#: or two to pack, plus ``rbits`` with ``.rs`` (PTX ISA "Data Movement and Conversion: cvt").
_PACKED_TYPE = re.compile(r"[a-z0-9]+x[24]")
_PACKED_CVT_COUNTS = (2, 3, 4)

#: ``.L2::cache_hint`` adds a cache-policy operand to ld, st, atom and red (PTX ISA "Cache
#: Eviction Priority Hints").
_CACHE_HINT = "L2::cache_hint"

#: Opcodes whose first operand is a destination for some modifiers only (``mbarrier.init`` takes
#: an address where ``mbarrier.arrive`` writes a state; ``wmma.store``, ``wgmma.wait_group 0``,
#: ``multimem.st``), so the IR's destination split does not tell whether it must be writable.
_DESTINATION_VARIES = frozenset({"mbarrier", "multimem", "wgmma", "wmma"})

#: A modifier spelled like a fundamental type, a letter and a width (``.q32``, ``.u33``), that is
#: not one of PTX_TYPES is a misspelt type. Vector and matrix counts (``.v4``, ``.x4``) and the
#: sub-byte element types of the matrix instructions (``.s4``, ``.u4``, ``.b1``; PTX ISA
#: "Warp-level Matrix Multiply-Accumulate Instructions") are spelled the same way but are valid.
_TYPE_LIKE = re.compile(r"[a-z][0-9]+")
_NOT_A_TYPE = re.compile(r"[vx][0-9]+|s4|u4|b1")

_TOKEN_RE = re.compile(
    r"""
    (?P<nl>\n)
  | (?P<ws>[ \t\r\f\v]+)
  | (?P<comment>//[^\n]*|/\*.*?\*/)
  | (?P<string>"[^"\n]*")
  | (?P<hexfloat>0[fF][0-9a-fA-F]{8}(?![0-9a-zA-Z_])|0[dD][0-9a-fA-F]{16}(?![0-9a-zA-Z_]))
  | (?P<hex>0[xX][0-9a-fA-F]+U?)
  | (?P<decfloat>[0-9]+\.[0-9]*(?:[eE][+-]?[0-9]+)?|[0-9]+[eE][+-]?[0-9]+)
  | (?P<int>[0-9]+U?)
  | (?P<word>[A-Za-z_$%.][A-Za-z0-9_$.]*(?:::[A-Za-z0-9_$.]+)*)
  | (?P<punct>[\[\]{}(),;:<>+\-|!@=*])
    """,
    re.VERBOSE | re.DOTALL,
)

_LINE_DIRECTIVES = frozenset({".version", ".target", ".address_size", ".file", ".loc"})
#: Opcodes that access memory through exactly one address operand (PTX ISA).
_ADDRESSED = frozenset({"ld", "ldu", "st", "atom", "red", "prefetch", "prefetchu"})
_SHUFFLE_MODES = frozenset({"up", "down", "bfly", "idx"})
#: Characters of the longest 64-bit literal (octal: a leading 0 and 22 digits); anything longer
#: is wider than 64 bits.
_MAX_LITERAL_DIGITS = 23
#: Largest variable of each state space, in bytes. Shared: the largest shared memory of one
#: NVIDIA SM (228 KB on H100; CUDA "Compute Capabilities" table); local: CUDA's 512 KB of local
#: memory per thread (same table); const: the 64 KB constant bank (same table); param: the 32,764
#: bytes of kernel parameters since CUDA 12.1 (CUDA Programming Guide, "Function Parameters");
#: global: assumption, 1 GiB, far above any workload's static data (the suite declares none),
#: so that a typo in a size cannot exhaust the host's memory when the variable is allocated.
MAX_VARIABLE_BYTES = {
    Space.SHARED: 228 * 1024,
    Space.LOCAL: 512 * 1024,
    Space.CONST: 64 * 1024,
    Space.PARAM: 32_764,
    Space.GLOBAL: 1 << 30,
}
#: Largest alignment a declaration may ask for (assumption: a 4 KiB page; nvcc asks for 16 at
#: most), so that a typo cannot make the layout pad by gigabytes.
MAX_ALIGN_BYTES = 4096
_PERF_DIRECTIVES = frozenset(
    """.maxntid .reqntid .minnctapersm .maxnctapersm .maxnreg .maxclusterrank .reqnctapercluster
    .explicitcluster .noreturn .abi_preserve .abi_preserve_control""".split()  # noqa: SIM905
)
_LINKAGE = frozenset({".visible", ".extern", ".weak", ".common"})


@dataclass(frozen=True, slots=True)
class Token:
    kind: str
    text: str
    line: int
    column: int


def tokenize(text: str, path: str) -> list[Token]:
    """Split PTX text into tokens, keeping newlines (some directives end at the line's end)."""
    line_starts = [0] + [m.end() for m in re.finditer("\n", text)]
    tokens: list[Token] = []
    pos = 0
    end = len(text)
    while pos < end:
        m = _TOKEN_RE.match(text, pos)
        line = bisect.bisect_right(line_starts, pos)
        column = pos - line_starts[line - 1] + 1
        if m is None:
            if text.startswith("/*", pos):
                raise PTXSyntaxError(
                    "unterminated block comment", SourceLocation(path, line, column), "/*"
                )
            raise PTXSyntaxError(
                "unexpected character", SourceLocation(path, line, column), text[pos]
            )
        kind = m.lastgroup
        assert kind is not None
        if kind not in ("ws", "comment"):
            tokens.append(Token(kind, m.group(), line, column))
        pos = m.end()
    return tokens


def _float_from_hex(text: str) -> float:
    if text[1] in "fF":
        return struct.unpack(">f", bytes.fromhex(text[2:]))[0]
    return struct.unpack(">d", bytes.fromhex(text[2:]))[0]


class _Parser:
    def __init__(self, text: str, path: str):
        self.path = path
        self.tokens = tokenize(text, path)
        self.pos = 0
        # Module-level names used inside functions, and the targets of calls, resolved once the
        # whole module is read; a call may name a .func that is only declared (a prototype).
        self.pending_symbols: list[tuple[str, Token]] = []
        self.pending_calls: list[tuple[str, Token]] = []
        self.declared_functions: set[str] = set()

    # ----------------------------------------------------------------------- token helpers
    def _skip_newlines(self) -> None:
        while self.pos < len(self.tokens) and self.tokens[self.pos].kind == "nl":
            self.pos += 1

    def peek(self) -> Token | None:
        self._skip_newlines()
        return self.tokens[self.pos] if self.pos < len(self.tokens) else None

    def next(self) -> Token:
        tok = self.peek()
        if tok is None:
            last = self.tokens[-1] if self.tokens else Token("nl", "", 1, 1)
            raise PTXSyntaxError(
                "unexpected end of file", SourceLocation(self.path, last.line, last.column)
            )
        self.pos += 1
        return tok

    def current(self) -> Token:
        """The next token, left unconsumed; the end of the file is an error."""
        tok = self.next()
        self.pos -= 1
        return tok

    def at(self, text: str) -> bool:
        tok = self.peek()
        return tok is not None and tok.text == text

    def accept(self, text: str) -> bool:
        if self.at(text):
            self.pos += 1
            return True
        return False

    def expect(self, text: str, what: str | None = None) -> Token:
        tok = self.next()
        if tok.text != text:
            self.error(f"expected {what or repr(text)}", tok)
        return tok

    def loc(self, tok: Token) -> SourceLocation:
        return SourceLocation(self.path, tok.line, tok.column)

    def error(self, message: str, tok: Token) -> None:
        raise PTXSyntaxError(message, self.loc(tok), tok.text)

    def rest_of_line(self) -> list[Token]:
        out = []
        while self.pos < len(self.tokens) and self.tokens[self.pos].kind != "nl":
            out.append(self.tokens[self.pos])
            self.pos += 1
        return out

    def integer(self) -> int:
        negative = self.accept("-")
        tok = self.next()
        if tok.kind not in ("int", "hex"):
            self.error("expected an integer", tok)
        value = self.integer_value(tok)
        if negative and value > 1 << 63:
            self.error("integer literal wider than 64 bits", tok)
        return -value if negative else value

    def integer_value(self, tok: Token) -> int:
        """An integer literal's value: hexadecimal after 0x, octal after a leading 0 (PTX ISA
        "Integer Constants"), decimal otherwise. PTX integer constants are 64-bit: a literal
        wider than that is refused rather than wrapped."""
        digits = tok.text.rstrip("U")
        if len(digits) > _MAX_LITERAL_DIGITS:
            self.error("integer literal wider than 64 bits", tok)
        if tok.kind == "hex":
            value = int(digits, 16)
        elif len(digits) > 1 and digits.startswith("0"):
            if any(d not in "01234567" for d in digits):
                self.error("a literal with a leading 0 is octal; expected digits 0-7", tok)
            value = int(digits, 8)
        else:
            value = int(digits)
        if value >= 1 << 64:
            self.error("integer literal wider than 64 bits", tok)
        return value

    def type_name(self) -> PtxType:
        tok = self.next()
        if not tok.text.startswith(".") or tok.text[1:] not in PTX_TYPES:
            self.error("expected a PTX type such as .u32 or .f32", tok)
        return PTX_TYPES[tok.text[1:]]

    # ---------------------------------------------------------------------------- module
    def module(self) -> Module:
        version = target = ""
        address_size = 64
        functions: dict[str, Function] = {}
        variables: dict[str, Variable] = {}
        while (tok := self.peek()) is not None:
            text = tok.text
            if text in _LINE_DIRECTIVES:
                self.pos += 1
                words = [t.text for t in self.rest_of_line()]
                if text == ".version":
                    version = "".join(words)
                elif text == ".target":
                    target = "".join(words)
                elif text == ".address_size":
                    if words not in (["32"], ["64"]):
                        self.error(".address_size takes 32 or 64 (PTX ISA)", tok)
                    address_size = int(words[0])
                continue
            linkage = set()
            while text in _LINKAGE:
                linkage.add(text)
                self.pos += 1
                nxt = self.peek()
                if nxt is None:
                    self.error("expected a declaration after a linkage directive", tok)
                tok = nxt
                text = tok.text
            if text in (".entry", ".func"):
                func = self.function()
                if func is not None:
                    if func.name in functions:
                        self.error("function defined twice", tok)
                    functions[func.name] = func
            elif text in (".global", ".const", ".shared", ".local"):
                var = self.variable(extern=".extern" in linkage)
                self.declare(variables, var.name, var, tok)
            elif text == ".pragma":
                self.skip_statement()
            elif text == ".section":
                self.skip_section()
            else:
                self.error("expected a module-level directive (.entry, .func, .global, ...)", tok)
        if not version:
            first = self.tokens[0] if self.tokens else Token("nl", "", 1, 1)
            raise PTXSyntaxError(
                "missing .version directive", self.loc(first), first.text if self.tokens else ""
            )
        return Module(self.path, version, target, address_size, functions, variables)

    def skip_statement(self) -> None:
        while self.next().text != ";":
            pass

    def skip_section(self) -> None:
        self.next()  # .section
        while not self.at("{"):
            self.next()
        depth = 0
        while True:
            tok = self.next()
            depth += tok.text == "{"
            depth -= tok.text == "}"
            if depth == 0:
                return

    # -------------------------------------------------------------------------- variables
    def variable(self, *, extern: bool) -> Variable:
        """``.shared .align 4 .b8 name[1024] = {...};`` (any state space)."""
        space_tok = self.next()
        space = Space(space_tok.text[1:])
        align = 0
        vector = 1
        while True:
            if self.at(".align"):
                align = self.alignment()
            elif self.at(".v2") or self.at(".v4") or self.at(".v8"):
                vector = int(self.next().text[2:])
            elif self.at(".ptr") or self.at(".global") or self.at(".shared"):
                self.next()
            else:
                break
        vtype = self.type_name()
        name_tok = self.next()
        if name_tok.kind != "word":
            self.error("expected a variable name", name_tok)
        element_bytes = vtype.size_bytes * vector
        count, unsized = self.array_extent(space, element_bytes, name_tok)
        initializer: tuple[int | float, ...] = ()
        if self.accept("="):
            initializer = self.initializer()
        self.expect(";")
        size = 0 if unsized else element_bytes * count
        return Variable(
            name_tok.text, space, vtype, size, align or vtype.size_bytes * vector, initializer,
            extern=extern or unsized,
        )  # fmt: skip

    def alignment(self) -> int:
        """``.align N``: a power of two (PTX ISA "Variable and Parameter Attributes")."""
        self.expect(".align")
        value_tok = self.current()
        align = self.integer()
        if align < 1 or align & (align - 1) or align > MAX_ALIGN_BYTES:
            self.error(f".align takes a power of two from 1 to {MAX_ALIGN_BYTES}", value_tok)
        return align

    def array_extent(self, space: Space, element_bytes: int, name_tok: Token) -> tuple[int, bool]:
        """The element count of ``name[a][b]`` (1 for a scalar) and whether it is unsized
        (``name[]``); every dimension positive and the whole within its space's bound."""
        count = 1
        unsized = False
        while self.accept("["):
            if self.accept("]"):
                unsized = True
                continue
            dim_tok = self.current()
            dimension = self.integer()
            if dimension < 1:
                self.error("an array dimension must be a positive integer", dim_tok)
            count *= dimension
            limit = MAX_VARIABLE_BYTES[space]
            if count * element_bytes > limit:
                self.error(f"{name_tok.text} would take more than the {limit:,} bytes a "
                           f".{space.value} variable may hold", dim_tok)  # fmt: skip
            self.expect("]")
        return count, unsized

    def initializer(self) -> tuple[int | float, ...]:
        values: list[int | float] = []
        if self.accept("{"):
            while not self.accept("}"):
                if self.at("{"):
                    values.extend(self.initializer())
                else:
                    values.append(self.literal_value())
                self.accept(",")
        else:
            values.append(self.literal_value())
        return tuple(values)

    def literal_value(self) -> int | float:
        imm = self.immediate()
        return imm.value

    # -------------------------------------------------------------------------- functions
    def function(self) -> Function | None:
        kind_tok = self.next()
        is_kernel = kind_tok.text == ".entry"
        returns = self.param_list() if not is_kernel and self.at("(") else []
        name_tok = self.next()
        if name_tok.kind != "word":
            self.error("expected a function name", name_tok)
        params = self.param_list() if self.at("(") else []
        directives: dict[str, tuple[int, ...]] = {}
        while (tok := self.peek()) is not None and tok.text in _PERF_DIRECTIVES | {".pragma"}:
            self.pos += 1
            if tok.text == ".pragma":
                self.skip_statement()
                continue
            values = []
            while (t := self.peek()) is not None and t.kind in ("int", "hex"):
                values.append(self.integer())
                if not self.accept(","):
                    break
            directives[tok.text[1:]] = tuple(values)
        if self.accept(";"):  # a declaration (prototype) only
            self.declared_functions.add(name_tok.text)
            return None
        body_start = self.expect("{", "'{' to open the function body")
        return self.body(
            name_tok.text, is_kernel, params, returns, directives, self.loc(body_start)
        )

    def param_list(self) -> list[Parameter]:
        self.expect("(")
        params: list[Parameter] = []
        offset = 0
        while not self.accept(")"):
            tok = self.expect(".param", "'.param'")
            align = 0
            ptype: PtxType | None = None
            name = ""
            count = 1
            while True:
                t = self.peek()
                if t is None:
                    self.error("unterminated parameter list", tok)
                if t.text == ".align":
                    align = self.alignment()
                elif t.text.startswith(".") and t.text[1:] in PTX_TYPES:
                    ptype = self.type_name()
                elif t.text in (".ptr", ".global", ".shared", ".const", ".local"):
                    self.next()
                elif t.kind == "word" and not t.text.startswith("."):
                    name_tok = self.next()
                    name = name_tok.text
                    element_bytes = ptype.size_bytes if ptype is not None else 1
                    count, unsized = self.array_extent(Space.PARAM, element_bytes, name_tok)
                    if unsized:
                        self.error("a parameter array needs a size", name_tok)
                    break
                else:
                    self.error("expected a parameter type or name", t)
            if ptype is None:
                self.error("parameter without a type", tok)
            assert ptype is not None
            size = ptype.size_bytes * count
            align = align or ptype.size_bytes
            offset = (offset + align - 1) // align * align
            params.append(Parameter(name, ptype, size, align, offset))
            offset += size
            if offset > MAX_VARIABLE_BYTES[Space.PARAM]:
                self.error(f"parameters take more than the {MAX_VARIABLE_BYTES[Space.PARAM]:,} "
                           "bytes a kernel may be passed", tok)  # fmt: skip
            if any(p.name == name for p in params[:-1]):
                self.error(f"parameter {name} is declared twice", tok)
            if not self.accept(","):
                self.expect(")", "',' or ')' in the parameter list")
                break
        return params

    def body(
        self,
        name: str,
        is_kernel: bool,
        params: list[Parameter],
        returns: list[Parameter],
        directives: dict[str, tuple[int, ...]],
        location: SourceLocation,
    ) -> Function:
        registers: dict[str, PtxType] = {}
        variables: dict[str, Variable] = {}
        raw: list[tuple[Token, Instruction]] = []
        labels: dict[str, int] = {}
        depth = 1
        while depth:
            tok = self.peek()
            if tok is None:
                raise PTXSyntaxError(f"function {name!r} is not closed by '}}'", location)
            text = tok.text
            if text == "{":
                self.pos += 1
                depth += 1
            elif text == "}":
                self.pos += 1
                depth -= 1
            elif text in (".loc", ".file"):
                self.pos += 1
                self.rest_of_line()
            elif text == ".pragma":
                self.skip_statement()
            elif text == ".reg":
                self.pos += 1
                self.register_declaration(registers)
            elif text in (".shared", ".local", ".const", ".global", ".param"):
                var = self.variable(extern=False)  # .param: a call's arguments and return value
                self.declare(variables, var.name, var, tok)
            elif text == ".extern":
                self.pos += 1
                var = self.variable(extern=True)
                self.declare(variables, var.name, var, tok)
            elif tok.kind == "word" and self._is_label():
                self.pos += 2
                if text in labels:
                    self.error("label defined twice", tok)
                labels[text] = len(raw)
            elif text == "@" or (tok.kind == "word" and not text.startswith((".", "%"))):
                raw.append(self.instruction(len(raw)))
            else:
                self.error("expected an instruction, a label or a declaration", tok)
        instructions = [inst for _, inst in raw]
        func = Function(
            name, is_kernel, params, registers, variables, instructions, labels, location,
            directives,
        )  # fmt: skip
        self.check_names(func, raw, {p.name for p in returns})
        return func

    def _is_label(self) -> bool:
        i = self.pos + 1
        return i < len(self.tokens) and self.tokens[i].text == ":"

    def register_declaration(self, registers: dict[str, PtxType]) -> None:
        if self.at(".v2") or self.at(".v4"):
            self.next()
        rtype = self.type_name()
        while True:
            tok = self.next()
            # nvcc declares an unused ``.reg .b32 temp_param_reg;`` in call sequences: no '%'.
            if tok.kind != "word" or tok.text.startswith("."):
                self.error("expected a register name such as %r<4> or %f1", tok)
            if self.accept("<"):
                count_tok = self.current()
                count = self.integer()
                self.expect(">")
                if len(registers) + count > MAX_REGISTERS:
                    self.error(
                        f"more than {MAX_REGISTERS:,} registers in one function; "
                        "ndpsim keeps every declared register of every thread",
                        count_tok,
                    )
                for i in range(count):
                    self.declare(registers, f"{tok.text}{i}", rtype, tok)
            else:
                self.declare(registers, tok.text, rtype, tok)
            if self.accept(";"):
                return
            self.expect(",", "',' or ';' after a register name")

    def declare(self, table: dict, name: str, value, tok: Token) -> None:
        """Enter a register or variable; declaring a name again is allowed only as it was
        (nvcc repeats ``.reg .b32 temp_param_reg;`` in the nested scopes of call sequences,
        which ndpsim flattens), never with another type or size."""
        earlier = table.get(name)
        if earlier is not None and earlier != value:
            self.error(f"{name} is declared again differently (first as {_described(earlier)}, "
                       f"now as {_described(value)})", tok)  # fmt: skip
        table[name] = value

    # ------------------------------------------------------------------------ instructions
    def instruction(self, pc: int) -> tuple[Token, Instruction]:
        """One statement, checked against what PTX allows its opcode, and its first token."""
        first = self.peek()
        assert first is not None
        guard = None
        if self.accept("@"):
            negated = self.accept("!")
            gtok = self.next()
            if gtok.kind != "word" or not gtok.text.startswith("%"):
                self.error("expected a predicate register after '@'", gtok)
            guard = Register(gtok.text, negated)
        mtok = self.next()
        if mtok.kind != "word" or mtok.text.startswith((".", "%")):
            self.error("expected an opcode", mtok)
        opcode, *modifiers = mtok.text.split(".")
        if opcode not in PTX_OPCODES:
            raise UnsupportedInstruction(
                f"unknown opcode {opcode!r}: not an instruction of the PTX ISA",
                self.loc(mtok),
                mtok.text,
            )
        self.check_types(mtok)
        # The IR's split of destinations from sources says whether the first operand is written.
        writes = opcode not in NO_DESTINATION_OPCODES and opcode not in _DESTINATION_VARIES
        operands: list[Operand] = []
        starts: list[Token] = []  # each operand's first token, to point at it in errors
        if not self.accept(";"):
            while True:
                starts.append(self.current())
                destination = f"the destination of {mtok.text}" if writes and not operands else ""
                operands.append(self.operand(destination))
                if isinstance(operands[-1], ArgumentList) and opcode != "call":
                    self.error("expected an operand; only call takes a '(...)' list", starts[-1])
                if self.accept(";"):
                    break
                self.expect(",", "',' or ';' after an operand")
        self.check_operand_count(mtok, starts, semicolon=self.tokens[self.pos - 1])
        self.check_shape(mtok, opcode, modifiers, operands, starts)
        if opcode == "call":
            self.call_target(operands, starts)
        inst = Instruction(pc, opcode, tuple(modifiers), tuple(operands), guard, self.loc(first))
        return first, inst

    def check_types(self, mtok: Token) -> None:
        """A modifier spelled like a type (``add.q32``) must be one; see _TYPE_LIKE."""
        for m in re.finditer(r"\.([^.]*)", mtok.text):
            name = m.group(1)
            if name in PTX_TYPES or not _TYPE_LIKE.fullmatch(name) or _NOT_A_TYPE.fullmatch(name):
                continue
            valid = ", ".join(f".{t}" for t in PTX_TYPES)
            bad = Token("word", m.group(), mtok.line, mtok.column + m.start())
            self.error(f"unknown type {m.group()}: expected one of {valid}", bad)

    def check_operand_count(self, mtok: Token, starts: list[Token], semicolon: Token) -> None:
        """An executed opcode must have as many operands as OPERAND_COUNTS allows it."""
        counts = _operand_counts(mtok.text)
        if counts is None or len(starts) in counts:
            return
        *fewer, most = [str(c) for c in counts]
        expected = f"{', '.join(fewer)} or {most}" if fewer else most
        noun = "operand" if counts == (1,) else "operands"
        where = starts[counts[-1]] if len(starts) > counts[-1] else semicolon
        self.error(f"expected {expected} {noun} for {mtok.text}, found {len(starts)}", where)

    def check_shape(self, mtok: Token, opcode: str, modifiers: list[str],
                    operands: list[Operand], starts: list[Token]) -> None:  # fmt: skip
        """What kinds of operands an opcode takes (PTX ISA), beyond their number: a branch
        names a label, a memory instruction one address, a shuffle its mode."""
        where = starts[0] if starts else mtok
        if opcode == "bra" and operands and not isinstance(operands[-1], Symbol):
            self.error("bra takes the name of a label", starts[-1])
        if opcode in _ADDRESSED and operands:
            addresses = sum(isinstance(op, Address) for op in operands)
            if addresses != 1:
                self.error(f"{mtok.text} takes one address operand [...], found {addresses}",
                           where)  # fmt: skip
        if opcode == "shfl" and not _SHUFFLE_MODES & set(modifiers):
            self.error("shfl takes a mode: .up, .down, .bfly or .idx", mtok)

    def call_target(self, operands: list[Operand], starts: list[Token]) -> None:
        """Queue the function a ``call`` names, after its return list if it has one."""
        i = 1 if operands and isinstance(operands[0], ArgumentList) else 0
        target = operands[i] if i < len(operands) else None
        if isinstance(target, Symbol):
            self.pending_calls.append((target.name, starts[i]))
        elif not isinstance(target, Register):  # a register holds the address of an indirect call
            where = starts[i] if target is not None else self.tokens[self.pos - 1]
            self.error("expected the name of the called function", where)

    def operand(self, destination: str = "") -> Operand:
        """One operand; when ``destination`` names the instruction, it must be writable."""
        tok = self.current()
        if self.accept("["):
            if destination:
                self.error(f"{destination} must be a register or '_', not an address", tok)
            return self.address(tok)
        if self.accept("{"):
            elements = []
            while not self.accept("}"):
                elements.append(self.simple_operand())
                if destination:
                    self.writable(elements[-1], self.tokens[self.pos - 1], destination)
                if not self.at("}"):
                    self.expect(",", "',' or '}' in a vector operand")
            if not 1 <= len(elements) <= 8:
                self.error("a vector operand holds 1 to 8 elements", tok)
            return Vector(tuple(elements))
        if self.accept("("):
            return self.argument_list()
        first = self.writable(self.simple_operand(), tok, destination)
        if self.accept("|"):
            second_tok = self.current()
            second = self.writable(self.simple_operand(), second_tok, destination)
            if not isinstance(first, Register | Sink) or not isinstance(second, Register | Sink):
                self.error("expected two registers around '|'", tok)
            return RegisterPair(first, second)  # type: ignore[arg-type]
        return first

    def writable(self, op: Operand, tok: Token, destination: str) -> Operand:
        """``op`` itself, unless it is a destination that cannot be written."""
        if not destination:
            return op
        match op:
            case Immediate():
                what = "an immediate"
            case SpecialRegister():
                what = "a read-only special register"
            case Register(negated=True):
                what = "a negated predicate"
            case Symbol():
                what = "a name"
            case _:
                return op
        self.error(f"{destination} must be a register or '_', not {what}", tok)
        return op

    def argument_list(self) -> ArgumentList:
        """``(a, b)`` after its '(': the return or argument list of a call."""
        elements = []
        while not self.accept(")"):
            elements.append(self.simple_operand())
            if not self.at(")"):
                self.expect(",", "',' or ')' in a call's argument list")
        return ArgumentList(tuple(elements))

    def simple_operand(self) -> Operand:
        tok = self.peek()
        assert tok is not None
        if self.accept("!"):
            reg = self.next()
            if reg.kind != "word" or not reg.text.startswith("%"):
                self.error("expected a predicate register after '!'", reg)
            return Register(reg.text, negated=True)
        if tok.text == "-" or tok.kind in ("int", "hex", "hexfloat", "decfloat"):
            return self.immediate()
        self.next()
        if tok.kind != "word":
            self.error("expected an operand", tok)
        if tok.text == "_":
            return Sink()
        if tok.text.startswith("%"):
            base, _, component = tok.text[1:].partition(".")
            if base in SPECIAL_REGISTERS or re.fullmatch(r"(envreg|pm)\d+", base):
                return SpecialRegister(base, component or None)
            return Register(tok.text)
        return Symbol(tok.text)

    def immediate(self) -> Immediate:
        negative = self.accept("-")
        tok = self.next()
        text = ("-" if negative else "") + tok.text
        if tok.kind == "hexfloat":
            value: int | float = _float_from_hex(tok.text)
            if negative:
                value = -value
        elif tok.kind == "decfloat":
            value = float(text)
        elif tok.kind in ("int", "hex"):
            value = self.integer_value(tok)
            if negative and value > 1 << 63:
                self.error("integer literal wider than 64 bits", tok)
            value = -value if negative else value
        else:
            self.error("expected a number", tok)
        return Immediate(value, text)

    def address(self, open_tok: Token) -> Address:
        base: Register | Symbol | None = None
        offset = 0
        tok = self.peek()
        if tok is None:
            self.error("unterminated address", open_tok)
        assert tok is not None
        if tok.kind == "word":
            self.next()
            base = Register(tok.text) if tok.text.startswith("%") else Symbol(tok.text)
            if self.accept("+") or self.at("-"):
                offset = self.integer()
        else:
            offset = self.integer()
        self.expect("]", "']' to close the address")
        return Address(base, offset)

    # ------------------------------------------------------------------------- validation
    def check_names(
        self, func: Function, raw: list[tuple[Token, Instruction]], returns: set[str]
    ) -> None:
        """Every register must be declared; every symbol a label, variable or parameter."""
        params = {p.name for p in func.params} | returns
        for tok, inst in raw:
            regs = [inst.guard] if inst.guard is not None else []
            symbols: list[Symbol] = []
            stack = list(inst.operands)
            if inst.opcode == "call":  # call_target queued the callee; the lists name variables
                stack = [op for op in stack if not isinstance(op, Symbol)]
            while stack:
                op = stack.pop()
                if isinstance(op, Register):
                    regs.append(op)
                elif isinstance(op, Address):
                    if isinstance(op.base, Register):
                        regs.append(op.base)
                    elif isinstance(op.base, Symbol):
                        symbols.append(op.base)
                elif isinstance(op, Vector | ArgumentList):
                    stack.extend(op.elements)
                elif isinstance(op, RegisterPair):
                    stack.extend((op.first, op.second))
                elif isinstance(op, Symbol):
                    symbols.append(op)
            for reg in regs:
                if reg.name not in func.registers:
                    self.error(f"register {reg.name} is used but never declared", tok)
            for sym in symbols:
                if inst.opcode in ("bra", "brx"):
                    if inst.opcode == "bra" and sym.name not in func.labels:
                        self.error(f"branch to undefined label {sym.name!r}", tok)
                elif sym.name not in func.variables and sym.name not in params:
                    self.pending_symbols.append((sym.name, tok))


def _described(declared: PtxType | Variable) -> str:
    if isinstance(declared, PtxType):
        return f".{declared.name}"
    return f".{declared.space.value} .{declared.type.name}, {declared.size_bytes} bytes"


def _operand_counts(mnemonic: str) -> tuple[int, ...] | None:
    """The operand counts PTX allows ``opcode.modifiers``; None for an opcode not checked."""
    opcode, *modifiers = mnemonic.split(".")
    counts = OPERAND_COUNTS.get(opcode)
    if counts is None:
        return None
    for m in modifiers:
        counts = OPERAND_COUNTS_WITH.get((opcode, m), counts)
    if opcode == "cvt" and any(_PACKED_TYPE.fullmatch(m) for m in modifiers):
        counts = _PACKED_CVT_COUNTS
    if _CACHE_HINT in modifiers:
        counts = tuple(c + 1 for c in counts)
    return counts


def parse_ptx(text: str, path: str = "<string>") -> Module:
    """Parse PTX source text into a :class:`Module`."""
    parser = _Parser(text, path)
    module = parser.module()
    for name, tok in parser.pending_symbols:
        if name not in module.variables and name not in module.functions:
            parser.error(f"undefined symbol {name!r}", tok)
    for name, tok in parser.pending_calls:
        callee = module.functions.get(name)
        if callee is None and name not in parser.declared_functions:
            parser.error(
                f"call to undefined function {name!r}: expected a .func defined or declared "
                "in this module",
                tok,
            )
        if callee is not None and callee.is_kernel:
            parser.error(f"call to kernel {name!r}: expected a .func, not an .entry", tok)
    check_module(module)
    return module


def parse_ptx_file(path: str | Path) -> Module:
    """Parse a ``.ptx`` file; the module remembers its path for error messages."""
    path = Path(path)
    return parse_ptx(read_text(path, PTXSyntaxError), str(path))
