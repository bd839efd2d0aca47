"""A GP's first hyperparameter posterior on many points: importance sampling from a
proposal around its mode (a Laplace approximation, checked).

On a few points the prior is a good proposal
(:mod:`pp_decomp.components.inference.importance`); on many it is not, and the
posterior has concentrated around one mode where it is close to Gaussian
(Bernstein-von Mises). There a Laplace approximation, the mode ``ẑ`` of the log
posterior in the sampler's unconstrained space and its curvature
``Σ = (−∇² log p(ẑ | y))⁻¹``, is a good proposal: ``S`` draws of ``N(ẑ, Σ)`` are
given to the refresh's proposal (:func:`~pp_decomp.components.inference.refresh.refresh_fit`:
a Student-t kernel density around them mixed with one wider t), whose
draws are weighted by the exact posterior, in random order, 512 first and
then 128 more at a time up to ``M`` until the weights pass (:data:`GROW`), and
resampled.

The result is used only where it passes the checks any importance fit must:
the weights' Pareto ``k̂`` at most 0.7 and their ESS at least the ESS a NUTS
fit must reach (:data:`~pp_decomp.components.diagnostics.CONVERGENCE`); otherwise the
caller runs NUTS from the mode. The Hessian is taken by central differences of
the log posterior, ``2k(k + 1) + 1`` values in one batch for ``k``
hyperparameters; a direction of non-negative curvature (a flat or saddle
direction of the mode) gets the variance ``1 / CURVATURE_FLOOR``.

Example
-------
>>> import numpy as np
>>> from pp_decomp.components import ComponentGP
>>> rng = np.random.default_rng(0)
>>> X = rng.uniform(size=(120, 2)); y = np.sin(4 * X[:, 0]) + 0.05 * rng.normal(size=120)
>>> gp = ComponentGP("matern32", 2, bounds=np.array([[0.0, 0.0], [1.0, 1.0]]))
>>> laplace_fit(gp, X, y, n_keep=128, rng=rng)
True
>>> gp.diagnostics.proposal
'laplace'
"""

from __future__ import annotations

import time
from dataclasses import replace

import numpy as np

from pp_decomp.components.inference.refresh import refresh_fit, sampler_density
from pp_decomp.components.posterior.incremental import ess

STEP = 1e-3  # finite-difference step in the log hyperparameters
CURVATURE_FLOOR = 1e-2  # the least curvature a direction is given: variance ≤ 100
N_CENTRES = 256  # draws of the Laplace approximation the proposal is built around
N_PROPOSAL = 1024  # weighed draws at most: the approximation is close, fewer than a refresh's
# weighed 512 first, then 128 more at a time until the weights pass: each costs a
# factorisation of K, the fit's cost on many points
GROW = (512, 128)


def hessian(log_posterior, z: np.ndarray, Xs, ys, step: float = STEP) -> np.ndarray:
    """Central-difference Hessian of ``log_posterior(Z, Xs, ys)`` at ``z (k,)``: (k, k).

    ``∂²f/∂z_i∂z_j ≈ [f(z + h e_i + h e_j) − f(z + h e_i − h e_j)
    − f(z − h e_i + h e_j) + f(z − h e_i − h e_j)] / 4h²``, every point in one call.
    """
    k = len(z)
    E = np.eye(k) * step
    pairs = [(i, j) for i in range(k) for j in range(i, k)]
    signs = np.array([(1, 1), (1, -1), (-1, 1), (-1, -1)], dtype=float)
    Z = np.array([z + a * E[i] + b * E[j] for i, j in pairs for a, b in signs])
    f = np.asarray(log_posterior(Z, Xs, ys), dtype=float).reshape(len(pairs), 4)
    H = np.empty((k, k))
    for (i, j), v in zip(pairs, f, strict=True):
        H[i, j] = H[j, i] = (v[0] - v[1] - v[2] + v[3]) / (4 * step**2)
    return H


