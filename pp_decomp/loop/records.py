"""What the loop records at each step, and the summary of a refit."""

from __future__ import annotations

import numpy as np


def step_record(phase: str, gamma: float) -> dict:
    """A step's record before its model and acquisition fill it in."""
    return {
        "phase": phase,
        "beta": np.nan,
        "acq_value": np.nan,
        "fit_seconds": 0.0,
        "ask_seconds": 0.0,
        "gamma_next": gamma,
        "refit": {},
    }


def fit_summary(gp, seconds: float | None = None) -> dict:
    """Hyperparameter means and diagnostics of a refit (``seconds`` defaults to the fit's)."""
    d = gp.diagnostics
    return {
        "ls_mean": gp.draws.ls.mean(0),
        "eta_mean": float(gp.draws.eta.mean()),
        "sigma_mean": float(gp.draws.sigma.mean()),
        "rhat_max": d.rhat_max,
        "ess_bulk_min": d.ess_bulk_min,
        "divergences": d.divergences,
        "fit_seconds": d.seconds if seconds is None else seconds,
    }


def jsonable(obj):
    """``obj`` with numpy arrays and scalars turned into lists and Python numbers."""
    if isinstance(obj, dict):
        return {k: jsonable(v) for k, v in obj.items()}
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    if isinstance(obj, np.generic):
        return obj.item()
    return obj
