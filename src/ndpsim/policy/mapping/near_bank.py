"""Consecutive lines over the channels of a cube, then over the cubes: the order of MPU-Sim's
default physical mapping (its ``dram_addr_map_1``: bank, near-bank unit, core, processor from the
least significant bits, then column and row) at ndpsim's line granularity. On MPU a channel is
one near-bank unit (NBU) and four of them make a core; with Table II's 256-bit bank I/O, that
mapping gives the four banks of an NBU 32 bytes each of every 128 bytes, an NBU 128 bytes and a
core 512 bytes in turn. A line is one request to one bank here, so the bank bits move above the
cube's: an NBU still holds every fourth line, a core every 512 bytes in turn, and a CTA of 128
threads reading 4-byte elements in order finds them in one core's banks, each warp's line beside
one NBU."""

from __future__ import annotations

from ndpsim.hw.dram.mapping import AddressMapping
from ndpsim.policy.mapping import ADDRESS_MAPPINGS


@ADDRESS_MAPPINGS.register("near-bank")
class NearBank:
    placement = "identity"

    def mapping(self, fields, cube_bits, line_bits, page_bits, xor_cube) -> AddressMapping:
        width = dict(fields)
        return AddressMapping.from_layout([
            ("offset", line_bits), ("channel", width["channel"]), ("cube", cube_bits),
            ("bank", width["bank"]), ("bankgroup", width["bankgroup"]),
            ("column", width["column"]), ("rank", width["rank"]), ("row", width["row"]),
        ])  # fmt: skip
