"""Address mappings: which bits of a physical address choose the cube, the vault and the DRAM
coordinates, and how pages are placed (``memory.mapping`` names one)."""

from __future__ import annotations

from typing import Protocol

from ndpsim.hw.dram.mapping import AddressMapping
from ndpsim.registry import Registry


class AddressMappingPolicy(Protocol):
    #: How the page table places virtual pages on frames: ``identity`` or ``random``.
    placement: str

    def mapping(self, fields: list[tuple[str, int]], cube_bits: int, line_bits: int,
                page_bits: int, xor_cube: bool) -> AddressMapping:  # fmt: skip
        """The mapping of a line address, given the DRAM fields of one cube (name, bits) from
        the lowest, the bits choosing a cube, of a line and of a page."""
        ...


ADDRESS_MAPPINGS: Registry[AddressMappingPolicy] = Registry(
    "address mapping", "ndpsim.policy.mapping"
)
