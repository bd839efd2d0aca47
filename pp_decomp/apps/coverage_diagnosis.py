"""Where central intervals miss: by side, by distance to the data, by step.

A central interval at level ``q`` misses the truth below (the truth under its
``(1 - q)/2`` quantile) or above (over its ``(1 + q)/2`` quantile); a
calibrated posterior misses ``(1 - q)/2`` on each side. Misses on one side
say the posterior is skewed the wrong way or its tail too light on that side
(a positive quantity modelled as Gaussian misses below); misses on both say
it is too narrow. Coverage by distance splits the scored inputs of a step
into thirds by their distance to the nearest observation (``near``,
``middle``, ``far``), in the domain's unit box: a posterior whose misses sit
near the data has a noise or shape problem, one whose misses sit far from it
a lengthscale or amplitude problem (or a field that is not stationary).

Example
-------
>>> import numpy as np
>>> rng = np.random.default_rng(0)
>>> samples = rng.normal(size=(4000, 300))
>>> truth = rng.normal(size=300) + 1.0  # the posterior sits too low
>>> band = distance_bands(rng.uniform(size=(300, 2)), rng.uniform(size=(5, 2)), np.ones(2))
>>> miss, by_band = interval_misses(samples, truth, [0.9], band)
>>> bool(miss[0, 1] > 0.2 > miss[0, 0])  # misses above, hardly below
True
"""

from __future__ import annotations

import numpy as np
import xarray as xr

BANDS = ("near", "middle", "far")
SIDES = ("below", "above")


def distance_bands(X: np.ndarray, X_obs: np.ndarray, widths: np.ndarray) -> np.ndarray:
    """The band (0 near, 1 middle, 2 far) of each input of ``X (m, d)``: the tercile
    of its distance to the nearest of ``X_obs (n, d)``, distances taken with each
    dimension divided by its ``widths (d,)``; ties share the lower band."""
    X, X_obs = np.asarray(X, dtype=float), np.asarray(X_obs, dtype=float)
    if len(X_obs) == 0:
        raise ValueError("X_obs must hold at least one observation; got none")
    scale = np.where(np.asarray(widths, dtype=float) > 0, widths, 1.0)
    d = np.sqrt((((X[:, None, :] - X_obs[None]) / scale) ** 2).sum(-1)).min(axis=1)
    edges = np.quantile(d, [1 / 3, 2 / 3])
    return np.searchsorted(edges, d, side="left").astype(int)


def central_interval(samples: np.ndarray, levels) -> tuple[np.ndarray, np.ndarray]:
    """The ``(1 - q)/2`` and ``(1 + q)/2`` quantiles of ``samples (n, m)`` at each of
    ``levels (L,)``: ``lo, hi (L, m)``."""
    q = np.asarray(levels, dtype=float)
    return np.quantile(samples, (1 - q) / 2, axis=0), np.quantile(samples, (1 + q) / 2, axis=0)


def interval_misses(samples: np.ndarray, truth: np.ndarray, levels, band: np.ndarray):
    """Misses and coverage by band of the central intervals of ``samples (n, m)``
    against ``truth (m,)`` at each of ``levels (L,)``.

    Returns ``miss (L, 2)``, the fractions of the ``m`` inputs whose truth lies
    below and above the interval, and ``by_band (L, 3)``, the coverage of the
    inputs of each band of ``band (m,)`` (NaN for an empty band).
    """
    return misses_of(*central_interval(samples, levels), truth, band)


def misses_of(lo: np.ndarray, hi: np.ndarray, truth: np.ndarray, band: np.ndarray):
    """:func:`interval_misses` of the intervals ``[lo, hi] (L, m)`` (from
    :func:`central_interval`)."""
    below, above = truth < lo, truth > hi
    miss = np.stack([below.mean(1), above.mean(1)], axis=1)
    inside = ~(below | above)
    by_band = np.full((len(lo), len(BANDS)), np.nan)
    for b in range(len(BANDS)):
        if np.any(band == b):
            by_band[:, b] = inside[:, band == b].mean(1)
    return miss, by_band


def diagnosis(ds: xr.Dataset, level: float = 0.95) -> xr.Dataset:
    """Per component and for the objective at ``level``, over a
    :func:`~pp_decomp.apps.calibration.calibration_run`'s seeds and steps:
    ``coverage`` of the central interval, ``miss`` by side (``nominal_miss``:
    ``(1 - level)/2`` each), ``by_distance`` (coverage per band), and
    ``early``/``late``: the coverage over the first and the second half of the
    scored steps. Each mean has its standard error over the seeds × steps
    scored (``*_se``)."""
    levels = ds["level"].values
    if not np.any(np.isclose(levels, level)):
        raise ValueError(f"level must be one of the run's levels {levels.tolist()}; got {level!r}")
    if "component_miss" not in ds:
        raise ValueError("the dataset predates the diagnosis: run pp-decomp calibration again")
    at = {"level": levels[np.isclose(levels, level)][0]}
    names = [*map(str, ds["component"].values), "objective"]

    def joined(var: str) -> xr.DataArray:  # components, then the objective as one more
        c, o = ds[f"component_{var}"].sel(at), ds[f"objective_{var}"].sel(at)
        return xr.concat([c, o.expand_dims(component=["objective"])], "component")

    runs = ("seed", "step")
    k = max(int(np.isfinite(ds["ucb_used"]).sum()), 1)
    cover = joined("coverage").sel(bound="central")
    steps = ds["step"].values
    half = steps[: max(len(steps) // 2, 1)]
    out = xr.Dataset(
        {
            "coverage": cover.mean(runs),
            "coverage_se": cover.std(runs) / np.sqrt(k),
            "miss": joined("miss").mean(runs),
            "miss_se": joined("miss").std(runs) / np.sqrt(k),
            "by_distance": joined("by_distance").mean(runs),
            "by_distance_se": joined("by_distance").std(runs) / np.sqrt(k),
            "early": cover.sel(step=half).mean(runs),
            "late": cover.sel(step=steps[len(half) :]).mean(runs),
        }
    )
    out = out.assign_coords(component=names)
    return out.assign_attrs(level=float(at["level"]), nominal_miss=(1 - float(at["level"])) / 2)


def format_diagnosis(diag: xr.Dataset) -> str:
    """Markdown table of a :func:`diagnosis`: one row per component and the objective."""
    level, nominal = diag.attrs["level"], diag.attrs["nominal_miss"]
    head = (
        f"| {level:.2f} central interval | coverage | miss below | miss above | "
        + " | ".join(f"{b} third" for b in BANDS)
        + " | first half of steps | second half |"
    )
    lines = [head, "|" + " --- |" * (6 + len(BANDS))]

    def cell(var: str, *index) -> str:
        v = float(diag[var].values[index])
        se = float(diag[f"{var}_se"].values[index])
        return f"{v:.3f} ± {se:.3f}"

    for i, name in enumerate(diag["component"].values):
        cells = [cell("coverage", i), cell("miss", i, 0), cell("miss", i, 1)]
        cells += [cell("by_distance", i, b) for b in range(len(BANDS))]
        cells += [f"{float(diag['early'][i]):.3f}", f"{float(diag['late'][i]):.3f}"]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    lines.append(
        f"\nCalibrated: coverage {level:.2f} in every column, each side missing {nominal:.3f}; "
        "thirds by distance from a scored input to the nearest observation (unit box)."
    )
    return "\n".join(lines)
