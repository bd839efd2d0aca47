"""Explicit randomness: every random function takes a seed or a ``Generator``."""

from __future__ import annotations

import numpy as np

SeedLike = int | np.random.Generator | np.random.SeedSequence | None


def as_generator(seed: SeedLike) -> np.random.Generator:
    """A ``np.random.Generator`` from an int, a ``SeedSequence``, a ``Generator`` or ``None``."""
    if isinstance(seed, np.random.Generator):
        return seed
    if seed is not None and not isinstance(seed, int | np.integer | np.random.SeedSequence):
        raise TypeError(f"seed must be an int, a SeedSequence or a Generator; got {seed!r}")
    return np.random.default_rng(seed)


def int_seed(rng: np.random.Generator) -> int:
    """A fresh 31-bit integer seed for libraries that want one (nutpie, scipy)."""
    return int(rng.integers(0, 2**31 - 1))
