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
from collections.abc import Callable

from ndpsim.errors import ConfigError
from ndpsim.numba_cache import compiled

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


class Handlers:
    """The event handlers of one compiled loop, each registered for the kinds it handles.

    :func:`ndpsim.engine.assemble.assemble` writes the loop's dispatch from what is registered
    (``if kind == k: handler(...)`` for every kind), so adding an event means declaring its kind
    and registering its handler, never editing the loop. A handler names what it needs by its
    parameters: the system's components by their names in the state, the event's time as
    ``now``, its kind as ``kind`` (for a handler of several kinds), and the event's two integer
    arguments by any other names, in order. An event of a kind without a handler stops the run
    with an error instead of vanishing.

    Each handler compiles and caches as a function of its own (:func:`ndpsim.numba_cache.
    compiled`), which the loop calls; the loop's cache stamp covers its handlers wherever they
    are defined. A kind registered twice, or a registration after the loop was assembled, is
    refused.
    """

    def __init__(self, what: str):
        self.what = what
        self.handlers: dict[int, Callable] = {}  # compiled, by kind number
        self.frozen = False

    def on(self, *kind_numbers: int) -> Callable[[Callable], Callable]:
        """Decorator: register a function (plain Python, compiled here, or already compiled) as
        the handler of ``kind_numbers``; returns it unchanged."""

        def register(function: Callable) -> Callable:
            python = getattr(function, "py_func", function)
            if self.frozen:
                raise ConfigError(f"{self.what}: handler {python.__qualname__} registered "
                                  "after the loop was assembled")  # fmt: skip
            handler = function if python is not function else compiled(function)
            for number in kind_numbers:
                if number in self.handlers:
                    raise ConfigError(f"{self.what}: event kind {name_of(number)} has two "
                                      "handlers")  # fmt: skip
                self.handlers[number] = handler
            return function

        return register


def name_of(number: int) -> str:
    """The qualified name of a declared kind (its number if none was declared)."""
    return _declared.get(number, str(number))
