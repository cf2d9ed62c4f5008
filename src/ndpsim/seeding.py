"""The one rule by which everything random in ndpsim is seeded.

A run has one seed. Each thing that draws at random (a workload's inputs, the random page
placement, the offload ratio's draws in one launch, a study's random samples) draws from its
own stream: NumPy's ``SeedSequence`` of the seed, spawned for a *purpose*, a string naming
what the stream is for (``"workload/bfs"``, ``"page-placement"``, ``"offload/launch-3"``).
The purpose becomes the sequence's spawn key (the first 8 bytes of its SHA-256), so

* streams of different purposes are independent for the same seed (NumPy's guarantee for
  spawned sequences), and two purposes never share one by accident (the ``sum`` of a name's
  bytes, used before, gave anagrams the same inputs);
* a stream depends on its seed and purpose only, never on which other streams were drawn
  first or in what order (adding a random policy does not move a workload's inputs).
"""

from __future__ import annotations

import hashlib

import numpy as np

from ndpsim.errors import ConfigError


def _purpose_key(purpose: str) -> int:
    if not isinstance(purpose, str) or not purpose:
        raise ConfigError(f"a random stream's purpose must be a non-empty string, got {purpose!r}")
    return int.from_bytes(hashlib.sha256(purpose.encode()).digest()[:8], "little")


def sequence(seed: int, purpose: str) -> np.random.SeedSequence:
    """The seed sequence of ``purpose`` for a run seeded ``seed`` (an integer >= 0)."""
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer) or seed < 0:
        raise ConfigError(f"a seed must be an integer >= 0, got {seed!r}")
    return np.random.SeedSequence(int(seed), spawn_key=(_purpose_key(purpose),))


def generator(seed: int, purpose: str) -> np.random.Generator:
    """A NumPy generator drawing the stream of ``purpose``."""
    return np.random.default_rng(sequence(seed, purpose))


def state63(seed: int, purpose: str) -> int:
    """A nonzero 63-bit state for a generator in compiled code (a xorshift must not start at
    zero), drawn from the stream of ``purpose``."""
    state = int(sequence(seed, purpose).generate_state(1, np.uint64)[0]) >> 1
    return state or 1


__all__ = ["generator", "sequence", "state63"]
