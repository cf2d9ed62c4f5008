"""A kernel of your own as a workload (``ndpsim run --ptx``): a PTX file, one of its kernels, a
launch geometry, and one argument per kernel parameter, each a buffer of a given type, length
and distribution or a scalar.

The argument grammar, one ``--arg`` per parameter in the kernel's order:

* ``buf:TYPE:COUNT[:INIT]``: a buffer of COUNT elements of TYPE, whose address the kernel gets.
  INIT is ``zeros`` (the default), ``fill(V)``, ``range`` (0, 1, 2, ...), ``permutation`` (0 to
  COUNT - 1 shuffled), ``uniform(LO,HI)`` (floats between LO and HI, or the integers LO to
  HI - 1) or ``normal(MEAN,STD)`` (floats only).
* ``TYPE:VALUE``: a scalar, such as ``i32:4096`` or ``f32:0.5``.

TYPE is one of :data:`TYPES`. Every argument is checked against the kernel's parameter list
before anything runs. Random buffers are drawn from the run's seed, each from a stream of its
own, so changing one argument leaves the other buffers' data as it was. An own kernel has no
reference: its outputs (every buffer after the launch) are not checked.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ndpsim.errors import ConfigError, LaunchError
from ndpsim.frontend.ir import Function, Parameter
from ndpsim.simt.interpreter import launch_dims
from ndpsim.workloads.base import CheckResult, Device, Workload, ptx_file_module

#: The element and scalar types an argument may name, and their NumPy dtypes.
TYPES = {
    "i8": np.int8, "u8": np.uint8, "i16": np.int16, "u16": np.uint16,
    "i32": np.int32, "u32": np.uint32, "i64": np.int64, "u64": np.uint64,
    "f32": np.float32, "f64": np.float64,
}  # fmt: skip
#: An own kernel's only size: its geometry and buffers are what the options say.
CUSTOM = "custom"
#: Each initializer of a buffer, with how many values it takes in parentheses.
INITIALIZERS = {"zeros": 0, "fill": 1, "range": 0, "permutation": 0, "uniform": 2, "normal": 2}
_INIT_FORMS = "zeros, fill(V), range, permutation, uniform(LO,HI) or normal(MEAN,STD)"
_INIT = re.compile(r"([a-z]+)(?:\((.*)\))?")
_DIMS = re.compile(r"[0-9]+(,[0-9]+){0,2}")


@dataclass(frozen=True)
class Buffer:
    """A device buffer of ``count`` elements of ``dtype``, filled as ``init`` says."""

    text: str
    dtype: np.dtype
    count: int
    init: str
    values: tuple[int | float, ...]

    @property
    def nbytes(self) -> int:
        return self.count * self.dtype.itemsize

    def draw(self, rng: np.random.Generator) -> np.ndarray:
        """The buffer's initial contents (random ones from ``rng``)."""
        n, dtype = self.count, self.dtype
        if self.init == "zeros":
            return np.zeros(n, dtype)
        if self.init == "fill":
            return np.full(n, self.values[0], dtype)
        if self.init == "range":
            return np.arange(n, dtype=np.float64 if dtype.kind == "f" else np.int64).astype(dtype)
        if self.init == "permutation":
            return rng.permutation(n).astype(dtype)
        low, high = self.values
        if self.init == "normal":
            return rng.normal(low, high, n).astype(dtype)
        if dtype.kind == "f":
            return rng.uniform(low, high, n).astype(dtype)
        return rng.integers(low, high, n, dtype=dtype)


@dataclass(frozen=True)
class Scalar:
    """A scalar argument of ``dtype``."""

    text: str
    dtype: np.dtype
    value: int | float


def parse_arg(text: str, position: int) -> Buffer | Scalar:
    """One ``--arg`` (the ``position``-th, counted from 1) as the grammar above reads it."""
    where = f"--arg {position} {text!r}"
    fields = text.split(":")
    if fields[0] == "buf":
        if len(fields) not in (3, 4):
            raise ConfigError(f"{where}: expected buf:TYPE:COUNT[:INIT]")
        dtype = _dtype(fields[1], where)
        count = _integer(fields[2], where, "COUNT")
        if count < 1:
            raise ConfigError(f"{where}: COUNT must be at least 1, got {count}")
        init, values = _initializer(fields[3] if len(fields) == 4 else "zeros", dtype, count, where)
        return Buffer(text, dtype, count, init, values)
    if len(fields) != 2:
        raise ConfigError(
            f"{where}: expected a buffer (buf:TYPE:COUNT[:INIT]) or a scalar (TYPE:VALUE)"
        )
    dtype = _dtype(fields[0], where)
    return Scalar(text, dtype, _value(fields[1], dtype, where))


