"""Environmental model function (Bliznyuk et al. 2008), the composite benchmark of
Astudillo & Frazier (2019, "Bayesian optimization of composite functions", §5).

A pollutant spilled at two places along a long, narrow channel. Its
concentration at distance ``s`` and time ``t`` is

``c(s, t; M, D, L, τ) = M / sqrt(4πDt) exp(-s² / 4Dt)
+ 1{t > τ} M / sqrt(4πD(t - τ)) exp(-(s - L)² / 4D(t - τ))``

with the mass ``M ∈ [7, 13]`` spilled, the diffusion rate ``D ∈ [0.02, 0.12]``,
the second spill's location ``L ∈ [0.01, 3]`` and time ``τ ∈ [30.01, 30.295]``.
The system reports the 12 concentrations on the grid ``s ∈ {0, 1, 2.5}``,
``t ∈ {15, 30, 45, 60}``; the objective is to calibrate the model to the
concentrations observed under the true parameters
``(M, D, L, τ) = (10, 0.07, 1.505, 30.1525)``:

``f(x) = -Σ_{s,t} (c(s, t; x) - c(s, t; x*))²``, maximised; ``f* = 0``.

This is a 4-D box, 12 observed outputs and a nonlinear ``g`` (a negated sum
of squared errors), the kind of problem composite BO is for.
"""

from __future__ import annotations

import numpy as np

from pp_decomp.problem import Problem
from pp_decomp.space import Box

S = np.array([0.0, 1.0, 2.5])
T = np.array([15.0, 30.0, 45.0, 60.0])
TRUE = np.array([10.0, 0.07, 1.505, 30.1525])
LOWER = np.array([7.0, 0.02, 0.01, 30.01])
UPPER = np.array([13.0, 0.12, 3.0, 30.295])


def concentrations(X: np.ndarray) -> np.ndarray:
    """``c(s, t; x)`` on the 3 x 4 grid for each row ``(M, D, L, τ)`` of ``X``: (n, 12)."""
    X = np.atleast_2d(np.asarray(X, dtype=float))
    M, D, L, tau = (X[:, k, None, None] for k in range(4))
    s, t = S[None, :, None], T[None, None, :]
    first = M / np.sqrt(4 * np.pi * D * t) * np.exp(-(s**2) / (4 * D * t))
    late = t > tau
    dt = np.where(late, t - tau, 1.0)  # the second spill has not happened before τ
    second = M / np.sqrt(4 * np.pi * D * dt) * np.exp(-((s - L) ** 2) / (4 * D * dt))
    return (first + np.where(late, second, 0.0)).reshape(len(X), -1)


OBSERVED = concentrations(TRUE)[0]


def negated_sse(F, X=None):
    """``-Σ_k (F_k - c_k(x*))²`` over the 12 outputs, for ``F (..., 12)``."""
    return -np.sum((np.asarray(F) - OBSERVED) ** 2, axis=-1)


def environmental(seed: int = 0) -> Problem:
    """The calibration problem (deterministic: ``seed`` is accepted and unused)."""
    names = [f"c(s={s:g},t={t:g})" for s in S for t in T]
    return Problem(
        domain=Box(LOWER, UPPER),
        components=concentrations,
        n_components=12,
        g=negated_sse,
        maximize=True,
        optimum=0.0,
        name="environmental",
        component_names=names,
        description="pollutant spill model calibration, 4 inputs, 12 outputs "
        "(Bliznyuk et al. 2008; Astudillo & Frazier 2019)",
        # mass spilled, diffusion rate, location and time of the second spill
        input_names=["M", "D", "L", "tau"],
        units={"components": "concentration", "objective": "(concentration)²"},
        metadata={"source": "Astudillo & Frazier 2019, §5; Bliznyuk et al. 2008"},
    )
