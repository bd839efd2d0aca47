"""The model scale of a GP: inputs on the unit box, outputs standardised."""

from __future__ import annotations

import numpy as np


def unit_scale(X: np.ndarray, bounds: np.ndarray | None) -> np.ndarray:
    """``(X - lower) / (upper - lower)`` for ``bounds = (lower, upper)``; ``X`` if ``None``."""
    X = np.asarray(X, dtype=float)
    if bounds is None:
        return X
    return (X - bounds[0]) / (bounds[1] - bounds[0])


def gradients_in_units(moments, y_mean: float, y_std: float, bounds) -> tuple[np.ndarray, ...]:
    """Per-draw means, variances and their input gradients ``(S, m), (S, m), (S, m, d),
    (S, m, d)`` on a GP's model scale, in the data's units: ``ȳ + s_y μ``, ``s_y² σ²``
    and the gradients times ``s_y`` (``s_y²``) and ``∂ unit_scale(x) / ∂x``
    (``1 / (upper - lower)``, or 1 without ``bounds``)."""
    mean, var, dmean, dvar = moments
    slope = 1.0 if bounds is None else 1.0 / (np.asarray(bounds[1]) - np.asarray(bounds[0]))
    s = y_std
    return y_mean + s * mean, s**2 * var, s * slope * dmean, s**2 * slope * dvar


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
