"""Input validation shared by every public entry point.

Each check raises ``ValueError`` (or ``TypeError``) naming the argument and the
offending value, before any expensive work is done.

Randomness is explicit: every random function takes a seed or a ``Generator``
(:data:`SeedLike`, read by :func:`as_generator`).
"""

from __future__ import annotations

from collections.abc import Iterable

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


def _describe(a: np.ndarray) -> str:
    bad = ~np.isfinite(a)
    idx = np.argwhere(bad)
    first = tuple(int(i) for i in idx[0]) if idx.size else ()
    return f"{int(bad.sum())} non-finite value(s), first at index {first}: {a[first]!r}"


def _not_numbers(value) -> str:
    """The entries of ``value`` that are not numbers, with their positions (the first
    few), or why ``value`` is not an array of numbers at all."""
    try:
        arr = np.asarray(value, dtype=object)
    except ValueError as err:
        return f"{value!r:.80} ({err})"
    if arr.ndim == 0:
        return f"{value!r:.80}"
    if any(np.ndim(entry) for entry in arr.flat):  # nested lists numpy could not stack
        return f"{value!r:.80}, whose rows have unequal lengths"
    bad = []
    for pos, entry in np.ndenumerate(arr):
        try:
            float(entry)
        except (TypeError, ValueError):
            bad.append((pos[0] if arr.ndim == 1 else pos, entry))
    shown = ", ".join(f"{entry!r:.40} at position {pos}" for pos, entry in bad[:_SHOWN])
    more = f" and {len(bad) - _SHOWN} more" if len(bad) > _SHOWN else ""
    return f"{shown}{more}" or f"{value!r:.80}"


_SHOWN = 5  # offending entries named in a message


def as_float_array(value, name: str) -> np.ndarray:
    """Convert ``value`` to a float64 array or raise naming ``name`` and the entries
    that are not numbers, with their positions in ``value``."""
    try:
        arr = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError) as err:
        raise TypeError(f"{name} must be numbers; got {_not_numbers(value)}") from err
    return arr


def check_finite(arr: np.ndarray, name: str) -> np.ndarray:
    """Raise if ``arr`` holds NaN or inf."""
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must be finite; found {_describe(arr)}")
    return arr


def check_X(X, name: str = "X", input_dim: int | None = None, min_rows: int = 1) -> np.ndarray:
    """Validate an input matrix of shape ``(n, d)``; a 1-D array is read as ``(n, 1)``."""
    arr = as_float_array(X, name)
    if arr.ndim == 1:
        arr = arr[:, None]
    if arr.ndim != 2:
        raise ValueError(f"{name} must have shape (n, d); got shape {arr.shape}")
    if input_dim is not None and arr.shape[1] != input_dim:
        raise ValueError(
            f"{name} must have {input_dim} column(s) (input_dim); got shape {arr.shape}"
        )
    if arr.shape[0] < min_rows:
        raise ValueError(f"{name} needs at least {min_rows} row(s); got shape {arr.shape}")
    return check_finite(arr, name)


def check_y(y, name: str = "y", n: int | None = None) -> np.ndarray:
    """Validate a vector of observations of shape ``(n,)``."""
    arr = as_float_array(y, name)
    if arr.ndim == 2 and arr.shape[1] == 1:
        arr = arr[:, 0]
    if arr.ndim != 1:
        raise ValueError(f"{name} must have shape (n,); got shape {arr.shape}")
    if n is not None and arr.shape[0] != n:
        raise ValueError(f"{name} has {arr.shape[0]} value(s) but X has {n} row(s)")
    return check_finite(arr, name)


def check_Y(Y, name: str = "Y", n: int | None = None, n_components: int | None = None):
    """Validate a matrix of component observations of shape ``(n, J)``."""
    arr = as_float_array(Y, name)
    if arr.ndim == 1:
        arr = arr[:, None]
    if arr.ndim != 2:
        raise ValueError(f"{name} must have shape (n, J); got shape {arr.shape}")
    if n is not None and arr.shape[0] != n:
        raise ValueError(f"{name} has {arr.shape[0]} row(s) but X has {n} row(s)")
    if n_components is not None and arr.shape[1] != n_components:
        raise ValueError(
            f"{name} must have {n_components} column(s), one per component; got shape {arr.shape}"
        )
    return check_finite(arr, name)


def check_bounds(bounds, input_dim: int, name: str = "bounds") -> np.ndarray:
    """Return ``bounds`` as a finite ``(2, input_dim)`` array with upper > lower, or raise."""
    b = as_float_array(bounds, name)
    if b.shape != (2, input_dim):
        raise ValueError(f"{name} must have shape (2, {input_dim}); got shape {b.shape}")
    if not np.all(np.isfinite(b)) or np.any(b[1] <= b[0]):
        raise ValueError(f"{name} must be finite with upper > lower in every dim; got {b.tolist()}")
    return b


def check_positive_int(value, name: str, minimum: int = 1) -> int:
    """Return ``value`` as an int ``>= minimum`` or raise naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, int | np.integer):
        raise TypeError(f"{name} must be an integer >= {minimum}; got {value!r}")
    if value < minimum:
        raise ValueError(f"{name} must be >= {minimum}; got {value!r}")
    return int(value)


def check_probabilities(value, name: str) -> np.ndarray:
    """Return ``value`` as a 1-d float array of levels in ``(0, 1)`` or raise naming ``name``."""
    q = np.atleast_1d(as_float_array(value, name))
    if q.ndim != 1 or not np.all((q > 0) & (q < 1)):
        raise ValueError(f"{name} must lie in (0, 1); got {value!r}")
    return q


def check_positive(value, name: str) -> float:
    """Return ``value`` as a finite float ``> 0`` or raise naming ``name``."""
    try:
        v = float(value)
    except (TypeError, ValueError) as err:
        raise TypeError(f"{name} must be a positive number; got {value!r}") from err
    if not np.isfinite(v) or v <= 0:
        raise ValueError(f"{name} must be a finite number > 0; got {value!r}")
    return v


def check_nonnegative(value, name: str) -> float:
    """Return ``value`` as a finite float ``>= 0`` or raise naming ``name``."""
    try:
        v = float(value)
    except (TypeError, ValueError) as err:
        raise TypeError(f"{name} must be a number >= 0; got {value!r}") from err
    if not np.isfinite(v):
        raise ValueError(f"{name} must be finite; got {value!r}")
    if v < 0:
        raise ValueError(f"{name} must be >= 0; got {value!r}")
    return v


def canonical_choice(value, name: str, choices: Iterable[str]) -> str:
    """The one of ``choices`` that ``value`` names in any case (``"NUTS"`` is
    ``"nuts"``), or a ValueError naming ``name``, the value and the choices."""
    choices = tuple(choices)
    by_case = {str(c).casefold(): c for c in choices}
    if not isinstance(value, str) or value.casefold() not in by_case:
        raise ValueError(f"{name} must be one of {choices} (any case); got {value!r}")
    return by_case[value.casefold()]


def check_choice(value, name: str, choices: Iterable[str]) -> str:
    """Raise unless ``value`` is one of ``choices``."""
    choices = tuple(choices)
    if value not in choices:
        raise ValueError(f"{name} must be one of {choices}; got {value!r}")
    return value
