"""Event kinds, declared by name in the module that schedules them.

A module binds its kinds to module-level names, which numba compiles in as constants::

    L2_REQUEST, L2_FILL = kinds.declare(__name__, "L2_REQUEST", "L2_FILL")

A kind's number is a hash of its qualified name (``module.NAME``), so no module keeps a list of
numbers another must avoid, and the number is the same in every process whatever the order of
imports: compiled code loaded from numba's on-disk cache carries the numbers of the process that
compiled it. Declaring a name again gives its number again; a different name that hashes to a
number already declared is refused.
"""

from __future__ import annotations

import zlib

_declared: dict[int, str] = {}  # number -> qualified name


def _number(qualified: str) -> int:
    return zlib.crc32(qualified.encode())


def declare(owner: str, *names: str) -> tuple[int, ...]:
    """The numbers of event kinds ``names`` of module ``owner``, in order."""
    numbers = []
    for name in names:
        qualified = f"{owner}.{name}"
        number = _number(qualified)
        taken = _declared.setdefault(number, qualified)
        if taken != qualified:
            raise ValueError(f"event kind {qualified} hashes to {number}, the number of {taken}; "
                             "rename one of them")  # fmt: skip
        numbers.append(number)
    return tuple(numbers)
