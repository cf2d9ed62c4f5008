"""Physical address to DRAM coordinates (cube, channel, rank, bank group, bank, row, column).

A mapping lists, for every coordinate, the physical-address bits that form it (least significant
first), and optionally bits XOR-ed into it. This one representation covers the layouts the papers
use: consecutive bit fields ("row : bank : column : channel"), the GPU baseline that interleaves
consecutive cache lines over stacks and vaults and XORs higher bits into the stack index (TOM
sec. 5.1), and TOM's candidate mappings that take the stack index from bits ``b+1:b``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ndpsim.errors import ConfigError
from ndpsim.numba_cache import compiled

FIELDS = ("cube", "channel", "rank", "bankgroup", "bank", "row", "column")
CUBE, CHANNEL, RANK, BANKGROUP, BANK, ROW, COLUMN = range(len(FIELDS))
MAX_BITS = 48


@dataclass(frozen=True)
class AddressMapping:
    """Bits of each coordinate (LSB first) and the bits XOR-ed into it."""

    bits: dict[str, tuple[int, ...]]
    xor: dict[str, tuple[int, ...]]
    offset_bits: int  # low bits inside one access (never used by a coordinate)

    @staticmethod
    def from_layout(layout: Sequence[tuple[str, int]], xor: dict | None = None) -> AddressMapping:
        """Consecutive fields from the least significant bit: ``[("offset", 6),
        ("channel", 3), ("column", 4), ...]``; ``offset`` bits are skipped."""
        position = 0
        bits: dict[str, tuple[int, ...]] = {}
        offset_bits = 0
        for name, width in layout:
            if width < 0:
                raise ConfigError(f"mapping field {name!r} has negative width {width}")
            span = tuple(range(position, position + width))
            if name == "offset":
                offset_bits += width
            elif name not in FIELDS:
                raise ConfigError(f"unknown mapping field {name!r}; expected one of {FIELDS}")
            else:
                bits[name] = bits.get(name, ()) + span
            position += width
        if position > MAX_BITS:
            raise ConfigError(f"mapping uses {position} bits, more than {MAX_BITS}")
        return AddressMapping(bits, {k: tuple(v) for k, v in (xor or {}).items()}, offset_bits)

    def with_field_at(self, name: str, lsb: int) -> AddressMapping:
        """The same mapping but with ``name`` taken from bits ``lsb ..`` (its width kept); the
        bits it vacates are given, in order, to the bits it now occupies' former owners.
        This is how TOM's consecutive-bit stack mappings are formed from the baseline."""
        width = len(self.bits.get(name, ()))
        new = tuple(range(lsb, lsb + width))
        freed = [b for b in self.bits.get(name, ()) if b not in new]
        table = {k: list(v) for k, v in self.bits.items() if k != name}
        for owner, positions in table.items():
            table[owner] = [freed.pop(0) if b in new else b for b in positions]
        table[name] = list(new)
        xor = {k: v for k, v in self.xor.items() if k != name}
        return AddressMapping({k: tuple(v) for k, v in table.items()}, xor, self.offset_bits)

    def arrays(self) -> tuple[np.ndarray, np.ndarray]:
        """(bits, xor) as int64[len(FIELDS), MAX_BITS] arrays padded with -1, for compiled code."""
        bits = np.full((len(FIELDS), MAX_BITS), -1, dtype=np.int64)
        xor = np.full((len(FIELDS), MAX_BITS), -1, dtype=np.int64)
        for i, name in enumerate(FIELDS):
            for k, b in enumerate(self.bits.get(name, ())):
                bits[i, k] = b
            for k, b in enumerate(self.xor.get(name, ())):
                xor[i, k] = b
        return bits, xor

    def decode(
        self, addresses: np.ndarray, fields: Sequence[str] = FIELDS
    ) -> dict[str, np.ndarray]:
        """Coordinates of many addresses (vectorized; for tests, analyses and mapping studies).
        Ask only for the ``fields`` needed: each is an int64 array as long as ``addresses``,
        and a TOM placement decodes every line its blocks touch."""
        addresses = np.asarray(addresses, dtype=np.uint64)
        out = {}
        for name in fields:
            value = np.zeros(addresses.shape, dtype=np.int64)
            for k, b in enumerate(self.bits.get(name, ())):
                value |= ((addresses >> np.uint64(b)) & np.uint64(1)).astype(np.int64) << k
            for k, b in enumerate(self.xor.get(name, ())):
                value ^= ((addresses >> np.uint64(b)) & np.uint64(1)).astype(np.int64) << (
                    k % max(1, len(self.bits.get(name, ())))
                )
            out[name] = value
        return out


@compiled(inline=True)
def decode(bits, xor, address, out):
    """Coordinates of one address into ``out`` (int64[len(FIELDS)])."""
    for f in range(bits.shape[0]):
        value = 0
        width = 0
        for k in range(bits.shape[1]):
            b = bits[f, k]
            if b < 0:
                break
            value |= ((address >> b) & 1) << k
            width += 1
        for k in range(xor.shape[1]):
            b = xor[f, k]
            if b < 0:
                break
            value ^= ((address >> b) & 1) << (k % max(width, 1))
        out[f] = value


def organization_fields(organization) -> list[tuple[str, int]]:
    """The address bits of a DRAM organization's fields, channel first (least significant in
    the anchor layout) to row: what every address mapping lays out."""
    o = organization
    return [
        ("channel", log2_exact(o.channels, "DRAM channels")),
        ("column", log2_exact(o.columns, "DRAM columns")),
        ("rank", log2_exact(o.ranks, "DRAM ranks")),
        ("bankgroup", log2_exact(o.bankgroups, "DRAM bank groups")),
        ("bank", log2_exact(o.banks, "DRAM banks")),
        ("row", log2_exact(o.rows, "DRAM rows")),
    ]


def interleaved_layout(organization, offset_bytes: int | None = None) -> AddressMapping:
    """Row : bank : bank group : rank : column : channel : offset, least significant last. This is
    the layout of the anchor memory (``row-bank-rank-column-channel``, channels interleaved at
    the access size), so consecutive accesses spread over channels and then walk one row."""
    offset = offset_bytes or organization.access_bytes
    return AddressMapping.from_layout(
        [("offset", log2_exact(offset, "access size")), *organization_fields(organization)]
    )


def log2_exact(value: int, what: str) -> int:
    """``value``'s base-2 logarithm; a value that is not a power of two is a ConfigError
    naming ``what``."""
    bits = int(value).bit_length() - 1
    if value < 1 or 1 << bits != value:
        raise ConfigError(f"{what} must be a power of two, got {value}")
    return bits