def parse_dims(text: str, option: str) -> tuple[int, int, int]:
    """A grid or CTA extent written ``X[,Y,Z]``, within CUDA's limits."""
    if not _DIMS.fullmatch(text):
        raise ConfigError(f"{option} {text!r}: expected 1 to 3 positive integers, X[,Y,Z]")
    try:
        dims = launch_dims([int(n) for n in text.split(",")], option.removeprefix("--"))
    except LaunchError as error:
        raise ConfigError(f"{option} {text!r}: {error}") from None
    if option == "--block" and math.prod(dims) > 1024:
        raise ConfigError(f"{option} {text!r}: a CTA holds at most 1024 threads")
    return dims


class OwnKernel(Workload):
    """One launch of a kernel of your own, its arguments drawn as the ``--arg`` grammar says."""

    title = "a kernel of your own"
    sizes = {CUSTOM: {}}

    def __init__(self, ptx: str | Path, kernel: str | None, grid: str, block: str,
                 args: Sequence[str], seed: int = 0):  # fmt: skip
        ptx = Path(ptx)
        self.function = _kernel(ptx, kernel)
        self.name = self.function.name
        super().__init__(CUSTOM, seed)
        self.ptx = ptx.resolve()
        self.grid = parse_dims(grid, "--grid")
        self.block = parse_dims(block, "--block")
        self.args = [parse_arg(text, i) for i, text in enumerate(args, start=1)]
        _check_against(self.function, ptx, self.args)
        self.params = {
            "ptx": str(self.ptx),
            "ptx_sha256": hashlib.sha256(self.ptx.read_bytes()).hexdigest(),
            "kernel": self.name,
            "grid": list(self.grid),
            "block": list(self.block),
            "args": [arg.text for arg in self.args],
        }

    def inputs(self, rng: np.random.Generator) -> dict[str, Any]:
        """Each buffer's random stream; its data is drawn once it has been allocated, so a buffer
        past the device budget stops the run before its data takes host memory."""
        streams = rng.spawn(len(self.args))
        return {p.name: stream for p, stream in zip(self.function.params, streams, strict=True)}

    def run(self, device: Device, inputs: dict[str, Any]) -> dict[str, np.ndarray]:
        values, buffers = [], {}
        for param, arg in zip(self.function.params, self.args, strict=True):
            if isinstance(arg, Scalar):
                values.append(np.array([arg.value], dtype=arg.dtype))  # its bytes, as passed
                continue
            address = device.alloc(arg.nbytes, param.name)
            device.write(address, arg.draw(inputs[param.name]))
            values.append(np.array([address], dtype=np.uint64))
            buffers[param.name] = (address, arg)
        device.launch(self.name, self.grid, self.block, values)
        return {name: device.from_device(address, arg.dtype, arg.count)
                for name, (address, arg) in buffers.items()}  # fmt: skip

    def reference(self, inputs: dict[str, Any]) -> dict[str, np.ndarray]:
        return {}

    def check(self, outputs: dict[str, np.ndarray], expected: dict[str, np.ndarray]) -> CheckResult:
        return CheckResult(True, "not checked: an own kernel has no reference")


def _kernel(ptx: Path, name: str | None) -> Function:
    """The kernel ``name`` of the PTX file (its only kernel when ``name`` is None)."""
    module = ptx_file_module(ptx)
    kernels = sorted(f.name for f in module.kernels)
    if name is None:
        if len(kernels) != 1:
            raise ConfigError(
                f"{ptx} defines {len(kernels)} kernels ({', '.join(kernels) or 'none'}); "
                "choose one with --kernel"
            )
        name = kernels[0]
    if name not in kernels:
        raise ConfigError(
            f"--kernel {name!r}: {ptx} defines no kernel (.entry) of that name; its kernels: "
            f"{', '.join(kernels) or 'none'}"
        )
    return module.function(name)


def _check_against(function: Function, ptx: Path, args: list[Buffer | Scalar]) -> None:
    """Every argument must fit its parameter: a buffer a 64-bit integer (its address), a
    scalar a parameter of its kind and width."""
    params = function.params
    if len(args) != len(params):
        listed = ", ".join(f"{p.name} (.{p.type.name})" for p in params) or "none"
        raise ConfigError(
            f"kernel {function.name!r} of {ptx} takes {len(params)} parameters ({listed}); "
            f"got {len(args)} --arg, one per parameter is expected"
        )
    for position, (param, arg) in enumerate(zip(params, args, strict=True), start=1):
        expected = _expected(param)
        kind, bits = param.type.kind, param.type.bits
        if isinstance(arg, Buffer):
            fits = kind in "sub" and bits == 64
        else:
            is_float = arg.dtype.kind == "f"
            fits = arg.dtype.itemsize * 8 == bits and (kind == "f" if is_float else kind in "sub")
        if not fits or param.size_bytes != param.type.size_bytes:
            raise ConfigError(
                f"--arg {position} {arg.text!r} does not fit parameter {position} "
                f"{param.name!r} (.{param.type.name}, {param.size_bytes} B) of kernel "
                f"{function.name!r}: expected {expected}"
            )


