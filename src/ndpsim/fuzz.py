"""Mutation fuzzing of PTX: does every input end in an ndpsim error or a result?

A mutant is a committed kernel with one to three edits of the kinds a hostile or careless user
makes: a token replaced, dropped or repeated, or a targeted edit (a type swapped, a register of
another class, a literal too wide, braces nested deep, a vector width changed, an opcode swapped,
an address made absurd, an ``.align`` or ``.address_size`` broken, a shuffle without its mode).
Each mutant is parsed and decoded; one that is accepted is run by the host program of a workload
that uses its module, at ``tiny`` size and under small :class:`~ndpsim.simt.limits.Limits`.

An outcome is *accepted* (ran to the end, whatever it computed), *rejected* (an
:class:`NdpsimError`, at load or at run time), *crashed* (any other exception: a bug) or *hung*
(past its time). The test suite runs a few hundred mutants through hypothesis; ``bench/fuzz.py``
runs a campaign of tens of thousands and prints the distinct crash signatures.
"""

from __future__ import annotations

import random
import re
import signal
import traceback
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from ndpsim.errors import NdpsimError
from ndpsim.frontend.parser import parse_ptx
from ndpsim.simt.interpreter import compile_program
from ndpsim.simt.limits import Limits
from ndpsim.workloads.base import KERNEL_DIR, Device, get_workload, workload_names

#: Bounds a mutant runs under: enough for every committed kernel at ``tiny`` size (the largest
#: launch executes about 30,000 warp-instructions), small enough that a runaway ends in a second.
FUZZ_LIMITS = Limits(
    instructions_per_launch=2_000_000, launches=200, trace_bytes=64 << 20,
    device_bytes=256 << 20, chunk_bytes=256 << 20,
)  # fmt: skip

_TOKEN = re.compile(
    r"%[A-Za-z_][\w$]*(?:\.[xyz])?|\.[A-Za-z_]\w*|0[xXfFdD][0-9A-Fa-f]+|-?\d+|[A-Za-z_$][\w$]*|\S"
)

#: What a replaced token becomes: registers of every class, special registers, literals at and
#: past every width, types, state spaces, punctuation, opcodes and modifiers, absurd text.
_REPLACEMENTS = (
    "%r1", "%rd1", "%f1", "%p1", "%fd1", "%rs1", "%tid.x", "%tid", "%clock64", "0", "-1", "1",
    "4294967296", "18446744073709551616", "99999999999999999999999", "0f3F800000",
    "0d3FF0000000000000", ".f32", ".s32", ".u64", ".b64", ".pred", ".b8", ".u8", ".s16", ".f16",
    ".f64", ".b128", ".shared", ".global", ".local", ".param", ".const", ".v2", ".v4", ".v8", "[",
    "]", "{", "}", "(", ")", ",", ";", "|", "!", "@", "", "bra", "ld", "st", "atom", "shfl", "mov",
    "add", "selp", "setp", "cvt", "cvta", "fma", "mul", "div", "rem", "shl", "shr", "not", "neg",
    "and", "sqrt", "rcp", "bar.sync", "ret", "exit", "call", ".wide", ".lo", ".hi", ".rn",
    ".approx", ".sync", ".up", ".idx", "1e40", "0x+10", "\u0661\u0662", ".align 3", "[%rd1]",
    "[%rd1+4]", "[-8]", "$L__BB0_1", "__missing", ".entry", ".func", ".reg", "<", ">",
)  # fmt: skip


def _swap_type(line: str, rng: random.Random) -> str:
    new = rng.choice(["f32", "pred", "b64", "f64", "u16", "s8", "b128", "f16x2", "u32"])
    return re.sub(r"\.(f32|s32|u32|b32|u64|s64|b64|f64|pred|u16|b16)\b", "." + new, line, count=1)


def _swap_register(line: str, rng: random.Random) -> str:
    new = rng.choice(["%p1", "%f1", "%rd1", "%r1", "%fd1", "%rs1", "%tid.x", "{}", "{%r1}",
                      "{%r1, %r2, %r3}", "_", "!%p1"])  # fmt: skip
    return re.sub(r"%(?:r|f|rd|p|fd|rs)\d+", lambda _: new, line, count=1)


def _swap_function_name(line: str, rng: random.Random) -> str:
    return re.sub(r"%(?:r|rd|f)\d+", rng.choice(list(_function_names())), line, count=1)


def _wide_literal(line: str, rng: random.Random) -> str:
    new = rng.choice(["9" * 5000, "18446744073709551616", "-9223372036854775809", "0x+10",
                      "00777", "1099511627776", "-1", "0f7F800000", "1e309"])  # fmt: skip
    return re.sub(r"(?<![%\w$])\d+", lambda _: new, line, count=1)


def _nested_braces(line: str, rng: random.Random) -> str:
    return line.replace("{", "{" * rng.choice([2, 50, 5000]), 1)


def _vector_width(line: str, rng: random.Random) -> str:
    width = rng.choice(["v2", "v4", "v8", "v3", "v16"])
    return re.sub(r"\b(ld|st)\.(global|shared|local|param)\b", rf"\1.\2.{width}", line, count=1)


def _swap_opcode(line: str, rng: random.Random) -> str:
    new = rng.choice(["and.", "or.", "xor.", "shl.", "shr.", "neg.", "not.", "sub.", "fma.wide.",
                      "mad.wide.", "mul.wide.", "abs.", "min.", "rcp.approx.", "div.", "rem.",
                      "popc.", "cnot.", "bfe.", "prmt.", "testp.finite.", "copysign."])  # fmt: skip
    pattern = r"\b(add|sub|mul|mov|and|or|xor|shl|shr|neg|not|fma|mad|selp|setp|cvt|ld|st)\."
    return re.sub(pattern, new, line, count=1)


