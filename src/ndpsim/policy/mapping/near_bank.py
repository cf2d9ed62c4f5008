"""Consecutive lines over a channel's banks, then over the channels of a cube, then over the
cubes: MPU-Sim's default physical mapping (its ``dram_addr_map_1``: bank, near-bank unit, core,
processor from the least significant bits, then column and row), taken at ndpsim's line
granularity. On MPU a channel is one near-bank unit and four of them make a core, so a core owns
``banks x 4`` consecutive lines (2 KiB) and the next core the next ones: a CTA whose threads walk
that much of an array in order finds it in its own core's banks."""

from __future__ import annotations

from ndpsim.hw.dram.mapping import AddressMapping
from ndpsim.policy.mapping import ADDRESS_MAPPINGS


@ADDRESS_MAPPINGS.register("near-bank")
class NearBank:
    placement = "identity"

    def mapping(self, fields, cube_bits, line_bits, page_bits, xor_cube) -> AddressMapping:
        width = dict(fields)
        return AddressMapping.from_layout([
            ("offset", line_bits), ("bank", width["bank"]), ("bankgroup", width["bankgroup"]),
            ("channel", width["channel"]), ("cube", cube_bits), ("column", width["column"]),
            ("rank", width["rank"]), ("row", width["row"]),
        ])  # fmt: skip
