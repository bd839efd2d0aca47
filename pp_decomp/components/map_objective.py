"""The MAP objective of a component GP, in numpy.

The negative log posterior of :func:`pp_decomp.components.model.build_model` and
its gradient, as a function of the log-scale hyperparameters, without PyTensor:
no graph to compile before the first fit, and a fraction of a compiled
function's per-call overhead on the small ``n`` of an optimisation loop, where
the L-BFGS-B search spends its time in that overhead rather than in the
Cholesky factorisation. The PyMC model stays the definition (and NUTS samples
it); the tests check this objective against its compiled log density.
"""

from __future__ import annotations

import numpy as np
from scipy.linalg.lapack import dpotrf, dpotri
from scipy.special import gammaln

from pp_decomp.components.compiled import SEARCH_BOX, penalty
from pp_decomp.components.posterior import JITTER
from pp_decomp.components.priors import Priors

LOG_2PI = float(np.log(2.0 * np.pi))


def _corr_and_slope(kernel: str, r2: np.ndarray, alpha: float | None):
    """Unit-amplitude correlation ``c(r²)`` and ``∂c/∂r²`` (and ``∂c/∂log α`` for ``rq``).

    The Matérn kernels use ``r = sqrt(r² + 1e-12)``, as PyMC's do.
    """
    if kernel == "se":
        c = np.exp(-0.5 * r2)
        return c, -0.5 * c, None
    if kernel == "matern52":
        r = np.sqrt(r2 + 1e-12)
        e = np.exp(-np.sqrt(5.0) * r)
        return (
            (1.0 + np.sqrt(5.0) * r + 5.0 / 3.0 * r2) * e,
            -5.0 / 6.0 * (1.0 + np.sqrt(5.0) * r) * e,
            None,
        )
    if kernel == "matern32":
        r = np.sqrt(r2 + 1e-12)
        e = np.exp(-np.sqrt(3.0) * r)
        return (1.0 + np.sqrt(3.0) * r) * e, -1.5 * e, None
    if kernel == "rq":
        u = r2 / (2.0 * alpha)
        c = (1.0 + u) ** (-alpha)
        slope = -0.5 * c / (1.0 + u)
        return c, slope, alpha * c * (u / (1.0 + u) - np.log1p(u))
    raise ValueError(f"unknown kernel {kernel!r}")


def _gamma_logpdf(x: float, a: float, b: float) -> tuple[float, float]:
    """``log Gamma(x; a, rate b)`` and its derivative in ``log x``."""
    return a * np.log(b) - gammaln(a) + (a - 1.0) * np.log(x) - b * x, (a - 1.0) - b * x


def _lognormal_logpdf(z, mu: float, s: float):
    """``log LogNormal(e^z; mu, s)`` and its derivative in ``z = log x``."""
    value = -z - np.log(s) - 0.5 * LOG_2PI - 0.5 * ((z - mu) / s) ** 2
    return value, -1.0 - (z - mu) / s**2