def _absurd_address(line: str, rng: random.Random) -> str:
    new = rng.choice(["%rd1", "[]", "[%f1]", "[%p1]", "[k]", "[%rd1+99999999999999999999]",
                      "[%rd1+-9223372036854775808]", "[1099511627776]", "[[%rd1]]"])  # fmt: skip
    return re.sub(r"\[[^\]]*\]", lambda _: new, line, count=1)


def _shared_size(line: str, rng: random.Random) -> str:
    new = rng.choice(["1099511627776", "9223372036854775807", "-4", "0", "4294967296"])
    return re.sub(r"\[(\d+)\];", lambda _: f"[{new}];", line, count=1)


def _alignment(line: str, rng: random.Random) -> str:
    new = rng.choice(["3", "0", "1099511627776", "-8", "6"])
    return re.sub(r"\.align \d+", ".align " + new, line, count=1)


def _address_size(line: str, rng: random.Random) -> str:
    new = rng.choice(["32", "123456789", "abc", "0", "", "64 64"])
    return re.sub(r"\.address_size \d+", ".address_size " + new, line, count=1)


def _shuffle_mode(line: str, rng: random.Random) -> str:
    new = rng.choice(["shfl.sync", "shfl.sync.up.pred", "shfl.sync.idx.b64", "shfl.up"])
    return re.sub(r"shfl\.sync\.(up|down|bfly|idx)\.b32", new, line, count=1)


def _duplicate_declaration(line: str, rng: random.Random) -> str:
    new = rng.choice([".f64", ".pred", ".b16"])
    return re.sub(r"(\.reg\s+\.\w+\s+(%\w+)<\d+>;)",
                  lambda m: f"{m[1]}\n.reg {new} {m[2]}1;", line, count=1)  # fmt: skip


#: The targeted mutation kinds, by name (their effect on a line that has nothing to mutate is
#: none; the token kinds below always change the text).
TARGETED: dict[str, Callable[[str, random.Random], str]] = {
    "type": _swap_type,
    "register": _swap_register,
    "function name": _swap_function_name,
    "literal": _wide_literal,
    "braces": _nested_braces,
    "vector width": _vector_width,
    "opcode": _swap_opcode,
    "address": _absurd_address,
    "array size": _shared_size,
    "align": _alignment,
    "address size": _address_size,
    "shuffle": _shuffle_mode,
    "declaration": _duplicate_declaration,
}


@cache
def kernel_texts() -> dict[str, str]:
    """The committed kernel modules' PTX by module name."""
    return {p.stem: p.read_text() for p in sorted(KERNEL_DIR.glob("*.ptx"))}


@cache
def _function_names() -> frozenset[str]:
    return frozenset(re.findall(r"\.entry (\w+)", "\n".join(kernel_texts().values())))


def mutate(text: str, rng: random.Random) -> str:
    """One to three edits of ``text``: targeted edits of its lines, or token edits."""
    if rng.random() < 0.5:
        lines = text.split("\n")
        for _ in range(rng.choice((1, 1, 2))):
            k = rng.randrange(len(lines))
            lines[k] = rng.choice(list(TARGETED.values()))(lines[k], rng)
        return "\n".join(lines)
    out = text
    for _ in range(rng.choice((1, 1, 1, 2, 3))):
        spans = [m.span() for m in _TOKEN.finditer(out)]
        a, b = rng.choice(spans)
        kind = rng.random()
        if kind < 0.6:
            out = out[:a] + rng.choice(_REPLACEMENTS) + out[b:]
        elif kind < 0.8:
            out = out[:a] + out[b:]
        else:
            c, d = rng.choice(spans)
            out = out[:a] + out[c:d] + out[b:]
    return out


@dataclass(frozen=True)
class Outcome:
    """What became of one mutant: its kind and, for a crash, its signature and message."""

    kind: str  # "accepted", "rejected", "crashed", "hung"
    stage: str  # "load" or "run"
    signature: str = ""
    detail: str = ""


class _TimedOut(Exception):
    pass


@contextmanager
def _deadline(seconds: float) -> Iterator[None]:
    def expire(*_):
        raise _TimedOut

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


@cache
def _workloads_of(module: str) -> tuple[str, ...]:
    return tuple(n for n in workload_names() if get_workload(n)("tiny").module_name == module)


def try_mutant(text: str, module: str, *, run: bool = True, seconds: float = 10.0,
               limits: Limits = FUZZ_LIMITS) -> Outcome:  # fmt: skip
    """Load ``text`` (a mutant of kernel module ``module``) and, if accepted and ``run``, run the
    host program of each workload using the module on it."""
    stage = "load"
    try:
        with _deadline(seconds):
            parsed = parse_ptx(text, f"{module}-mutant.ptx")
            for function in parsed.kernels:
                compile_program(function, parsed)
            if run:
                stage = "run"
                for name in _workloads_of(module):
                    workload = get_workload(name)("tiny")
                    device = Device(parsed, limits=limits)
                    workload.run(device, workload.inputs(workload.rng()))
    except NdpsimError:
        return Outcome("rejected", stage)
    except _TimedOut:
        return Outcome("hung", stage, "timeout")
    except (Exception, RecursionError) as exc:  # what the campaign is looking for
        return Outcome("crashed", stage, signature(exc), str(exc)[:300])
    return Outcome("accepted", stage)


def signature(exc: BaseException) -> str:
    """``ExceptionType file:function`` of the innermost ndpsim frame, to group crashes by."""
    frames = traceback.extract_tb(exc.__traceback__)
    ours = [f for f in frames if "ndpsim" in f.filename] or frames
    last = ours[-1] if ours else None
    where = f"{Path(last.filename).name}:{last.name}" if last else "?"
    return f"{type(exc).__name__} {where}"