def laplace_covariance(H: np.ndarray) -> np.ndarray:
    """``(−H)⁻¹`` with every curvature at least :data:`CURVATURE_FLOOR`: (k, k)."""
    w, V = np.linalg.eigh(-H)
    return (V / np.maximum(w, CURVATURE_FLOOR)) @ V.T


def laplace_mode(gp, X, y, rng: np.random.Generator):
    """``gp`` fitted at its posterior mode on ``(X, y)`` (MAP), and the Laplace
    approximation there in the sampler's unconstrained space: ``(ẑ (k,), Σ (k, k))``,
    or ``None`` where the GP has no numpy density, the curvature is not finite or
    the mode search failed from every start (``gp`` is then unfitted: NUTS starts
    where it would without a mode)."""
    try:
        gp.fit(X, y, "map", seed=rng)
    except RuntimeError:  # map_search's: no start gave a finite objective
        return None
    density = sampler_density(gp)
    if density is None:
        return None
    Xs, ys = gp._set_data(X, y)
    z = gp._unconstrained(gp.draws, gp._compiled())[0]
    H = hessian(density[0], z, Xs, ys)
    if not np.all(np.isfinite(H)):
        return None
    return z, laplace_covariance(H)


def prior_ess_fraction(gp, mode: tuple, rng: np.random.Generator) -> float:
    """The ESS per prior draw that weighing prior draws by the likelihood can reach
    when the posterior is close to its Laplace approximation ``mode = (ẑ, Σ)``
    (:func:`laplace_mode`): the ESS per draw, ``(Σw)² / (n Σw²)``, of the weights
    ``w_i = N(z_i; ẑ, Σ)`` of ``n =`` :data:`N_CENTRES` × 16 prior draws ``z_i``.

    The likelihood is the posterior over the prior, ``L = p / q``; where the
    posterior is narrow against the prior, ``q`` is about constant across it and
    ``L`` about proportional to ``N(ẑ, Σ)``, so these are the prior draws'
    likelihood weights without a factorisation of ``K``. Unlike a Gaussian
    prior's closed form, the draws see where the posterior sits in the prior's
    tails, which decides the ESS; the estimate's floor is ``1 / n``.
    """
    z, cov = mode
    Z0 = gp._unconstrained(gp.sample_prior(16 * N_CENTRES, rng), gp._compiled())
    w, V = np.linalg.eigh(cov)
    # the Gaussian's log density up to a constant, which the ESS does not see
    u = ((Z0 - z) @ V) / np.sqrt(np.maximum(w, np.finfo(float).tiny))
    return ess(-0.5 * np.sum(u**2, axis=1)) / len(Z0)


def laplace_fit(
    gp, X, y, n_keep: int, rng: np.random.Generator, mode=None, n_proposal: int = N_PROPOSAL
) -> bool:
    """Condition ``gp`` on ``n_keep`` draws of its posterior on ``(X, y)`` by importance
    sampling around its mode (module docstring), if the weights pass the checks;
    returns whether they did. ``mode``: :func:`laplace_mode`'s result when already
    computed on ``gp``. Either way ``gp`` is left fitted: on the importance draws
    (``gp.diagnostics.proposal == "laplace"``), or at the mode (a MAP fit, a NUTS
    run's natural start).
    """
    start = time.perf_counter()
    mode = laplace_mode(gp, X, y, rng) if mode is None else mode
    if mode is None:
        return False
    _, to_draws = sampler_density(gp)
    centres = rng.multivariate_normal(*mode, size=N_CENTRES)
    # refresh_fit conditions gp only where its weights pass: else the MAP fit stays
    if not refresh_fit(gp, X, y, to_draws(centres), n_keep, rng, n_proposal, "laplace", GROW):
        return False
    gp.diagnostics = replace(gp.diagnostics, seconds=time.perf_counter() - start)
    return True
