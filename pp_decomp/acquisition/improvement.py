"""Expected improvement and probability of improvement, on the log scale.

For a Gaussian ``h(x) ~ N(μ, σ²)`` and ``u = (μ - h* - ξ) / σ``:

* EI: ``σ (φ(u) + u Φ(u))``; PI: ``Φ(u)``.

Both underflow to exactly 0 far from the incumbent, which leaves a maximiser
with a flat acquisition (it keeps its first random start). They are therefore
computed as **log EI** and **log PI** (Ament et al. 2023, "Unexpected
improvements to expected improvement", as BoTorch's ``LogExpectedImprovement``):
``log EI = log h(u) + log σ`` with ``h(u) = φ(u) + u Φ(u)`` evaluated stably for
very negative ``u`` (:func:`log_h`), ``log PI = log Φ(u)`` (``log_ndtr``). Same
maximisers where EI > 0, and a useful gradient everywhere else.

Under a hyperparameter posterior the predictive is a mixture of Gaussians and
both are exact log-means of the per-draw closed forms. For a nonlinear ``g``
they are Monte Carlo averages over posterior-predictive draws pushed through
``g``, smoothed as BoTorch's ``qLogExpectedImprovement`` does: each sample's
improvement ``max(H - h* - ξ, 0)`` becomes ``τ·fatplus(·/τ)``
(softplus plus a Cauchy tail, so never exactly 0) and the indicator of PI a
logistic of width ``τ``, with ``τ = 10⁻⁶`` of the objective's observed spread.
"""

from __future__ import annotations

import numpy as np
from scipy.special import erfcx, expit, log_expit, log_ndtr, logsumexp

from pp_decomp.acquisition.mc_gradient import every_sample_gradient
from pp_decomp.acquisition.surrogate import ComposedSurrogate, DecomposedSurrogate
from pp_decomp.acquisition.ucb import mc_block_rows
from pp_decomp.components.posterior.batched import mixture_moments
from pp_decomp.validate import as_generator

_C1 = 0.5 * np.log(2 * np.pi)
_C2 = 0.5 * np.log(np.pi / 2)
FATPLUS_ALPHA = 0.1  # weight of the Cauchy tail of fatplus (BoTorch's default)
TAU_RELATIVE = 1e-6  # smoothing width relative to the objective's observed spread


def log_h(u: np.ndarray) -> np.ndarray:
    """``log(φ(u) + u Φ(u))``, accurate for every ``u`` (Ament et al. 2023, eq. 9).

    Direct for ``u > -1``; below, ``log φ(u) + log(1 - |u| Φ(u)/φ(u))`` with the
    Mills-ratio term from ``erfcx``, and the asymptote ``log φ(u) - 2 log|u|``
    beyond ``-1/sqrt(ε)``.
    """
    u = np.asarray(u, dtype=float)
    upper = np.maximum(u, -1.0)
    with np.errstate(divide="ignore"):
        log_upper = np.log(np.exp(-0.5 * upper**2 - _C1) + upper * np.exp(log_ndtr(upper)))
    neg_inv_sqrt_eps = -1.0 / np.sqrt(np.finfo(float).eps)
    lower = np.minimum(u, -1.0)
    clipped = np.maximum(lower, neg_inv_sqrt_eps)
    w = np.log(erfcx(-clipped / np.sqrt(2)) * np.abs(clipped)) + _C2
    with np.errstate(divide="ignore", invalid="ignore"):
        tail = np.where(
            lower > neg_inv_sqrt_eps, np.log(-np.expm1(w)), -2.0 * np.log(np.abs(lower))
        )
    log_lower = -0.5 * lower**2 - _C1 + tail
    return np.where(u > -1.0, log_upper, log_lower)


