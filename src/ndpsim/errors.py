"""The single error hierarchy of ndpsim.

Every error a user can provoke (bad PTX, bad config, bad trace, a simulation that breaks its own
invariants) is an :class:`NdpsimError`, whose message names the file, line, column or key at fault
and says what was expected and what was found. The CLI prints these without a traceback.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class SourceLocation:
    """A position in a text file; line and column are 1-based as editors show them."""

    file: str
    line: int
    column: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.column}"


class NdpsimError(Exception):
    """Base class of every error ndpsim raises on purpose."""


class PTXError(NdpsimError):
    """A problem with a PTX file, located at a line and column."""

    def __init__(self, message: str, location: SourceLocation | None = None, token: str = ""):
        self.location = location
        self.token = token
        self.detail = message
        where = f"{location}: " if location else ""
        near = f" (at {token!r})" if token else ""
        super().__init__(f"{where}{message}{near}")


class PTXSyntaxError(PTXError):
    """The text is not well-formed PTX."""


class PTXTypeError(PTXError):
    """Well-formed PTX whose operands break the ISA's typing rules (a predicate where a float
    goes, a 64-bit register in a 32-bit instruction, a vector of the wrong arity)."""


class UnsupportedInstruction(PTXError):
    """Well-formed PTX that uses an opcode or modifier ndpsim does not execute."""


class ConfigError(NdpsimError):
    """A configuration value is unknown, missing, or out of range."""


class TraceFormatError(NdpsimError):
    """A saved trace is corrupt, truncated, or of another format version."""


class WorkloadError(NdpsimError):
    """A workload is unknown, or its inputs or launch sequence are invalid."""


class LaunchError(NdpsimError):
    """A kernel launch was given arguments or a geometry that do not fit the kernel."""


class SimulationError(NdpsimError):
    """A simulation broke one of its own invariants or stopped making progress."""


class MemoryAccessError(SimulationError):
    """A kernel accessed device memory outside every allocation, or misaligned."""
