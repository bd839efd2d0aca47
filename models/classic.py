"""Classic test functions of Contal et al. (2014), as single-component problems (maximised).

* ``branin``: negated Branin-Hoo on ``[-5, 10] x [0, 15]``; max ``-0.397887`` (3 maximisers).
* ``goldstein-price``: negated Goldstein-Price on ``[-2, 2]²``; max ``-3`` at ``(0, -1)``.
* ``himmelblau``: negated Himmelblau tilted by a linear term, ``-(H(x, y) + 0.5 x)``,
  on ``[-5, 5]²``; four peaks, one global maximum (the paper does not print its
  tilt; ``0.5 x`` is this module's choice).
* ``gaussian-mixture``: three 2-D Gaussian bumps (the highest one thin) plus a
  smooth Matérn-5/2 GP perturbation, on a 40 x 40 grid of ``[0, 1]²`` (exact optimum).
* ``gp-sample-2d``, ``gp-sample-4d``: SE GP samples on 900 grid points of
  ``[0, 1]²`` / 1000 uniform points of ``[0, 1]⁴`` (exact optimum).

Each has ``J = 1`` component (the function itself) and ``g = f_1``, so
decomposed and composed strategies coincide; the decomposition does not matter
on these, they test the optimisation machinery and the baselines.
"""

from __future__ import annotations

import numpy as np
from scipy import optimize

from pp_decomp.components.samples import stable_cholesky
from pp_decomp.kernels import kernel_matrix
from pp_decomp.problem import Problem
from pp_decomp.space import Box, CandidateSet

SOURCE = "Contal et al. 2014, Sec. 5 (classic test functions)"


def branin(X):
    """Branin-Hoo function at ``X (n, 2)``; minimum 0.397887 at three points."""
    x, y = X[:, 0], X[:, 1]
    b, c, t = 5.1 / (4 * np.pi**2), 5 / np.pi, 1 / (8 * np.pi)
    return (y - b * x**2 + c * x - 6) ** 2 + 10 * (1 - t) * np.cos(x) + 10


def goldstein_price(X):
    """Goldstein-Price function at ``X (n, 2)``; minimum 3 at ``(0, -1)``."""
    x, y = X[:, 0], X[:, 1]
    a = 1 + (x + y + 1) ** 2 * (19 - 14 * x + 3 * x**2 - 14 * y + 6 * x * y + 3 * y**2)
    b = 30 + (2 * x - 3 * y) ** 2 * (18 - 32 * x + 12 * x**2 + 48 * y - 36 * x * y + 27 * y**2)
    return a * b


def himmelblau_tilted(X):
    """Himmelblau's function plus ``0.5 x`` at ``X (n, 2)``, so one of its four minima is global."""
    x, y = X[:, 0], X[:, 1]
    return (x**2 + y - 11) ** 2 + (x + y**2 - 7) ** 2 + 0.5 * x


def _box_optimum(fn, box: Box, starts) -> float:
    """Max of ``-fn`` by L-BFGS-B from ``starts`` (thorough local search from known basins)."""
    best = -np.inf
    for x0 in starts:
        res = optimize.minimize(
            lambda z: fn(z[None])[0],
            x0,
            method="L-BFGS-B",
            bounds=list(zip(box.lower, box.upper, strict=True)),
            options={"ftol": 1e-15, "gtol": 1e-12},
        )
        best = max(best, -float(res.fun))
    return best


def _single(name, domain, fn, optimum, description, maximize=True):
    return Problem(
        domain=domain,
        components=lambda X: fn(np.asarray(X, dtype=float))[:, None],
        n_components=1,
        weights=np.ones(1),
        lipschitz=np.ones(1),
        maximize=maximize,
        optimum=optimum,
        name=name,
        component_names=["f"],
        description=description,
        metadata={"source": SOURCE},
    )


