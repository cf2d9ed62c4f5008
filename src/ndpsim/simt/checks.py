"""Compiled range and alignment scan of a batch of addresses."""

from __future__ import annotations

from ndpsim.numba_cache import compiled


@compiled(allocates=True)
def span(addresses, access_bytes):  # pragma: no cover - compiled
    """Lowest address, end of the highest access, and the index of the first address not
    aligned to ``access_bytes`` (-1 if all are)."""
    lo = addresses[0]
    hi = addresses[0]
    misaligned = -1
    mask = access_bytes - 1
    for k in range(addresses.shape[0]):
        a = addresses[k]
        if a < lo:
            lo = a
        if a > hi:
            hi = a
        if misaligned < 0 and (a & mask) != 0:
            misaligned = k
    return lo, hi + access_bytes, misaligned