class GPMapObjective:
    """``z -> (-log p(θ | y), -∇)`` of one component GP, ``z = (log ℓ (d), log η, log σ[, log α])``.

    The model: ``y ~ N(0, K)``, ``K = η² c(r²) + m + (σ² + jitter) I`` with
    ``r² = Σ_d Δ²_d / ℓ_d²`` and ``m`` the integrated constant mean's variance,
    plus the log priors of :class:`Priors` (without the log transform's Jacobian,
    so the minimum is the posterior mode of the constrained parameters, as for
    the compiled PyMC objective it replaces). With ``α = K⁻¹ y``,
    ``B = ααᵀ - K⁻¹`` and ``∂ log p(y) / ∂θ = ½ tr(B ∂K/∂θ)``:

    * ``∂K/∂log η = 2 η² c``, ``∂K/∂log σ = 2 σ² I``;
    * ``∂K/∂log ℓ_d = -2 η² c'(r²) Δ²_d / ℓ_d²``;
    * ``∂K/∂log α = η² α ∂c/∂α`` (``rq``).

    Parameters
    ----------
    kernel : ``"se"``, ``"matern52"``, ``"matern32"`` or ``"rq"``
    X : (n, d) unit-scaled inputs
    y : (n,) standardised outputs
    priors : Priors
    mean_var : float, the constant added to the kernel
    """

    def __init__(self, kernel: str, X, y, priors: Priors, mean_var: float):
        self.kernel, self.p, self.mean_var = kernel, priors, float(mean_var)
        X = np.asarray(X, dtype=float)
        self.y = np.asarray(y, dtype=float)
        self.n, self.d = X.shape
        self.d2 = np.moveaxis((X[:, None, :] - X[None, :, :]) ** 2, -1, 0)  # (d, n, n)

    @property
    def size(self) -> int:
        """Length of ``z``."""
        return self.d + 2 + (self.kernel == "rq")

    def bounds(self) -> list[tuple[float, float]]:
        """The search box of ``z`` (:data:`SEARCH_BOX`)."""
        box = SEARCH_BOX
        extra = [box["alpha_log__"]] if self.kernel == "rq" else []
        return [box["ls_log__"]] * self.d + [box["eta_log__"], box["sigma_log__"], *extra]

    def _log_prior(self, z: np.ndarray) -> tuple[float, np.ndarray]:
        p, d = self.p, self.d
        v = np.exp(z)
        if p.ls_family == "lognormal":
            ls_val, ls_grad = _lognormal_logpdf(z[:d], p.ls_loc + 0.5 * np.log(d), p.ls_scale)
        else:
            a, b = p.ls_alpha, p.ls_beta
            ls_val = a * np.log(b) - gammaln(a) - (a + 1.0) * z[:d] - b / v[:d]
            ls_grad = -(a + 1.0) + b / v[:d]
        eta = _gamma_logpdf(v[d], p.eta_alpha, p.eta_beta)
        if p.sigma_family == "lognormal":
            sigma = _lognormal_logpdf(z[d + 1], p.sigma_loc, p.sigma_scale)
        else:
            sigma = _gamma_logpdf(v[d + 1], p.sigma_alpha, p.sigma_beta)
        parts = [eta, sigma]
        if self.kernel == "rq":
            parts.append(_gamma_logpdf(v[d + 2], p.alpha_alpha, p.alpha_beta))
        value = float(np.sum(ls_val)) + sum(float(v_) for v_, _ in parts)
        return value, np.concatenate([ls_grad, [g for _, g in parts]])

    def __call__(self, z) -> tuple[float, np.ndarray]:
        z = np.asarray(z, dtype=float)
        d, n = self.d, self.n
        ls, eta, sigma = np.exp(z[:d]), np.exp(z[d]), np.exp(z[d + 1])
        alpha = np.exp(z[d + 2]) if self.kernel == "rq" else None
        scaled = self.d2 / ls[:, None, None] ** 2  # (d, n, n)
        c, slope, dc_dlog_alpha = _corr_and_slope(self.kernel, scaled.sum(0), alpha)
        K = eta**2 * c + self.mean_var
        K[np.diag_indices(n)] += sigma**2 + JITTER
        # LAPACK directly: the K⁻¹ the gradient needs, without np.linalg's overhead
        L, info = dpotrf(K, lower=1, clean=1)
        if info != 0:
            return penalty(z)
        K_inv, info = dpotri(L, lower=1)
        if info != 0:
            return penalty(z)
        K_inv = np.tril(K_inv) + np.tril(K_inv, -1).T
        a = K_inv @ self.y
        loglik = -0.5 * self.y @ a - np.log(np.diag(L)).sum() - 0.5 * n * LOG_2PI
        B = np.outer(a, a) - K_inv
        g = [-(eta**2) * (scaled.reshape(d, -1) @ (B * slope).ravel())]
        g.append([eta**2 * np.vdot(B, c), sigma**2 * np.trace(B)])
        if self.kernel == "rq":
            g.append([0.5 * eta**2 * np.vdot(B, dc_dlog_alpha)])
        logprior, prior_grad = self._log_prior(z)
        grad = np.concatenate([np.ravel(part) for part in g]) + prior_grad
        return -(loglik + logprior), -grad
