"""Consecutive lines over cubes, then over a cube's vaults (TOM sec. 5.1: the baseline maps
consecutive cache lines to different stacks)."""

from __future__ import annotations

from ndpsim.hw.dram.mapping import AddressMapping
from ndpsim.policy.mapping import ADDRESS_MAPPINGS


@ADDRESS_MAPPINGS.register("interleaved")
class Interleaved:
    placement = "identity"

    def mapping(self, fields, cube_bits, line_bits, page_bits, xor_cube) -> AddressMapping:
        layout = [("offset", line_bits), ("cube", cube_bits), *fields]
        if not (xor_cube and cube_bits):
            return AddressMapping.from_layout(layout)
        # the cube index XORed with the lowest row bits spreads strided accesses over cubes
        row_bits = AddressMapping.from_layout(layout).bits["row"]
        return AddressMapping.from_layout(layout, {"cube": row_bits[:cube_bits]})
