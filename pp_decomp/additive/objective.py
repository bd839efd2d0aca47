"""The additive GP's MAP objective and its priors' centre, in numpy.

:class:`MapObjective` is the negative log posterior of an additive SE GP over
groups of inputs in the log-scale hyperparameters ``z = (log ℓ, log η, log σ)``,
with its gradient; the NUTS density (:mod:`pp_decomp.additive.density`) and the
PyMC model (:mod:`pp_decomp.additive.pymc_model`) are the same density.
"""

from __future__ import annotations

from functools import cached_property

import numpy as np

from pp_decomp.additive.density import (
    ard_log_density_rows,
    prior_constants,
    shared_log_density_rows,
)
from pp_decomp.components.gp.priors import Priors
from pp_decomp.components.inference.compiled import SEARCH_BOX, penalty
from pp_decomp.components.posterior.batched import JITTER
from pp_decomp.kernels.families import ExpQuad

# the additive models keep the inverse-gamma lengthscales (mean 0.3 per group
# dimension) and the amplitude prior (Gamma(2, 2) scaled by 1/sqrt(M)) they were
# developed and measured with, and no constant-mean term
# the additive models' own priors, measured with the gamma noise prior (issue-22 figures)
ADDITIVE_PRIORS = Priors(
    ls_family="inverse-gamma", eta_alpha=2.0, eta_beta=2.0, sigma_family="gamma", mean_sd=0.0
)
# an additive GP splits its amplitude over M groups: amplitudes may be smaller
ADDITIVE_SEARCH_BOX = {**SEARCH_BOX, "eta_log__": (-9.0, 5.0)}


def unpack_rows(Z, D: int, M: int, shared: bool):
    """``ℓ (S, D)``, ``η (S, M)``, ``σ (S,)`` from log-scale rows ``Z (S, k)``: ``k = D + M + 1``,
    or 3 with ``shared`` (one lengthscale and one amplitude, repeated)."""
    v = np.exp(np.atleast_2d(np.asarray(Z, dtype=float)))
    if shared:
        S = len(v)
        return np.repeat(v[:, :1], D, 1), np.repeat(v[:, 1:2], M, 1), v[:, 2].reshape(S)
    return v[:, :D], v[:, D : D + M], v[:, -1]


def prior_center(priors: Priors, n_groups: int, n_ls: int, n_eta: int) -> np.ndarray:
    """The priors' centre in ``z = (log ℓ (n_ls), log η (n_eta), log σ)``: the log of
    each prior's mean (the amplitude's rate scaled by ``sqrt(M)``), PyMC's initial
    point for these distributions; MAP's first start and a cold NUTS chain's centre."""
    p = priors
    ls = np.log(p.ls_beta / max(p.ls_alpha - 1.0, 1.0))
    eta = np.log(p.eta_alpha / (p.eta_beta * np.sqrt(n_groups)))
    return np.concatenate(
        [np.full(n_ls, ls), np.full(n_eta, eta), [np.log(p.sigma_alpha / p.sigma_beta)]]
    )


