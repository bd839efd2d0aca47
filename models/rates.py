"""A process whose outputs are positive, skewed and span orders of magnitude: a
throughput, an impurity and an energy cost on the unit cube (a held-out check of
output warping).

Three outputs of a process run at settings ``x`` in ``[0, 1]³``, in the manner of a
reactor's yield, its by-product and its running cost:

* ``throughput(x) = exp(3 z_1(x))``: a log-normal-like rate spanning
  ``e⁻³`` to ``e³`` (about 400×), where ``z_1`` is a smooth random field scaled
  to ``[-1, 1]`` over the cube;
* ``impurity(x) = 0.02 + exp(-‖x - c‖ / s)``: a by-product that is small almost
  everywhere and peaks sharply (50×) at a point ``c`` (``s`` from 0.08 to 0.15);
* ``energy(x) = 1 + 0.5 z_3(x)``: smooth and positive.

Each ``z`` is ``Σ_k a_k cos(ω_k · x + φ_k)`` with six features (``ω_k ~ N(0,
2.5² I)``), scaled by its range on a 21³ grid. The objective is linear,
``g = throughput - 4 impurity - energy``, maximised; its optimum is found on a
41³ grid and refined by L-BFGS-B. The seed draws the fields, ``c`` and ``s``:
each instance is its own process. A Gaussian GP on the throughput sees a
function flat near zero over most of the cube and steep near its peak; on the
impurity, a spike on a floor.
"""

from __future__ import annotations

import numpy as np

from pp_decomp.models.optima import grid_maximum, unit_grid
from pp_decomp.problem import Problem
from pp_decomp.space import Box

WEIGHTS = np.array([1.0, -4.0, -1.0])
FEATURES = 6


def rates_parameters(seed: int) -> dict:
    """The instance's fields, spike centre and spread, drawn from ``seed``."""
    rng = np.random.default_rng([seed, 20261129])
    p = {
        "omega": rng.normal(0.0, 2.5, (2, FEATURES, 3)),
        "phase": rng.uniform(0.0, 2 * np.pi, (2, FEATURES)),
        "amp": rng.normal(0.0, 1.0, (2, FEATURES)),
        "centre": rng.uniform(0.2, 0.8, 3),
        "spread": float(rng.uniform(0.08, 0.15)),
    }
    raw = _raw_fields(unit_grid(21, 3), p)
    p["low"], p["high"] = raw.min(axis=0), raw.max(axis=0)
    return p


def _raw_fields(X: np.ndarray, p: dict) -> np.ndarray:
    """The two random Fourier fields at ``X (n, 3)``, unscaled: (n, 2)."""
    arg = np.einsum("nd,fkd->nfk", X, p["omega"]) + p["phase"]
    return np.einsum("nfk,fk->nf", np.cos(arg), p["amp"])


def fields(X: np.ndarray, p: dict) -> np.ndarray:
    """Throughput, impurity and energy at ``X (n, 3)`` for parameters ``p``: (n, 3)."""
    X = np.atleast_2d(np.asarray(X, dtype=float))
    z = 2.0 * (_raw_fields(X, p) - p["low"]) / (p["high"] - p["low"]) - 1.0
    throughput = np.exp(3.0 * z[:, 0])
    impurity = 0.02 + np.exp(-np.linalg.norm(X - p["centre"], axis=1) / p["spread"])
    energy = 1.0 + 0.5 * z[:, 1]
    return np.column_stack([throughput, impurity, energy])


def rates(seed: int = 0) -> Problem:
    """The instance of ``seed`` (see the module docstring)."""
    p = rates_parameters(seed)
    return Problem(
        domain=Box([0.0] * 3, [1.0] * 3),
        components=lambda X: fields(X, p),
        n_components=3,
        weights=WEIGHTS,
        maximize=True,
        optimum=grid_maximum(lambda X: fields(X, p) @ WEIGHTS, dim=3, points=41),
        name="rates",
        component_names=["throughput", "impurity", "energy"],
        description="a process's throughput (spanning 400x), a sharply peaked impurity "
        "and a smooth energy cost on the unit cube; g = throughput - 4 impurity - energy",
        input_names=["temperature", "pressure", "feed"],
        metadata={"source": "written for issue 66 (a held-out positive, skewed problem)"},
    )