def log_fatplus(x: np.ndarray) -> np.ndarray:
    """``log(softplus(x) + α / (1 + x²))``: a positive, smooth stand-in for ``max(x, 0)``."""
    x = np.asarray(x, dtype=float)
    inner = np.log(np.log1p(np.exp(np.clip(x, -30.0, 30.0))))
    # softplus(x) ≈ eˣ below -30 and ≈ x above 30
    log_softplus = np.where(x < -30, x, np.where(x > 30, np.log(np.maximum(x, 30.0)), inner))
    return np.logaddexp(log_softplus, np.log(FATPLUS_ALPHA) - np.log1p(x**2))


class _Improvement:
    """log EI / log PI: the subclasses give the per-sample and per-draw terms."""

    def __init__(
        self,
        model,
        best: float,
        xi: float = 0.0,
        n_samples: int = 512,
        seed=None,
        scale: float = 1.0,
    ):
        self.model, self.best, self.xi = model, float(best), float(xi)
        self.tau = TAU_RELATIVE * (float(scale) if np.isfinite(scale) and scale > 0 else 1.0)
        if self.monte_carlo:
            rng = as_generator(seed)
            J = len(model.components)
            self.draw_idx = rng.integers(0, 2**31 - 1, size=(n_samples, J))
            self.z = rng.standard_normal((n_samples, J))

    @property
    def monte_carlo(self) -> bool:
        return isinstance(self.model, DecomposedSurrogate) and self.model.linear is None

    def _per_draw(self, X):
        if isinstance(self.model, ComposedSurrogate):
            return self.model.per_draw(X)
        return self.model.linear_per_draw(X)

    def _sample_blocks(self, X):
        """``(slice of X's rows, samples (n, rows') of h there)``, in blocks of about
        1 MB (:func:`~pp_decomp.acquisition.ucb.mc_block_rows`): the values are per
        input, and the temporaries of a block stay in cache (d-ei's acquisition on
        1494 stations: 64 ms in one block, 46 ms in blocks, same values)."""
        X = np.asarray(X, dtype=float)
        blocks = self.model.marginal_sample_blocks(X, self.draw_idx, self.z, mc_block_rows(self.z))
        for sl, F in blocks:
            yield sl, self.model.h(F, X[sl])

    def __call__(self, X) -> np.ndarray:
        if self.monte_carlo:
            out = np.empty(len(X))
            for sl, h in self._sample_blocks(X):
                per = self._log_smoothed((h - self.best - self.xi) / self.tau)
                out[sl] = logsumexp(per, axis=0) - np.log(len(per))
            return out
        mean, var = self._per_draw(X)
        sd = np.sqrt(np.maximum(var, 1e-300))
        per = self._log_gaussian((mean - self.best - self.xi) / sd, sd)
        return logsumexp(per, axis=0) - np.log(len(per))

    def value_and_grad(self, X) -> tuple[np.ndarray, np.ndarray]:
        """The closed form's value (m,) and gradient (m, d): per draw
        ``∂ log a_s = r(u) ∂u + c ∂σ / σ`` with ``u = (μ - h* - ξ) / σ``,
        ``∂u = (∂μ - u ∂σ) / σ``, ``r = ∂ log a / ∂u`` (:meth:`_dlog_du`) and ``c = 1``
        for EI (``log σ``), 0 for PI; the log-mean over draws weighs each draw's
        gradient by its share. The Monte Carlo form's is pathwise, with this step's
        samples fixed (:meth:`_mc_value_and_grad`). ``NotImplementedError`` for a
        model without input gradients."""
        if self.monte_carlo:
            return self._mc_value_and_grad(np.asarray(X, dtype=float))
        if isinstance(self.model, ComposedSurrogate):
            mean, var, dmean, dvar = self.model.per_draw_grad(X)
        else:
            mean, var, dmean, dvar = self.model.linear_per_draw_grad(X)
        sd = np.sqrt(np.maximum(var, 1e-300))
        u = (mean - self.best - self.xi) / sd
        per = self._log_gaussian(u, sd)
        dsd = np.where((var > 1e-300)[..., None], dvar / (2 * sd[..., None]), 0.0)
        du = (dmean - u[..., None] * dsd) / sd[..., None]
        dper = self._dlog_du(u)[..., None] * du + self.SD_POWER * dsd / sd[..., None]
        share = np.exp(per - logsumexp(per, axis=0))  # (S, m)
        return logsumexp(per, axis=0) - np.log(len(per)), (share[..., None] * dper).sum(0)

    def _mc_value_and_grad(self, X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The Monte Carlo form's value (m,) and pathwise gradient (m, d): with every
        sample ``h_k = sign · g(μ_s + σ_s z_k; x)`` a smooth function of ``x``
        (:mod:`~pp_decomp.acquisition.mc_gradient`), ``u_k = (h_k - h* - ξ) / τ`` and
        ``a = log mean_k e^{L(u_k)}``, ``∂a = Σ_k share_k L'(u_k) ∂h_k / τ``."""
        normals = self.model.normals(self.z)
        F, dF = self.model.samples_and_gradients(X, self.draw_idx, normals)
        u = (self.model.h(F, X) - self.best - self.xi) / self.tau  # (n, m)
        per = self._log_smoothed(u)
        share = np.exp(per - logsumexp(per, axis=0))
        dh = every_sample_gradient(self.model, X, F, dF)  # (n, m, d)
        weight = share * self._dlog_smoothed_du(u) / self.tau
        return logsumexp(per, axis=0) - np.log(len(per)), np.einsum("nm,nmd->md", weight, dh)

    def _dlog_du(self, u: np.ndarray) -> np.ndarray:
        """``∂ log a_s / ∂u`` of the per-draw closed form."""
        raise NotImplementedError

    def _dlog_smoothed_du(self, u: np.ndarray) -> np.ndarray:
        """``∂ L / ∂u`` of the per-sample smoothed term :meth:`_log_smoothed`."""
        raise NotImplementedError

    def _log_smoothed(self, u: np.ndarray) -> np.ndarray:
        """Per-sample log improvement term, ``u = (h - best - ξ) / τ``."""
        raise NotImplementedError

    def _log_gaussian(self, u: np.ndarray, sd: np.ndarray) -> np.ndarray:
        """Per-draw closed form, ``u = (μ - best - ξ) / sd``."""
        raise NotImplementedError

    def tie_break(self, X) -> np.ndarray:
        """``E[h] + sd[h]``: which of equally improving inputs to prefer (never random)."""
        if self.monte_carlo:
            out = np.empty(len(X))
            for sl, h in self._sample_blocks(X):
                out[sl] = h.mean(0) + h.std(0)
            return out
        mean, var = mixture_moments(*self._per_draw(X))
        return mean + np.sqrt(var)


class ExpectedImprovement(_Improvement):
    """log EI of ``h`` over the incumbent (closed form per draw, or smoothed Monte Carlo)."""

    def _log_smoothed(self, u):
        return log_fatplus(u) + np.log(self.tau)

    SD_POWER = 1.0  # log EI = log h(u) + log σ

    def _log_gaussian(self, u, sd):
        return log_h(u) + np.log(sd)

    def _dlog_du(self, u):
        return np.exp(log_ndtr(u) - log_h(u))  # h'(u) = Φ(u)

    def _dlog_smoothed_du(self, u):
        # L = log(softplus(u) + α / (1 + u²)): L' = (σ(u) - 2αu / (1 + u²)²) e^{-L}
        slope = expit(u) - 2 * FATPLUS_ALPHA * u / (1 + u**2) ** 2
        return slope * np.exp(-log_fatplus(u))


class ProbabilityOfImprovement(_Improvement):
    """log PI (MPI) of ``h`` over the incumbent plus margin ``ξ``."""

    def _log_smoothed(self, u):
        return log_expit(u)

    SD_POWER = 0.0  # log PI = log Φ(u)

    def _log_gaussian(self, u, sd):
        return log_ndtr(u)

    def _dlog_du(self, u):
        return np.exp(-0.5 * u**2 - _C1 - log_ndtr(u))  # φ(u) / Φ(u)

    def _dlog_smoothed_du(self, u):
        return expit(-u)  # (log σ(u))' = 1 - σ(u)
