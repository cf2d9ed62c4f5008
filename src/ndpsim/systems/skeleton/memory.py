"""The DRAM of a system's cubes as one physical address space, and a program's pages placed in
it: what every kind with memory cubes builds the same way.

The address mapping orders the fields of a DRAM preset's organization (channel, column, rank,
bank group, bank, row) under the mapping policy the config names; the page table places each
page of the program's device memory in a frame, as the policy's placement says.
"""

from __future__ import annotations

from typing import Annotated

import numpy as np
from pydantic import AfterValidator, Field

from ndpsim.config import Strict
from ndpsim.hw.dram.mapping import AddressMapping, log2_exact, organization_fields
from ndpsim.hw.dram.spec import DramPreset, load_dram_preset
from ndpsim.hw.pagetable import PageTable
from ndpsim.policy.mapping import ADDRESS_MAPPINGS
from ndpsim.simt.memory import BASE_ADDRESS, DeviceMemory
from ndpsim.trace.work import LINE_BYTES, LINE_SHIFT


class DramMemory(Strict):
    """A config's main-memory section, what every kind with a DRAM preset shares: the preset
    and its overrides, the address mapping (``ndpsim.policy.mapping``) and the page size."""

    dram: str = Field(description="DRAM preset (ndpsim/presets/dram)")
    dram_overrides: dict = Field(default_factory=dict)
    mapping: Annotated[str, AfterValidator(ADDRESS_MAPPINGS.check)] = "interleaved"
    page_bytes: int = Field(4096, ge=128, le=2**30)

    def dram_preset(self) -> DramPreset:
        return load_dram_preset(self.dram, self.dram_overrides)


def all_cubes(dram: DramPreset, cubes: int) -> DramPreset:
    """One cube's DRAM preset as the DRAM of ``cubes`` cubes: their channels side by side
    (cube ``k``'s are ``k * channels ...``), as the controller's state holds them."""
    org = dram.organization.model_copy(update={"channels": cubes * dram.organization.channels})
    return dram.model_copy(update={"organization": org})


def dram_address_mapping(policy, dram: DramPreset, cubes: int, page_bytes: int,
                         xor_cube: bool) -> AddressMapping:  # fmt: skip
    """The physical address of a line in ``cubes`` cubes of ``dram``, as the address mapping
    ``policy`` (an :class:`~ndpsim.policy.mapping.AddressMappingPolicy`) lays it out."""
    return policy.mapping(
        organization_fields(dram.organization), log2_exact(cubes, "memory.cubes"),
        log2_exact(LINE_BYTES, "line size"), log2_exact(page_bytes, "memory.page_bytes"),
        xor_cube,
    )  # fmt: skip


def program_pages(memory: DeviceMemory, page_bytes: int, capacity_bytes: int, policy,
                  seed: int) -> PageTable:  # fmt: skip
    """The page table of a program whose device memory is ``memory``: its pages placed among
    the frames of ``capacity_bytes`` as the mapping ``policy``'s placement says (a random
    placement drawn from ``seed``)."""
    return PageTable.build(BASE_ADDRESS, memory.size_bytes, page_bytes,
                           capacity_bytes // page_bytes, policy.placement, seed)  # fmt: skip


def programs_pages(memories: list[DeviceMemory], page_bytes: int, capacity_bytes: int, policy,
                   seed: int) -> tuple[PageTable, list[int]]:  # fmt: skip
    """One page table for several programs at once, each with an address space of its own: the
    programs' device memories (each from ``BASE_ADDRESS``) laid one after another, whole pages
    each, so that no two programs share a frame. Returns the table and, per program, how many
    lines its virtual addresses move by."""
    offsets, total = [], 0
    for memory in memories:
        offsets.append(total >> LINE_SHIFT)
        total += -(-max(memory.size_bytes, 1) // page_bytes) * page_bytes
    table = PageTable.build(BASE_ADDRESS, total, page_bytes, capacity_bytes // page_bytes,
                            policy.placement, seed)  # fmt: skip
    return table, offsets


def physical_lines(page_table: PageTable, virtual_lines: np.ndarray) -> np.ndarray:
    """The physical lines of ``virtual_lines`` (line numbers, not addresses)."""
    table, base, shift = page_table.compiled
    inner = shift - LINE_SHIFT
    frames = table[(virtual_lines >> inner) - base]
    return (frames << inner) | (virtual_lines & ((1 << inner) - 1))