def _grid_starts(box: Box, k: int = 12):
    axes = [np.linspace(lo, hi, k) for lo, hi in zip(box.lower, box.upper, strict=True)]
    return np.stack(np.meshgrid(*axes), -1).reshape(-1, box.dim)


def branin_problem(seed: int = 0) -> Problem:
    """Maximise the negated Branin-Hoo function on ``[-5, 10] x [0, 15]`` (Contal et al. 2014)."""
    box = Box([-5.0, 0.0], [10.0, 15.0])
    opt = _box_optimum(branin, box, _grid_starts(box))
    return _single("branin", box, lambda X: -branin(X), opt, "negated Branin-Hoo, 2-D")


def goldstein_price_problem(seed: int = 0) -> Problem:
    """Maximise the negated Goldstein-Price function on ``[-2, 2]²`` (Contal et al. 2014)."""
    box = Box([-2.0, -2.0], [2.0, 2.0])
    opt = _box_optimum(goldstein_price, box, _grid_starts(box))
    return _single(
        "goldstein-price", box, lambda X: -goldstein_price(X), opt, "negated Goldstein-Price, 2-D"
    )


def himmelblau_problem(seed: int = 0) -> Problem:
    """Maximise the negated tilted Himmelblau function on ``[-5, 5]²`` (Contal et al. 2014)."""
    box = Box([-5.0, -5.0], [5.0, 5.0])
    opt = _box_optimum(himmelblau_tilted, box, _grid_starts(box))
    return _single(
        "himmelblau",
        box,
        lambda X: -himmelblau_tilted(X),
        opt,
        "negated Himmelblau tilted by 0.5x, 2-D, one global of four peaks",
    )


def _grid_problem(name, X, values, description):
    lookup = {tuple(x): v for x, v in zip(X, values, strict=True)}

    def fn(Z):
        try:
            return np.array([lookup[tuple(z)] for z in Z])
        except KeyError as err:
            raise ValueError(f"{name}: {err.args[0]} is not a candidate point") from err

    return _single(name, CandidateSet(X), fn, float(values.max()), description)


def _gp_sample(kernel, X, ls, rng):
    K = kernel_matrix(kernel, X, X, np.full((1, X.shape[1]), ls), np.ones(1))[0]
    return stable_cholesky(K) @ rng.standard_normal(len(X))


def gaussian_mixture_problem(seed: int = 0) -> Problem:
    """Maximise three Gaussian bumps plus a small Matérn GP perturbation on a 40 x 40 grid."""
    rng = np.random.default_rng(np.random.SeedSequence(seed))
    g = np.linspace(0, 1, 40)
    X = np.stack(np.meshgrid(g, g), -1).reshape(-1, 2)
    centers = np.array([[0.25, 0.3], [0.7, 0.75], [0.8, 0.2]])
    widths = np.array([0.15, 0.12, 0.03])  # the highest peak is thin
    heights = np.array([0.8, 0.9, 1.2])
    d2 = ((X[:, None, :] - centers[None]) ** 2).sum(-1)
    f = (heights * np.exp(-d2 / (2 * widths**2))).sum(1)
    f = f + 0.05 * _gp_sample("matern52", X, 0.2, rng)
    return _grid_problem(
        "gaussian-mixture", X, f, "3 Gaussian bumps + Matérn GP perturbation on a 40x40 grid"
    )


def gp_sample_problem(seed: int = 0, dim: int = 2) -> Problem:
    """Maximise an SE GP sample: a 30 x 30 grid for ``dim=2``, 1000 uniform points otherwise."""
    rng = np.random.default_rng(np.random.SeedSequence([seed, dim]))
    if dim == 2:
        g = np.linspace(0, 1, 30)
        X = np.stack(np.meshgrid(g, g), -1).reshape(-1, 2)
    else:
        X = rng.uniform(size=(1000, dim))
    f = _gp_sample("se", X, 0.25 if dim == 2 else 0.4, rng)
    return _grid_problem(f"gp-sample-{dim}d", X, f, f"SE GP sample on {len(X)} points, {dim}-D")
