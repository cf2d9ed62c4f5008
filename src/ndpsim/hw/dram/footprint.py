"""The memory a DRAM device's state takes, from its preset alone, so that an organization too
big for the machine (every bound of :class:`~ndpsim.hw.dram.spec.Organization` at once) is
refused before it is built, naming its keys, instead of ending in a MemoryError.

The estimate follows :func:`ndpsim.hw.dram.controller.build_dram_state`, counting the arrays
that grow with the organization and the queues; a test holds it to what the builder allocates.
"""

from __future__ import annotations

from itertools import accumulate
from operator import mul

from ndpsim.errors import ConfigError
from ndpsim.hostmemory import check_fits
from ndpsim.hw.dram.controller import NUM_FIELDS as REQUEST_FIELDS
from ndpsim.hw.dram.spec import NUM_COMMANDS, DramPreset, constraint_table

INT64 = 8


def state_bytes(preset: DramPreset) -> int:
    """The state of one DRAM device as ``build_dram_state`` allocates it: per node of its
    channel-to-subarray tree the next time each command may issue and the windowed
    constraints' rings, per subarray its open row, and per channel its request queues."""
    o, c = preset.organization, preset.controller
    per_level = list(accumulate((o.channels, o.ranks, o.bankgroups, o.banks, o.subarrays), mul))
    rows = constraint_table(preset.timing)
    windows = [(len(before) * len(after), window) for _, before, after, _, window in rows if window]
    rings = max(sum(pairs for pairs, _ in windows), 1)
    depth = max((window for _, window in windows), default=1)
    per_node = NUM_COMMANDS + rings * (depth + 1)
    queues = o.channels * 2 * max(c.read_queue, c.write_queue) * REQUEST_FIELDS
    return INT64 * (sum(per_level) * per_node + 2 * per_level[-1] + per_level[2] + queues)


def check_fits_in_memory(preset: DramPreset, available: int | None = None) -> None:
    """Refuse a device whose state needs more than ``available`` bytes (by default the
    machine's free memory) with a ConfigError naming the keys that size it."""
    parts = {"its state (organization.*, controller.read_queue, write_queue)": state_bytes(preset)}
    check_fits(parts, f"DRAM preset {preset.name!r}", ConfigError, available)
