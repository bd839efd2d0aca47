"""Calibration of upper confidence bounds: empirical against nominal coverage."""

from __future__ import annotations

import numpy as np
import xarray as xr
from scipy.stats import norm

from pp_decomp.validate import as_float_array, check_finite


def ucb_coverage(mean, sd, truth, levels=(0.5, 0.68, 0.8, 0.9, 0.95, 0.99)) -> xr.Dataset:
    """How often the upper bound ``mean + Φ⁻¹(q) sd`` covers the truth, per nominal level ``q``.

    Parameters
    ----------
    mean, sd, truth : arrays of one shape
        Posterior means and standard deviations of the objective and its true
        values at the same points (any number of points, steps and seeds, flattened).
    levels : sequence of float in (0, 1)

    Returns
    -------
    xarray.Dataset over ``level`` with ``empirical`` (fraction of points with
    ``truth <= mean + Φ⁻¹(q) sd``), ``nominal`` and ``stderr``
    (``sqrt(q (1 - q) / n)``, the binomial standard error if calibrated).
    """
    mean = check_finite(np.ravel(as_float_array(mean, "mean")), "mean")
    sd = check_finite(np.ravel(as_float_array(sd, "sd")), "sd")
    truth = check_finite(np.ravel(as_float_array(truth, "truth")), "truth")
    if not (mean.shape == sd.shape == truth.shape):
        raise ValueError(
            f"mean, sd and truth must have one shape; got {mean.shape}, {sd.shape}, {truth.shape}"
        )
    if np.any(sd < 0):
        raise ValueError(f"sd must be >= 0; got min {sd.min()!r}")
    q = check_finite(np.atleast_1d(as_float_array(levels, "levels")), "levels")
    if np.any((q <= 0) | (q >= 1)):
        raise ValueError(f"levels must lie in (0, 1); got {q.tolist()}")
    z = norm.ppf(q)
    covered = truth[None, :] <= mean[None, :] + z[:, None] * sd[None, :]
    n = len(truth)
    return xr.Dataset(
        {
            "empirical": ("level", covered.mean(1)),
            "nominal": ("level", q),
            "stderr": ("level", np.sqrt(q * (1 - q) / n)),
        },
        coords={"level": q},
        attrs={"n_points": n},
    )
