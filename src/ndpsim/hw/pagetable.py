"""Virtual-to-physical page translation, with migration.

The functional run gives every allocation a virtual address; where its pages sit in the memory
cubes is the timing model's choice (identity for the baseline interleaving, a random frame per
page for SNDP's placement, a learned placement for TOM and AIMM). A :class:`PageTable` maps each
virtual page of the device memory to a physical frame; compiled code translates line addresses
through its ``table`` array (see :func:`ndpsim.hw.core.sm.physical_line`), and a policy running
between epochs may move a page to another frame.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ndpsim.errors import ConfigError
from ndpsim.seeding import generator


@dataclass
class PageTable:
    """Frames of the virtual pages ``vpn_base .. vpn_base + len(table)``, ``2**shift`` bytes
    each, out of ``frames`` physical frames."""

    table: np.ndarray  # int64[pages]: physical frame of each page
    vpn_base: int
    shift: int
    frames: int

    @classmethod
    def build(cls, base_address: int, size_bytes: int, page_bytes: int, frames: int,
              placement: str = "identity", seed: int = 0) -> PageTable:  # fmt: skip
        """Pages covering ``size_bytes`` from ``base_address``: placed in frames 0, 1, 2, ...
        (``identity``) or in distinct random frames (``random``, seeded)."""
        shift = page_bytes.bit_length() - 1
        if page_bytes < 1 or 1 << shift != page_bytes:
            raise ConfigError(f"page size must be a power of two, got {page_bytes}")
        pages = max(1, -(-size_bytes // page_bytes))
        if pages > frames:
            raise ConfigError(
                f"{size_bytes} bytes need {pages} pages of {page_bytes} B; the memory has "
                f"{frames} frames"
            )
        if placement == "random":
            table = generator(seed, "page-placement").permutation(frames)[:pages]
        elif placement == "identity":
            table = np.arange(pages)
        else:
            raise ConfigError(f"unknown page placement {placement!r}; expected identity, random")
        return cls(table.astype(np.int64), base_address >> shift, shift, frames)

    @property
    def compiled(self) -> tuple[np.ndarray, int, int]:
        """What compiled code translates with: (table, first virtual page, page shift)."""
        return self.table, self.vpn_base, self.shift

    def translate(self, address: int) -> int:
        vpn = (address >> self.shift) - self.vpn_base
        if not 0 <= vpn < len(self.table):
            raise ValueError(f"address {address:#x} is outside the mapped pages")
        return int(self.table[vpn]) << self.shift | (address & ((1 << self.shift) - 1))

    def migrate(self, address: int, frame: int) -> int:
        """Move the page holding ``address`` to ``frame``; a page already there takes the
        moved page's old frame (a swap keeps the mapping one-to-one). Returns the old frame."""
        if not 0 <= frame < self.frames:
            raise ValueError(f"frame {frame} is outside the memory's {self.frames} frames")
        vpn = (address >> self.shift) - self.vpn_base
        if not 0 <= vpn < len(self.table):
            raise ValueError(f"address {address:#x} is outside the mapped pages")
        old = int(self.table[vpn])
        holder = np.flatnonzero(self.table == frame)
        if holder.size:
            self.table[holder[0]] = old
        self.table[vpn] = frame
        return old
