"""A field that is not stationary: a sharp front, a plume in one corner and a smooth
background, each observed, on the unit square (a held-out check of input warping).

Three fields over a region, in the manner of a weather map:

* ``front(x) = tanh((cos θ (x_0 - ½) + sin θ (x_1 - ½) + ½ - c) / w)``: a front of
  width ``w`` (0.03 to 0.06 of the box) along a line at angle ``θ`` through
  ``½ + (c - ½)(cos θ, sin θ)``, flat on either side;
* ``plume(x) = exp(-‖x - k‖ / s)``: a plume from a source at corner ``k``,
  decaying over ``s`` (0.06 to 0.12), flat far from it;
* ``background(x) = 0.5 sin(2 x_0 + φ) cos(1.5 x_1)``: smooth everywhere.

The objective is linear, ``g = front + 1.5 plume + background``, maximised; its
optimum is found on a 401 x 401 grid and refined by L-BFGS-B. The seed draws
``θ``, ``c``, ``w``, the corner ``k``, ``s`` and ``φ``: each instance has its
own front and plume. No component is stationary but the background: a
stationary kernel fitted to the front or the plume has one lengthscale for
the flat parts and the fast one.
"""

from __future__ import annotations

import numpy as np

from pp_decomp.models.optima import grid_maximum
from pp_decomp.problem import Problem
from pp_decomp.space import Box

CORNERS = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
WEIGHTS = np.array([1.0, 1.5, 1.0])


def front_parameters(seed: int) -> dict:
    """The instance's front, plume and background parameters, drawn from ``seed``."""
    rng = np.random.default_rng([seed, 20261128])
    return {
        "theta": float(rng.uniform(0.0, np.pi)),
        "offset": float(rng.uniform(0.3, 0.7)),
        "width": float(rng.uniform(0.03, 0.06)),
        "corner": CORNERS[rng.integers(4)],
        "spread": float(rng.uniform(0.06, 0.12)),
        "phase": float(rng.uniform(0.0, 2 * np.pi)),
    }


def fields(X: np.ndarray, p: dict) -> np.ndarray:
    """The three fields at ``X (n, 2)`` for parameters ``p``: (n, 3)."""
    X = np.atleast_2d(np.asarray(X, dtype=float))
    c = np.cos(p["theta"]) * (X[:, 0] - 0.5) + np.sin(p["theta"]) * (X[:, 1] - 0.5) + 0.5
    front = np.tanh((c - p["offset"]) / p["width"])
    plume = np.exp(-np.linalg.norm(X - p["corner"], axis=1) / p["spread"])
    background = 0.5 * np.sin(2 * X[:, 0] + p["phase"]) * np.cos(1.5 * X[:, 1])
    return np.column_stack([front, plume, background])


def front(seed: int = 0) -> Problem:
    """The instance of ``seed`` (see the module docstring)."""
    p = front_parameters(seed)
    return Problem(
        domain=Box([0.0, 0.0], [1.0, 1.0]),
        components=lambda X: fields(X, p),
        n_components=3,
        weights=WEIGHTS,
        maximize=True,
        optimum=grid_maximum(lambda X: fields(X, p) @ WEIGHTS, dim=2, points=401),
        name="front",
        component_names=["front", "plume", "background"],
        description="a sharp front, a plume in one corner and a smooth background on "
        "the unit square; g = front + 1.5 plume + background",
        input_names=["east", "north"],
        metadata={"source": "written for issue 66 (a held-out non-stationary field)"},
    )
