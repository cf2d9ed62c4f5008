"""What a DRAM is: organization, timing parameters, controller settings, and the timing
constraints between commands, as data.

Following Ramulator's design, a memory standard is a *table* of constraints ``(level, preceding
commands, following commands, latency[, window])``: after a preceding command issues at some node
(channel, rank, bank group, bank, subarray), the following command may not issue at that node for
``latency`` cycles (or, with a window ``W``, until ``latency`` cycles after the W-th most recent
preceding command). :func:`constraint_table` builds the table from a preset's timing values; the
compiled controller (:mod:`ndpsim.hw.dram.controller`) only ever reads the table.

Presets are TOML files in ``ndpsim/presets/dram``, each value citing where it comes from.
"""

from __future__ import annotations

import math
from enum import IntEnum
from typing import Literal

from pydantic import Field, model_validator

from ndpsim.config import Cycles, Strict, load_preset, preset_names
from ndpsim.engine.clock import PS_PER_NS
from ndpsim.errors import ConfigError


class Command(IntEnum):
    ACT = 0
    PRE = 1
    PREA = 2  # precharge every bank of a rank
    RD = 3
    WR = 4
    RDA = 5  # read with auto-precharge
    WRA = 6
    REF = 7  # all-bank refresh of a rank


class Level(IntEnum):
    CHANNEL = 0  # a vault of a memory cube, or a channel of an HBM stack
    RANK = 1  # an HBM pseudo-channel, a DDR rank
    BANKGROUP = 2
    BANK = 3
    SUBARRAY = 4  # one activated row buffer each (MASA); 1 per bank unless configured


NUM_COMMANDS = len(Command)
NUM_LEVELS = len(Level)
READS = (Command.RD, Command.RDA)
WRITES = (Command.WR, Command.WRA)


class Organization(Strict):
    """How many of each level, and how much one column access moves."""

    channels: int = Field(ge=1, le=256, description="at most 256 (a cube has 8-32); every "
                          "channel has its own queues")  # fmt: skip
    ranks: int = Field(1, ge=1, le=64, description="per channel, at most 64")
    bankgroups: int = Field(1, ge=1, le=64, description="per rank, at most 64")
    banks: int = Field(ge=1, le=256, description="banks per bank group, at most 256")
    subarrays: int = Field(1, ge=1, le=1024, description="independently activated row buffers "
                           "per bank, at most 1024")  # fmt: skip
    rows: int = Field(ge=1, le=2**24, description="rows per bank, at most 16M")
    columns: int = Field(ge=1, le=2**16, description="column accesses per row, at most 64K")
    access_bytes: int = Field(ge=1, le=4096, description="bytes one column command transfers, "
                              "at most 4096")  # fmt: skip

    @property
    def row_bytes(self) -> int:
        return self.columns * self.access_bytes

    @property
    def total_banks(self) -> int:
        return self.channels * self.ranks * self.bankgroups * self.banks

    @property
    def capacity_bytes(self) -> int:
        return self.total_banks * self.rows * self.row_bytes


class Timing(Strict):
    """Timing parameters in clock cycles of ``tCK_ps`` (JEDEC names, without the leading t),
    each at most a billion (:data:`ndpsim.config.MAX_CYCLES`)."""

    tCK_ps: int = Field(gt=0, le=10**6, description="at most 1 us (a 1 MHz clock)")
    CL: Cycles = Field(ge=1)
    CWL: Cycles = Field(ge=0)
    RCD: Cycles = Field(ge=1)
    RP: Cycles = Field(ge=1)
    RAS: Cycles = Field(ge=1)
    RC: Cycles = Field(ge=1)
    WR: Cycles = Field(ge=0)
    RTP: Cycles = Field(ge=0)
    BL: Cycles = Field(ge=1, description="data-bus cycles of one column access")
    CCD_S: Cycles = Field(ge=1)
    CCD_L: Cycles = Field(ge=1)
    RRD_S: Cycles = Field(ge=1)
    RRD_L: Cycles = Field(ge=1)
    WTR_S: Cycles = Field(ge=0)
    WTR_L: Cycles = Field(ge=0)
    FAW: Cycles = Field(ge=0, description="four-activation window; 0 disables it")
    RFC: Cycles = Field(ge=1)
    REFI: Cycles = Field(ge=1)
    two_cycle_activate: bool = Field(
        False, description="ACT occupies the row command bus for two cycles (HBM)"
    )

    @model_validator(mode="after")
    def _refresh_leaves_time(self) -> Timing:
        # a rank refreshing for RFC cycles in every REFI would never serve a request
        if self.REFI <= self.RFC:
            raise ValueError(f"REFI ({self.REFI}) must be longer than RFC ({self.RFC})")
        return self

    @property
    def clock_ghz(self) -> float:
        return 1000.0 / self.tCK_ps


class Controller(Strict):
    """The per-channel memory controller."""

    read_queue: int = Field(32, ge=1, le=1024, description="entries per channel, at most 1024 "
                            "(FR-FCFS scans the queue for every command)")  # fmt: skip
    write_queue: int = Field(32, ge=1, le=1024, description="entries per channel, at most 1024")
    write_high_watermark: float = Field(0.8, gt=0, le=1)
    write_low_watermark: float = Field(0.2, ge=0, lt=1)
    row_policy: Literal["open", "closed"] = "open"
    refresh: bool = True

    @model_validator(mode="after")
    def _watermarks(self) -> Controller:
        if self.write_low_watermark >= self.write_high_watermark:
            raise ValueError("write_low_watermark must be below write_high_watermark")
        return self


