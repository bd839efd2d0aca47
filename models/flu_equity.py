"""Flu vaccination judged by its worst-off age group: the flu season with a nonlinear ``g``.

The system and its components are :mod:`~pp_decomp.models.flu`'s: per age group
``a``, the sick days per person of the whole population, ``F_a = ∫ I_a dt / N``.
Group ``a``'s own burden is ``b_a = F_a N / N_a`` (sick days per person of that
group), and the objective is their smooth maximum, minimised::

    g(F) = τ log Σ_a exp(b_a / τ),   τ = 0.05 days

so a policy is judged by the group it leaves worst off (minimax fairness), to
within ``τ log 5 ≈ 0.08`` days of the plain maximum. ``∂g/∂F_a`` is the
softmax weight of group ``a`` times ``N / N_a``, so ``L_a = N / N_a``.
"""

from __future__ import annotations

import json
from dataclasses import asdict

import numpy as np
from scipy.special import logsumexp

from pp_decomp.models.flu import (
    GROUPS,
    FluParameters,
    domain,
    load_contact_data,
    simulate,
)
from pp_decomp.models.optima import cached_optimum
from pp_decomp.optim import maximize_box
from pp_decomp.problem import Problem

TAU = 0.05  # days: the smooth maximum's temperature


def worst_group(F: np.ndarray, share: np.ndarray, tau: float = TAU) -> np.ndarray:
    """``τ log Σ_a exp(F_a / (share_a τ))`` over the last axis of ``F (..., 5)``."""
    return tau * logsumexp(np.asarray(F) / (share * tau), axis=-1)


def _optimum(params: FluParameters, share: np.ndarray) -> dict:
    """The cached optimum (``models/data/optima.json``); SLSQP from the best of 4096
    feasible Sobol points, 16 starts, if missing."""
    key = "flu-equity:" + json.dumps({**asdict(params), "tau": TAU}, sort_keys=True)

    def compute() -> dict:
        x, v = maximize_box(
            lambda V: -worst_group(simulate(V, params), share),
            domain(params),
            seed=0,
            n_raw=4096,
            n_starts=16,
            maxiter=500,
        )
        return {"x": x.tolist(), "value": float(-v)}

    return cached_optimum(key, compute)


def flu_equity(seed: int = 0, params: FluParameters | None = None) -> Problem:
    """The flu vaccination problem with the worst-off group's burden as the objective
    (deterministic; ``seed`` is accepted for uniformity)."""
    params = params or FluParameters()
    N, _ = load_contact_data(params.year)
    share = N / N.sum()
    best = _optimum(params, share)
    return Problem(
        domain=domain(params),
        components=lambda V: simulate(V, params),
        n_components=5,
        g=lambda F, X: worst_group(F, share),
        lipschitz=1.0 / share,
        maximize=False,
        optimum=best["value"],
        name="flu-equity",
        component_names=[f"sick_days_{g}" for g in GROUPS],
        input_names=[f"vaccinated_{g}" for g in GROUPS],
        units={"inputs": "1", "components": "days per person", "objective": "days per person"},
        description="the flu season judged by its worst-off age group (smooth maximum)",
        metadata={
            "argmin": best["x"],
            "population": N.tolist(),
            "parameters": asdict(params),
            "tau": TAU,
            "source": "the flu problem's system (Prem et al. 2021; UN WPP 2024); g: this module",
        },
    )
