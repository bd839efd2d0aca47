"""A fixed set of short runs whose choices are stored, so that refactorings can be
checked to leave every decision unchanged (``tests/loop/test_reference_runs.py``).

``python tests/loop/reference/runs.py`` rewrites ``choices.json``; do that only when a
change is *meant* to alter choices, and say so in the commit message.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).parent
CHOICES = HERE / "choices.json"


def bowl():
    from pp_decomp import Box, Problem

    return Problem(
        Box([0, 0], [1, 1], A=[[1, 1]], b=[1.2]),
        lambda X: np.c_[(X[:, 0] - 0.7) ** 2, (X[:, 1] - 0.8) ** 2],
        2,
        g=lambda F, X: np.sqrt(np.abs(F[..., 0] + F[..., 1]) + 0.01),
        maximize=False,
        optimum=float(np.sqrt(0.15**2 * 2 + 0.01)),
        name="bowl",
    )


def problem(name: str):
    from pp_decomp.models import get_problem

    if name == "synthetic-small":
        return get_problem("synthetic", seed=3, n_components=3, n_points=150)
    if name == "bowl":
        return bowl()
    return get_problem(name, seed=0)


# (key, problem, strategy, iterations, Optimizer keyword arguments)
RUNS = [
    ("d-gpucb-map", "synthetic-small", "d-gpucb", 10, dict(n_init=4, seed=1)),
    ("gp-ucb-map", "synthetic-small", "gp-ucb", 10, dict(n_init=4, seed=1)),
    ("d-gpucb-mc-map", "synthetic-small", "d-gpucb-mc", 9, dict(n_init=3, seed=2, mc_samples=64)),
    ("gp-mi-refit2", "synthetic-small", "gp-mi", 10, dict(n_init=3, seed=2, refit_every=2)),
    ("d-ei-map", "synthetic-small", "d-ei", 8, dict(n_init=3, seed=4)),
    ("thompson-map", "synthetic-small", "thompson", 8, dict(n_init=3, seed=4)),
    ("d-thompson-map", "synthetic-small", "d-thompson", 8, dict(n_init=3, seed=4)),
    ("random", "synthetic-small", "random", 8, dict(n_init=3, seed=4)),
    ("d-gpucb-fixed", "synthetic-small", "d-gpucb", 8, dict(n_init=0, inference="fixed")),
    ("gp-ucb-fixed", "synthetic-small", "gp-ucb", 8, dict(n_init=0, inference="fixed")),
    ("d-gpucb-fast", "synthetic-small", "d-gpucb", 9, dict(n_init=3, inference="nuts", fast=True)),
    ("lipschitz-box", "bowl", "d-gpucb-lipschitz", 8, dict(n_init=5, seed=0)),
    ("mc-box", "bowl", "d-gpucb-mc", 8, dict(n_init=5, seed=0, mc_samples=64)),
    ("ei-box", "bowl", "ei", 8, dict(n_init=5, seed=0)),
    ("add-gp-ucb", "kandasamy-10-3-3", "add-gp-ucb", 9, dict(n_init=5, seed=0)),
    ("g-add-gp-ucb", "rolland-star", "g-add-gp-ucb", 9, dict(n_init=5, seed=0)),
]


def run(key: str) -> list[list[float]]:
    """The inputs chosen by reference run ``key``."""
    from pp_decomp import Optimizer

    _, name, strategy, iterations, kw = next(r for r in RUNS if r[0] == key)
    ds = Optimizer(problem(name), strategy, **kw).run(iterations)
    return np.asarray(ds["x"].values).tolist()


if __name__ == "__main__":
    import pp_decomp  # noqa: F401  (pins the BLAS threads before numpy works)

    keys = sys.argv[1:] or [r[0] for r in RUNS]
    stored = json.loads(CHOICES.read_text()) if CHOICES.exists() else {}
    for key in keys:
        stored[key] = run(key)
        print(key, "done", flush=True)
    CHOICES.write_text(json.dumps(stored, indent=1) + "\n")