class MapObjective:
    """Negative log posterior of the additive model and its gradient, in numpy.

    The same model as :func:`pp_decomp.additive.pymc_model.build_additive_model`, as a
    function of ``z = (log ℓ (D), log η (M), log σ)`` without the log-transform's
    Jacobian, so its minimum is the posterior mode of the constrained parameters.
    With ``K = Σ_j K_j + (σ² + jitter) I``, ``α = K⁻¹ y`` and ``B = ααᵀ - K⁻¹``:

    * ``∂ log p(y) / ∂ log η_j = tr(B K_j)``
    * ``∂ log p(y) / ∂ log ℓ_d = ½ tr(B Σ_j W_jd K_j ⊙ Δ²_d / ℓ_d²)``
    * ``∂ log p(y) / ∂ log σ = σ² tr(B)``

    plus the log-prior gradients. Computing these directly avoids compiling a
    PyTensor graph for every number of groups (slow for ``(n, n, D)`` tensors).

    With ``shared=True`` one lengthscale and one amplitude serve every dimension
    and group (Kandasamy et al. 2015, §5): ``z = (log ℓ, log η, log σ)``, the
    likelihood's gradients are summed over the tied entries and each prior is
    counted once.
    """

    def __init__(self, X, y, W, priors: Priors, shared: bool = False):
        self.y = np.asarray(y, dtype=float)
        self.W = np.asarray(W, dtype=float)
        self.p, self.shared = priors, shared
        self.d2 = (X[:, None, :] - X[None, :, :]) ** 2  # (n, n, D)
        self.M, self.D = self.W.shape

    def unpack(self, z) -> tuple[np.ndarray, np.ndarray, float]:
        """``ℓ (D,)``, ``η (M,)``, ``σ`` from the log-scale vector ``z``."""
        ls, eta, sigma = unpack_rows(z, self.D, self.M, self.shared)
        return ls[0], eta[0], float(sigma[0])

    def log_prior_value(self, ls, eta, sigma):
        """Log prior (up to a constant) of the free lengthscales ``ls (..., n_ls)``,
        amplitudes ``eta (..., n_eta)`` and noise ``sigma (...)``: (...)."""
        p, rate_eta = self.p, self.p.eta_beta * np.sqrt(self.M)
        return (
            np.sum(-(p.ls_alpha + 1) * np.log(ls) - p.ls_beta / ls, axis=-1)
            + np.sum((p.eta_alpha - 1) * np.log(eta) - rate_eta * eta, axis=-1)
            + (p.sigma_alpha - 1) * np.log(sigma)
            - p.sigma_beta * sigma
        )

    def _log_prior(self, ls, eta, sigma, g_ls, g_eta, g_sigma):
        """Log prior, and the gradient of log likelihood plus log prior from the
        likelihood's ``g_*``."""
        p, rate_eta = self.p, self.p.eta_beta * np.sqrt(self.M)
        value = self.log_prior_value(ls, eta, sigma)
        grad = np.concatenate(
            [
                g_ls - (p.ls_alpha + 1) + p.ls_beta / ls,
                g_eta + (p.eta_alpha - 1) - rate_eta * eta,
                [g_sigma + (p.sigma_alpha - 1) - p.sigma_beta * sigma],
            ]
        )
        return value, grad

    @cached_property
    def _group_d2(self) -> np.ndarray:
        """``Σ_d W_jd Δ²_abd``, each group's unscaled squared distances: (M, n, n)."""
        return np.ascontiguousarray(np.einsum("abd,jd->jab", self.d2, self.W))

    def density_args(self) -> tuple:
        """The data arguments of the numba density (:mod:`pp_decomp.additive.density`)
        after ``z``: ``(G, y, prm)`` with the groups' squared distances ``G (M, n, n)``
        when shared, else ``(Δ² (n, n, D), W, y, prm)``; ``prm`` the prior constants."""
        y, prm = np.ascontiguousarray(self.y), prior_constants(self.p, self.M)
        if self.shared:
            return self._group_d2, y, prm
        return np.ascontiguousarray(self.d2), np.ascontiguousarray(self.W), y, prm

    def log_density(self, Z: np.ndarray) -> np.ndarray:
        """The log density NUTS samples at the rows of ``Z (S, k)``: the log
        posterior of the constrained parameters plus the log transform's Jacobian
        ``Σ z``, by the numba density one row at a time, ``-inf`` where ``K`` is
        not positive definite: (S,)."""
        Z = np.ascontiguousarray(np.atleast_2d(np.asarray(Z, dtype=float)))
        rows = shared_log_density_rows if self.shared else ard_log_density_rows
        return rows(Z, *self.density_args())

    def __call__(self, z):
        """``(-log posterior, its gradient)`` at ``z``; a steep finite wall
        (:func:`~pp_decomp.components.inference.compiled.penalty`) where ``K`` is not
        numerically positive definite, for L-BFGS-B's line search."""
        out = self.evaluate(z)
        return penalty(z) if out is None else out

    def evaluate(self, z) -> tuple[float, np.ndarray] | None:
        """``(-log posterior, its gradient)`` at ``z``, or ``None`` where ``K`` is
        not numerically positive definite."""
        n = len(self.y)
        ls, eta, sigma = self.unpack(z)
        scaled = self.d2 / ls**2  # (n, n, D)
        Kj = eta[:, None, None] ** 2 * ExpQuad.correlation(np.einsum("abd,jd->jab", scaled, self.W))
        K = Kj.sum(0)
        K[np.diag_indices(n)] += sigma**2 + JITTER
        try:
            L = np.linalg.cholesky(K)
        except np.linalg.LinAlgError:
            return None
        # the gradient needs K⁻¹ itself, so it is formed once here
        L_inv = np.linalg.solve(L, np.eye(n))
        K_inv = L_inv.T @ L_inv
        alpha = K_inv @ self.y
        loglik = -0.5 * self.y @ alpha - np.log(np.diag(L)).sum() - 0.5 * n * np.log(2 * np.pi)
        B = np.outer(alpha, alpha) - K_inv
        g_eta = np.einsum("ab,jab->j", B, Kj)
        g_ls = 0.5 * np.einsum("ab,jab,abd,jd->d", B, Kj, scaled, self.W, optimize=True)
        g_sigma = sigma**2 * np.trace(B)
        if self.shared:
            ls, eta, g_ls, g_eta = (
                ls[:1],
                eta[:1],
                g_ls.sum(keepdims=True),
                g_eta.sum(keepdims=True),
            )
        logprior, grad = self._log_prior(ls, eta, sigma, g_ls, g_eta, g_sigma)
        return -(loglik + logprior), -grad
