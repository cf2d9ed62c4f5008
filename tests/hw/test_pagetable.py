"""Page tables: placement, translation, and migration that keeps the mapping one-to-one."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from ndpsim.errors import ConfigError
from ndpsim.hw.pagetable import PageTable

BASE = 1 << 32


def test_identity_placement_keeps_offsets_and_orders_frames():
    pt = PageTable.build(BASE, 10_000, 4096, frames=16)
    assert len(pt.table) == 3
    assert pt.translate(BASE + 5) == 5
    assert pt.translate(BASE + 2 * 4096 + 17) == 2 * 4096 + 17


def test_random_placement_is_seeded_and_uses_distinct_frames():
    a = PageTable.build(BASE, 64 * 4096, 4096, frames=1024, placement="random", seed=1)
    b = PageTable.build(BASE, 64 * 4096, 4096, frames=1024, placement="random", seed=1)
    c = PageTable.build(BASE, 64 * 4096, 4096, frames=1024, placement="random", seed=2)
    np.testing.assert_array_equal(a.table, b.table)
    assert not np.array_equal(a.table, c.table)
    assert len(set(a.table.tolist())) == 64 and a.table.max() < 1024


@given(st.lists(st.tuples(st.integers(0, 31), st.integers(0, 63)), max_size=40))
def test_migration_moves_the_page_and_keeps_the_mapping_one_to_one(moves):
    pt = PageTable.build(BASE, 32 * 4096, 4096, frames=64, placement="random", seed=5)
    for page, frame in moves:
        address = BASE + page * 4096 + 100
        pt.migrate(address, frame)
        assert pt.translate(address) == frame * 4096 + 100
        assert len(set(pt.table.tolist())) == len(pt.table)


def test_bad_tables_and_addresses_are_refused():
    with pytest.raises(ConfigError, match="frames"):
        PageTable.build(BASE, 100 * 4096, 4096, frames=10)
    with pytest.raises(ConfigError, match="power of two"):
        PageTable.build(BASE, 4096, 3000, frames=10)
    pt = PageTable.build(BASE, 4096, 4096, frames=4)
    with pytest.raises(ValueError, match="outside"):
        pt.translate(BASE + 8192)
    with pytest.raises(ValueError, match="outside"):
        pt.migrate(BASE, 9)