def _expected(param: Parameter) -> str:
    """What ``--arg`` a parameter takes, in words."""
    kind, bits = param.type.kind, param.type.bits
    if param.size_bytes != param.type.size_bytes or kind == "pred" or bits not in (8, 16, 32, 64):
        return "nothing --arg can give (an aggregate or a type of no buffer or scalar)"
    if kind == "f":
        return f"a scalar f{bits}:VALUE" if bits in (32, 64) else "nothing --arg can give (.f16)"
    scalars = f"i{bits}:VALUE or u{bits}:VALUE"
    if bits == 64:
        return f"a buffer (buf:TYPE:COUNT[:INIT]) or a 64-bit integer ({scalars})"
    return f"a {bits}-bit integer ({scalars})"


def _dtype(name: str, where: str) -> np.dtype:
    if name not in TYPES:
        raise ConfigError(f"{where}: unknown type {name!r}; expected one of {', '.join(TYPES)}")
    return np.dtype(TYPES[name])


def _integer(text: str, where: str, what: str) -> int:
    """An integer literal: decimal, or 0x/0o/0b; at most 40 characters."""
    try:
        if len(text) > 40:
            raise ValueError
        return int(text.strip(), 0)
    except ValueError:
        raise ConfigError(f"{where}: {what} {text[:40]!r} is not an integer") from None


def _value(text: str, dtype: np.dtype, where: str, what: str = "VALUE") -> int | float:
    """A value of ``dtype`` written as ``text``: an integer within the type's range, or a
    float the type can hold."""
    if dtype.kind == "f":
        try:
            value = float(text)
        except ValueError:
            raise ConfigError(f"{where}: {what} {text[:40]!r} is not a number") from None
        most = float(np.finfo(dtype).max)
        if math.isfinite(value) and abs(value) > most:
            raise ConfigError(
                f"{where}: {what} {text} is beyond the range of {_type_name(dtype)} (±{most:.4g})"
            )
        return value
    value = _integer(text, where, what)
    info = np.iinfo(dtype)
    if not info.min <= value <= info.max:
        raise ConfigError(
            f"{where}: {what} {value} is outside the range of {_type_name(dtype)} "
            f"({info.min} to {info.max})"
        )
    return value


def _initializer(text: str, dtype: np.dtype, count: int,
                 where: str) -> tuple[str, tuple[int | float, ...]]:  # fmt: skip
    """The initializer ``text`` names and its values, checked against the buffer's type."""
    match = _INIT.fullmatch(text)
    name = match[1] if match else ""
    if name not in INITIALIZERS:
        raise ConfigError(f"{where}: unknown initializer {text[:40]!r}; expected {_INIT_FORMS}")
    wanted = INITIALIZERS[name]
    given = [] if match[2] is None else match[2].split(",")
    if len(given) != wanted or (wanted == 0 and match[2] is not None):
        forms = {0: name, 1: f"{name}(V)", 2: f"{name}(A,B)"}
        plural = "value" if wanted == 1 else "values"
        raise ConfigError(f"{where}: {name} takes {wanted} {plural}, written {forms[wanted]}")
    values = tuple(_value(v.strip(), dtype, where, f"{name} value") for v in given)
    integer = dtype.kind != "f"
    if name == "normal" and integer:
        raise ConfigError(f"{where}: normal(MEAN,STD) draws floats; use f32 or f64")
    if name == "permutation" and not integer:
        raise ConfigError(f"{where}: a permutation is of integers; use an integer type")
    if name in ("range", "permutation") and integer and count - 1 > np.iinfo(dtype).max:
        raise ConfigError(
            f"{where}: {name} needs values up to {count - 1}, more than "
            f"{_type_name(dtype)} holds ({np.iinfo(dtype).max})"
        )
    if name == "uniform" and not values[0] < values[1]:
        raise ConfigError(f"{where}: uniform(LO,HI) needs LO < HI, got {values[0]}, {values[1]}")
    if name == "normal" and not (values[1] >= 0 and math.isfinite(values[1])):
        raise ConfigError(f"{where}: normal(MEAN,STD) needs a finite STD >= 0, got {values[1]}")
    if name == "uniform" and not integer and not all(map(math.isfinite, values)):
        raise ConfigError(f"{where}: uniform(LO,HI) needs finite bounds")
    return name, values


def _type_name(dtype: np.dtype) -> str:
    return next(name for name, t in TYPES.items() if np.dtype(t) == dtype)
