"""Where a physical line lives, compiled: the system's address mapping (:mod:`.mapping`) turned
into DRAM coordinates written into the request, with ranges of lines that use a second mapping
(TOM's learned mapping for the data its offloaded blocks touch, sec. 3.2)."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ndpsim.hw import requests as rq
from ndpsim.hw.dram.mapping import BANK, BANKGROUP, CHANNEL, COLUMN, CUBE, FIELDS, RANK, ROW, decode
from ndpsim.numba_cache import compiled


class AddressMap(NamedTuple):
    params: np.ndarray  # int64[2]: line bytes, channels per cube
    bits: np.ndarray  # the mapping's bit positions per coordinate (AddressMapping.arrays)
    xor: np.ndarray
    remap: np.ndarray  # int64[ranges, 2]: physical line ranges [lo, hi) that use the second
    remap_bits: np.ndarray  # mapping, ``remap_bits`` and ``remap_xor``
    remap_xor: np.ndarray
    fields: np.ndarray  # int64[len(FIELDS)]: scratch for decoding


def build_address_map(line_bytes: int, channels_per_cube: int, bits, xor,
                      remap: np.ndarray | None = None, remap_bits=None,
                      remap_xor=None) -> AddressMap:  # fmt: skip
    """One mapping for every line, unless ``remap`` ranges use ``remap_bits``/``remap_xor``."""
    if remap is None:
        remap, remap_bits, remap_xor = np.zeros((0, 2), dtype=np.int64), bits, xor
    return AddressMap(
        params=np.array([line_bytes, channels_per_cube], dtype=np.int64),
        bits=bits,
        xor=xor,
        remap=remap,
        remap_bits=remap_bits,
        remap_xor=remap_xor,
        fields=np.zeros(len(FIELDS), dtype=np.int64),
    )


@compiled(inline=True)
def _decode(amap, line):
    """Decode physical ``line`` into ``amap.fields`` with its mapping (the second one inside a
    remapped range); returns its channel, counted over all cubes."""
    remapped = False
    for k in range(amap.remap.shape[0]):
        if amap.remap[k, 0] <= line < amap.remap[k, 1]:
            remapped = True
            break
    bits = amap.remap_bits if remapped else amap.bits
    decode(bits, amap.remap_xor if remapped else amap.xor, line * amap.params[0], amap.fields)
    return amap.fields[CUBE] * amap.params[1] + amap.fields[CHANNEL]


@compiled(inline=True)
def locate(amap, pool, rid):
    """Fill in the DRAM coordinates of request ``rid`` (its line already physical); returns its
    cube."""
    f = pool.fields[rid]
    f[rq.Q_CHANNEL] = _decode(amap, f[rq.Q_LINE])
    cube = amap.fields[CUBE]
    f[rq.Q_CUBE] = cube
    f[rq.Q_RANK] = amap.fields[RANK]
    f[rq.Q_BANKGROUP] = amap.fields[BANKGROUP]
    f[rq.Q_BANK] = amap.fields[BANK]
    f[rq.Q_ROW] = amap.fields[ROW]
    f[rq.Q_COLUMN] = amap.fields[COLUMN]
    return cube


@compiled(inline=True)
def channel_of(amap, line):
    """The channel (counted over all cubes) physical ``line`` lives in, as :func:`locate` finds
    it, without a request."""
    return _decode(amap, line)
