"""The model scale of a GP: inputs on the unit box, outputs standardised."""

from __future__ import annotations

import numpy as np


def unit_scale(X: np.ndarray, bounds: np.ndarray | None) -> np.ndarray:
    """``(X - lower) / (upper - lower)`` for ``bounds = (lower, upper)``; ``X`` if ``None``."""
    X = np.asarray(X, dtype=float)
    if bounds is None:
        return X
    return (X - bounds[0]) / (bounds[1] - bounds[0])


def output_standardization(y: np.ndarray) -> tuple[float, float]:
    """Mean and scale that standardise ``y``; scale 1 when ``y`` is constant."""
    mean, sd = float(np.mean(y)), float(np.std(y))
    return mean, (sd if sd > 1e-12 * max(1.0, abs(mean)) else 1.0)


def to_model_scale(
    X: np.ndarray, y: np.ndarray, bounds, *, standardize: bool = True, mean: float = 0.0
) -> tuple[np.ndarray, np.ndarray, float, float]:
    """Data on a GP model's scale: ``(X̃, ỹ, ȳ, s_y)``.

    ``X̃`` is :func:`unit_scale` of ``X``; ``ỹ = (y - ȳ) / s_y`` with ``ȳ, s_y``
    from :func:`output_standardization`, or ``ȳ = mean, s_y = 1`` without
    standardisation.
    """
    if standardize:
        y_mean, y_std = output_standardization(y)
    else:
        y_mean, y_std = float(mean), 1.0
    return unit_scale(X, bounds), (y - y_mean) / y_std, y_mean, y_std
