"""A page lives in one cube, pages are placed at random (SNDP sec. 5: random 4 KB pages over
the HMCs). The lines of a page interleave over that cube's vaults; the cube comes from the page
frame number, which the page table draws at random."""

from __future__ import annotations

from ndpsim.errors import ConfigError
from ndpsim.hw.dram.mapping import AddressMapping
from ndpsim.policy.mapping import ADDRESS_MAPPINGS


@ADDRESS_MAPPINGS.register("random-page")
class RandomPage:
    placement = "random"

    def mapping(self, fields, cube_bits, line_bits, page_bits, xor_cube) -> AddressMapping:
        below = page_bits - line_bits  # DRAM bits inside a page, taken from the lowest fields
        inside: list[tuple[str, int]] = []
        rest = dict(fields)
        for name, width in fields:
            take = min(width, below)
            if take:
                inside.append((name, take))
                rest[name] -= take
                below -= take
        if below > 0:
            raise ConfigError("memory.page_bytes is larger than one cube's address space")
        above = [(name, rest[name]) for name, _ in fields if rest[name]]
        return AddressMapping.from_layout([("offset", line_bits), *inside, ("cube", cube_bits),
                                           *above])  # fmt: skip
