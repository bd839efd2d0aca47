"""Contal et al. (2014)'s tasks under their protocol: a finite search set, kernels known beforehand.

The paper runs every algorithm on a finite set of points with the kernel's
hyperparameters estimated beforehand on half of that set ("each algorithm was
running with the same prior information"), or, for the generated GPs, with the
kernel they were drawn from. Here:

* ``gp-sample-2d``, ``gp-sample-4d``: a draw of ``GP(0, k)`` at ``n_points``
  uniform points of ``[0, 40]^d``, ``k`` the Matérn 3/2 kernel of unit variance
  and lengthscale 1 (``d = 2``) or 16 (``d = 4``), observed with noise of
  standard deviation 0.01 (1% of the signal's); the true kernel is attached.
* ``gaussian-mixture``: three 2-D Gaussian bumps (the highest one thin) plus a
  smooth Matérn 5/2 GP perturbation on a 40 x 40 grid of ``[0, 1]²``, noise 1%
  of the function's standard deviation.
* ``<name>-known`` (``branin``, ``goldstein-price``, ``himmelblau``): the
  closed form at ``n_points`` uniform points of its box, noise-free.
* With ``known_kernels=True`` (the ``-known`` problems): an SE kernel fitted by
  MAP on a random half of the points (:func:`fitted_on_half`), for
  ``inference="fixed"``.
* ``independent-sites``: ``n_sites`` points too far apart to correlate, each
  value an independent ``N(0, 1)`` draw: a GP sample on which GP-MI, told the
  true kernel, stops exploring after a few sites and keeps a linear regret
  (the paper's erratum).

The reading of the paper's kernel (its ``ν = 3`` is the argument ``2ν`` of its
authors' code) and of its domain: :doc:`/design` ("Contal et al.'s tasks").

>>> from pp_decomp.models.contal import gp_sample_problem
>>> p = gp_sample_problem(seed=0, dim=2, n_points=100)
>>> p.dim, p.domain.size, p.known_kernels.kernel
(2, 100, 'matern32')
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from pp_decomp.components import KnownKernels
from pp_decomp.components.posterior.draws import HyperDraws
from pp_decomp.components.samples import sample_function
from pp_decomp.models.classic import (
    branin,
    candidate_problem,
    goldstein_price,
    himmelblau_tilted,
)
from pp_decomp.problem import Problem
from pp_decomp.space import Box, CandidateSet
from pp_decomp.validate import (
    check_choice,
    check_nonnegative,
    check_positive_int,
    check_X,
    check_y,
)

SIDE = 40.0  # the hypercube's side in the authors' code (gp_sample.m)
BANDWIDTH = {2: 1.0, 4: 16.0}
NOISE = 0.01  # of the signal's standard deviation
CLOSED_FORMS = {
    "branin": (branin, Box([-5.0, 0.0], [10.0, 15.0])),
    "goldstein-price": (goldstein_price, Box([-2.0, -2.0], [2.0, 2.0])),
    "himmelblau": (himmelblau_tilted, Box([-5.0, -5.0], [5.0, 5.0])),
}


def fitted_on_half(
    X: np.ndarray, values: np.ndarray, seed: int, noise_sd: float = 0.0
) -> KnownKernels:
    """An SE kernel fitted by MAP on a random half of the search set ``X (N, d)``,
    whose ``values (N,)`` are observed there with noise of sd ``noise_sd``.

    The paper estimated its hyperparameters by cross-validation on that half;
    MAP under the package's priors is the estimate this package has.

    >>> import numpy as np
    >>> X = np.linspace(0, 1, 20)[:, None]
    >>> fitted_on_half(X, np.sin(6 * X[:, 0]), seed=0).kernel
    'se'
    """
    X = np.ascontiguousarray(check_X(X, "X", min_rows=4), dtype=float)  # a half of >= 2
    values = np.ascontiguousarray(check_y(values, "values", n=len(X)), dtype=float)
    seed = check_positive_int(seed, "seed", minimum=0)
    noise_sd = check_nonnegative(noise_sd, "noise_sd")
    return _fitted(X.tobytes(), X.shape, values.tobytes(), seed, noise_sd)


@lru_cache(maxsize=16)
def _fitted(X_bytes, shape, value_bytes, seed, noise_sd) -> KnownKernels:
    # cached: a benchmark builds each trial's instance once per strategy
    X = np.frombuffer(X_bytes).reshape(shape)
    values = np.frombuffer(value_bytes)
    rng = np.random.default_rng(np.random.SeedSequence([seed, 2014]))
    half = np.sort(rng.choice(len(X), len(X) // 2, replace=False))
    observed = values[half] + noise_sd * rng.standard_normal(len(half))
    bounds = CandidateSet(X).bounds
    return KnownKernels.fit(X[half], observed[:, None], bounds, kernel="se", seed=seed)


def _true_kernel(ls: float, dim: int, scale: np.ndarray) -> tuple[HyperDraws, KnownKernels]:
    """The unit-variance Matérn 3/2 kernel of lengthscale ``ls`` with noise ``NOISE``,
    and the same kernel as the problem's ``known_kernels``, its lengthscales divided
    by the search set's ``scale (dim,)`` (the widths the package's unit domain uses)."""
    truth = HyperDraws(ls=np.full((1, dim), ls), eta=np.ones(1), sigma=np.array([NOISE]))
    known = HyperDraws(ls=truth.ls / scale, eta=truth.eta, sigma=truth.sigma)
    return truth, KnownKernels("matern32", (known,))


def _rng(seed: int, *tag: int) -> np.random.Generator:
    return np.random.default_rng(
        np.random.SeedSequence([check_positive_int(seed, "seed", minimum=0), *tag])
    )


def gp_sample_problem(seed: int = 0, dim: int = 2, n_points: int = 1000) -> Problem:
    """Maximise a Matérn 3/2 GP sample at ``n_points`` uniform points of ``[0, 40]^dim``.

    ``dim`` is 2 (lengthscale 1) or 4 (lengthscale 16); the sample has unit
    variance, is observed with noise sd 0.01, and its kernel is the problem's
    ``known_kernels``.
    """
    check_choice(dim, "dim", tuple(BANDWIDTH))
    n = check_positive_int(n_points, "n_points", minimum=2)
    rng = _rng(seed, dim)
    X = SIDE * rng.uniform(size=(n, dim))
    truth, known = _true_kernel(BANDWIDTH[dim], dim, CandidateSet(X).widths)
    f = sample_function("matern32", X, truth, rng)
    return candidate_problem(
        f"gp-sample-{dim}d",
        X,
        f,
        f"Matérn 3/2 GP sample (lengthscale {BANDWIDTH[dim]:g}) at {n} points of [0, 40]^{dim}",
        noise_sd=NOISE,
        known=known,
    )


def gaussian_mixture_problem(seed: int = 0, known_kernels: bool = False) -> Problem:
    """Maximise three Gaussian bumps plus a small Matérn GP perturbation on a 40 x 40 grid."""
    rng = _rng(seed)
    g = np.linspace(0, 1, 40)
    X = np.stack(np.meshgrid(g, g), -1).reshape(-1, 2)
    centers = np.array([[0.25, 0.3], [0.7, 0.75], [0.8, 0.2]])
    widths = np.array([0.15, 0.12, 0.03])  # the highest peak is thin
    heights = np.array([0.8, 0.9, 1.2])
    d2 = ((X[:, None, :] - centers[None]) ** 2).sum(-1)
    f = (heights * np.exp(-d2 / (2 * widths**2))).sum(1)
    # sigma is unused: only the kernel matrix is drawn from
    perturbation = HyperDraws(ls=np.full((1, 2), 0.2), eta=np.ones(1), sigma=np.ones(1))
    f = f + 0.05 * sample_function("matern52", X, perturbation, rng)
    noise_sd = NOISE * float(f.std())
    return candidate_problem(
        "gaussian-mixture-known" if known_kernels else "gaussian-mixture",
        X,
        f,
        "3 Gaussian bumps + Matérn GP perturbation on a 40x40 grid",
        noise_sd=noise_sd,
        known=fitted_on_half(X, f, seed, noise_sd) if known_kernels else None,
    )


def search_set_problem(name: str, seed: int = 0, n_points: int = 1000) -> Problem:
    """Maximise the negated closed form ``name`` at ``n_points`` uniform points of its box,
    with an SE kernel fitted on half of them (Contal et al.'s protocol)."""
    check_choice(name, "name", tuple(CLOSED_FORMS))
    n = check_positive_int(n_points, "n_points", minimum=2)
    fn, box = CLOSED_FORMS[name]
    X = box.lower + (box.upper - box.lower) * _rng(seed, 5).uniform(size=(n, box.dim))
    f = -fn(X)
    return candidate_problem(
        f"{name}-known",
        X,
        f,
        f"negated {name} at {n} uniform points of its box, SE kernel fitted on half",
        known=fitted_on_half(X, f, seed),
    )


def independent_sites(seed: int = 0, n_sites: int = 100) -> Problem:
    """Maximise ``n_sites`` independent ``N(0, 1)`` values at the points ``0, 1, ..., n_sites - 1``.

    The values are a draw of the GP with the Matérn 3/2 kernel of lengthscale
    0.001 (no two sites correlate), which is attached as the known kernel;
    noise sd 0.01.
    """
    n = check_positive_int(n_sites, "n_sites", minimum=2)
    X = np.arange(float(n))[:, None]
    truth, known = _true_kernel(1e-3, 1, CandidateSet(X).widths)
    f = sample_function("matern32", X, truth, _rng(seed, 1))
    return candidate_problem(
        "independent-sites",
        X,
        f,
        f"{n} uncorrelated N(0, 1) sites: a GP sample where GP-MI stops exploring",
        noise_sd=NOISE,
        known=known,
    )
