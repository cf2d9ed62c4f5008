"""What MPU's hybrid pipeline (:mod:`.hybrid`) reads about a kernel's static instructions: where
each runs unless the register track table decides, which are global accesses for the load-store
unit, where each operand must be and each destination lands, and how many bytes each register of
a warp takes on the TSVs. Built once per launch from the PTX, in the order the timing model
numbers instructions, operands (guard included) and registers (:mod:`ndpsim.trace.work`)."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ndpsim.analysis.classify import Access, base_kind
from ndpsim.frontend.ir import Address, Function, Space, registers_in
from ndpsim.hw.mpu.hybrid import FAR, FOLLOW, NEAR, VALUE
from ndpsim.trace.work import (
    C_BARRIER,
    C_BRANCH,
    C_CONSTANT,
    C_EXIT,
    C_SFU,
    register_numbering,
)

#: A warp's lanes; a register moves as one 4-byte data-path unit per lane at least (MPU-Sim's
#: ``data_path_unit_size``: sub-word types use part of one), 8 bytes for 64-bit types.
LANES, DATA_PATH_BYTES = 32, 4

#: Classes that run only on the base die: control, the SFU, parameter and constant loads
#: (sec. IV-B: the NBUs replicate register files, operand collectors and ALUs, nothing else).
_BASE_DIE_ONLY = (C_BRANCH, C_BARRIER, C_EXIT, C_SFU, C_CONSTANT)
_GLOBAL_SPACES = (Space.GLOBAL, Space.GENERIC, Space.LOCAL)


class HybridTables(NamedTuple):
    pc_place: np.ndarray
    pc_global: np.ndarray
    src_need: np.ndarray
    dst_at: np.ndarray
    reg_bytes: np.ndarray


def hybrid_tables(function: Function, classes: np.ndarray, hints: np.ndarray, near_bank: bool,
                  near_shared_memory: bool) -> HybridTables:  # fmt: skip
    """The tables of ``function``, whose instructions' timing classes are ``classes`` (the
    work's ``pc_class``) and whose location policy hinted ``hints`` (FOLLOW, NEAR or FAR, as
    :mod:`ndpsim.policy.location` gives them); ``near_bank`` off puts everything on the base
    die (PonB)."""
    place, is_global, src_need, dst_at = [], [], [], []
    for pc, inst in enumerate(function.instructions):
        access = base_kind(inst).access
        memory = access is not None and access is not Access.PREFETCH
        global_access = memory and inst.space in _GLOBAL_SPACES
        shared = memory and inst.space is Space.SHARED
        shared_at = NEAR if near_shared_memory and near_bank else FAR
        if not near_bank or global_access or classes[pc] in _BASE_DIE_ONLY:
            where = FAR
        elif shared:
            where = shared_at
        else:
            where = int(hints[pc])
        place.append(where)
        is_global.append(int(global_access))
        addresses = {n for op in inst.operands if isinstance(op, Address) for n in registers_in(op)}
        sources = {n for op in inst.sources for n in registers_in(op)}
        for name in inst.uses:
            if global_access:
                need = FAR if name in addresses or name not in sources else (
                    VALUE if near_bank else FAR)  # fmt: skip
            elif shared:
                need = shared_at if name in sources else FAR
            elif name not in sources or classes[pc] == C_BRANCH:
                need = FAR  # a guard: the subcore masks the lanes
            else:
                need = FOLLOW
            src_need.append(need)
        for _ in inst.defs:
            if global_access:
                dst_at.append(NEAR if near_bank else FAR)
            elif shared:
                dst_at.append(shared_at)
            else:
                dst_at.append(FOLLOW)
    numbering = register_numbering(function)
    reg_bytes = np.zeros(max(len(numbering), 1), dtype=np.int64)
    for name, index in numbering.items():
        kind = function.registers.get(name)
        if kind is None or kind.kind == "pred":
            reg_bytes[index] = LANES // 8  # a predicate: a bit per lane
        else:
            reg_bytes[index] = LANES * max(DATA_PATH_BYTES, kind.bits // 8)
    tables = (np.array(values, dtype=np.int64) for values in (place, is_global, src_need, dst_at))
    return HybridTables(*tables, reg_bytes)