class DramPreset(Strict):
    """A complete DRAM description: a preset file, possibly with overrides applied."""

    name: str
    description: str = ""
    organization: Organization
    timing: Timing
    controller: Controller = Controller()

    @property
    def peak_bandwidth_gbps(self) -> float:
        """Peak data bandwidth of all channels in GB/s (every rank moving data at once)."""
        o, t = self.organization, self.timing
        per_rank = o.access_bytes / (t.BL * t.tCK_ps * 1e-3)  # bytes per ns = GB/s
        return per_rank * o.channels * o.ranks

    def in_accesses_of(self, access_bytes: int) -> DramPreset:
        """This DRAM seen by a memory system that moves ``access_bytes`` per request, a whole
        number of this DRAM's column accesses (MPU's 128-byte lines over 32-byte bank I/O):
        a request is that many back-to-back column accesses of one row, so it holds the data
        bus for all of them, and the row may close only after the last (read to precharge
        counted from it). Rows, banks and every other timing stay as they are."""
        o, t = self.organization, self.timing
        n, rest = divmod(access_bytes, o.access_bytes)
        if n < 1 or rest or o.columns % n:
            raise ConfigError(f"DRAM {self.name!r}: {access_bytes} B per request is not a whole "
                              f"number of its {o.access_bytes} B column accesses within a "
                              f"{o.row_bytes} B row")  # fmt: skip
        if n == 1:
            return self
        step = max(t.BL, t.CCD_S)  # cycles between back-to-back column accesses
        return self.model_copy(update={
            "organization": o.model_copy(update={"columns": o.columns // n,
                                                 "access_bytes": access_bytes}),
            "timing": t.model_copy(update={"BL": n * step, "RTP": t.RTP + (n - 1) * step}),
        })  # fmt: skip


def constraint_table(timing: Timing) -> list[tuple[Level, tuple[Command, ...],
                                                   tuple[Command, ...], int, int]]:  # fmt: skip
    """The timing constraints of a JEDEC-style DRAM with these parameters.

    Rows are ``(level, preceding, following, latency, window)``. Without bank groups, CCD_L/RRD_L/
    WTR_L equal their short forms and the bank-group rows change nothing.
    """
    t = timing
    rd, wr, rda, wra = Command.RD, Command.WR, Command.RDA, Command.WRA
    act, pre, prea, ref = Command.ACT, Command.PRE, Command.PREA, Command.REF
    reads, writes = (rd, rda), (wr, wra)
    read_to_write = t.CL + t.BL + 2 - t.CWL
    write_recovery = t.CWL + t.BL + t.WR
    rows = [
        # rank: data bus, turnarounds, activation rate, rank-wide commands
        (Level.RANK, reads, reads, max(t.BL, t.CCD_S), 0),
        (Level.RANK, writes, writes, max(t.BL, t.CCD_S), 0),
        (Level.RANK, reads, writes, read_to_write, 0),
        (Level.RANK, writes, reads, t.CWL + t.BL + t.WTR_S, 0),
        (Level.RANK, (act,), (act,), t.RRD_S, 0),
        (Level.RANK, (rd,), (prea,), t.RTP, 0),
        (Level.RANK, (wr,), (prea,), write_recovery, 0),
        (Level.RANK, (act,), (prea,), t.RAS, 0),
        (Level.RANK, (prea,), (act,), t.RP, 0),
        (Level.RANK, (act,), (ref,), t.RC, 0),
        (Level.RANK, (pre, prea), (ref,), t.RP, 0),
        (Level.RANK, (rda,), (ref,), t.RTP + t.RP, 0),
        (Level.RANK, (wra,), (ref,), write_recovery + t.RP, 0),
        (Level.RANK, (ref,), (act, ref), t.RFC, 0),
        # bank group
        (Level.BANKGROUP, reads, reads, t.CCD_L, 0),
        (Level.BANKGROUP, writes, writes, t.CCD_L, 0),
        (Level.BANKGROUP, writes, reads, t.CWL + t.BL + t.WTR_L, 0),
        (Level.BANKGROUP, (act,), (act,), t.RRD_L, 0),
        # bank: reads/writes need the row open; a precharge needs the writes recovered
        (Level.BANK, (act,), (rd, rda, wr, wra), t.RCD, 0),
        (Level.BANK, (rd,), (pre,), t.RTP, 0),
        (Level.BANK, (wr,), (pre,), write_recovery, 0),
        # subarray (the bank itself when it has one row buffer): the activate-precharge cycle
        (Level.SUBARRAY, (act,), (act,), t.RC, 0),
        (Level.SUBARRAY, (act,), (pre,), t.RAS, 0),
        (Level.SUBARRAY, (pre,), (act,), t.RP, 0),
        (Level.SUBARRAY, (rda,), (act,), t.RTP + t.RP, 0),
        (Level.SUBARRAY, (wra,), (act,), write_recovery + t.RP, 0),
    ]
    if t.FAW:
        rows.append((Level.RANK, (act,), (act,), t.FAW, 4))
    if t.two_cycle_activate:
        rows.append((Level.CHANNEL, (act,), (act, pre, prea, ref), 2, 0))
    return rows


# ------------------------------------------------------------------------------ presets
def dram_preset_names() -> list[str]:
    return preset_names("dram")


def load_dram_preset(name: str, overrides: dict | None = None) -> DramPreset:
    """A DRAM preset by name, with optional nested overrides (validated like the file)."""
    return load_preset(DramPreset, "dram", name, overrides, "DRAM preset")


def cycles(ns: float, timing: Timing) -> int:
    """Nanoseconds to clock cycles, rounded up as JEDEC does."""
    return math.ceil(ns * PS_PER_NS / timing.tCK_ps - 1e-9)
