"""Weighted per-draw GP posteriors at a fixed candidate set, updated by appends.

Between full refits the hyperparameter draws of a GP are kept and

* **reweighted** by each new observation's one-step predictive density,
  ``w_s ← w_s · N(y_new; μ_s(x_new), σ_s²(x_new) + σ_n,s²)``: the exact
  incremental posterior ``p(θ | D, y_new) ∝ p(θ | D) p(y_new | θ, D)``,
  importance-sampled, with the effective sample size ``(Σw)² / Σw²``;
* each new point is **appended** to every draw's Cholesky factor in ``O(S n N)``:
  with ``K = L Lᵀ``, ``l = L⁻¹ k(X, x)``, ``d = sqrt(k(x, x) + σ² - lᵀl)``, the
  new row of ``V = L⁻¹ k(X, X_c)`` is ``(k(x, X_c) - lᵀ V) / d`` and the new
  entry of ``z = L⁻¹ y`` is ``(y - lᵀ z) / d``, so per-draw means ``Vᵀ z`` and
  variances ``η² - Σ V²`` at all ``N`` candidates update by one rank-one term.

Everything is float64 and batched over draws and candidates.
"""

from __future__ import annotations

import warnings

import numpy as np

# with the module, not on first use: a first import inside a refit thread, where
# ArviZ's lazy loader reads the whole call stack (inspect.stack), cost the first ask 1-2 s
from arviz_stats.base import array_stats

from pp_decomp.components.posterior.batched import (
    JITTER,
    cholesky_inverse,
    draws_cov,
    draws_prior_var,
    gaussian_log_likelihood,
)
from pp_decomp.components.posterior.draws import HyperDraws
from pp_decomp.components.posterior.gradient import moments_and_grad
from pp_decomp.components.posterior.triangular import lower_times, lower_transposed_times


class IncrementalPosterior:
    """Weighted per-draw GP posteriors, updated by appends; optionally kept at a
    fixed candidate set.

    Parameters
    ----------
    kernel : str or BoundKernel
        As :func:`~pp_decomp.components.posterior.batched.draws_cov` takes it.
    X : (n, d) array, scaled inputs; y : (n,) array, standardised outputs, or (S, n)
        where each draw regresses outputs of its own (an output warp's: the warped
        outputs of each draw, :meth:`append` then given each draw's value and the
        warp's log-slope)
    draws : HyperDraws (KernelDraws with a BoundKernel) with S draws
    Xc : (N, d) array of scaled candidates, or ``None`` (a box: predictions are
        computed at the inputs asked for, :meth:`at`)
    mean_var : float
        Prior variance of the integrated constant mean (added to the kernel).
    L_inv : (S, n, n) array, optional
        Every draw's ``L⁻¹`` on ``X`` where a posterior of the same draws already
        holds it (:class:`~pp_decomp.components.posterior.batched.GPPosterior`'s,
        the same ``K``): not computed again.
    """

    def __init__(self, kernel, X, y, draws: HyperDraws, Xc=None, mean_var: float = 0.0, L_inv=None):
        self.kernel, self.draws = kernel, draws
        self.Xc = None if Xc is None else np.asarray(Xc, dtype=float)
        self.mean_var = float(mean_var)
        self.X = np.asarray(X, dtype=float)
        self.y = np.asarray(y, dtype=float)
        S, n = draws.n_draws, len(self.X)
        if L_inv is not None and np.shape(L_inv) != (S, n, n):
            raise ValueError(f"L_inv must have shape {(S, n, n)}; got {np.shape(L_inv)}")
        if L_inv is None:
            K = self._k(self.X, self.X)
            idx = np.arange(n)
            K[:, idx, idx] += (draws.sigma**2)[:, None] + JITTER
            L_inv = cholesky_inverse(K)
        # L⁻¹ (and at candidates V = L⁻¹ k(X, X_c), S·n·N floats, ~100 MB at S=128,
        # n=100, N=1000) live in buffers with spare rows, so an append is O(S n N)
        self._cap = n + 16
        self._L = np.zeros((S, self._cap, self._cap))
        self._L[:, :n, :n] = L_inv
        every = np.arange(S)
        Y = np.broadcast_to(self.y, (S, n))[:, :, None]
        self.z = lower_times(self._L, every, n, Y)[..., 0]
        self._alphas = None
        self.logw = np.zeros(S)
        if self.Xc is not None:
            self._V = np.empty((S, self._cap, len(self.Xc)))
            self._V[:, :n] = lower_times(self._L, every, n, self._k(self.X, self.Xc))
            V = self._V[:, :n]
            self.mean = np.einsum("snm,sn->sm", V, self.z)
            self.qsum = np.einsum("snm,snm->sm", V, V)

    @property
    def L_inv(self) -> np.ndarray:
        """``L⁻¹`` of every draw's ``K = L Lᵀ``: (S, n, n)."""
        n = len(self.X)
        return self._L[:, :n, :n]

    def _k(self, A, B, d=None):
        d = self.draws if d is None else d
        K = draws_cov(self.kernel, A, B, d)
        return K + self.mean_var if self.mean_var else K

    def _prior_var_at(self, X: np.ndarray, d=None) -> np.ndarray:
        """``k_s(x, x) + c`` at the rows of ``X``: (S, m) or (S, 1)."""
        return draws_prior_var(self.kernel, X, self.draws if d is None else d) + self.mean_var

    def _grow(self) -> None:
        # by an eighth, not doubled: at n = 1000 a doubled buffer of 32 draws is 1 GB,
        # and copying S n² floats every n / 8 appends is small beside each append's S n²
        n = len(self.X)
        cap = n + max(16, n // 8)
        L = np.zeros((self._L.shape[0], cap, cap))
        L[:, :n, :n] = self._L[:, :n, :n]
        self._L = L
        if self.Xc is not None:
            V = np.empty((self._V.shape[0], cap, self._V.shape[2]))
            V[:, :n] = self._V[:, :n]
            self._V = V
        self._cap = cap

    def append(self, x: np.ndarray, y, log_slope=None) -> None:
        """Condition on one more scaled observation; reweight draws by its predictive density.

        ``y``: a float, or each draw's (S,) where the outputs are per draw; ``log_slope``
        (S,): each draw's ``log w_s'`` at the observation, the warp's Jacobian, added
        to the weights so that they weigh the observation on its own scale."""
        x = np.asarray(x, dtype=float).reshape(1, -1)
        n = len(self.X)
        if n == self._cap:
            self._grow()
        every = np.arange(len(self._L))
        lk = lower_times(self._L, every, n, self._k(self.X, x))[:, :, 0]  # L⁻¹ k: (S, n)
        kxx = self._prior_var_at(x)[:, 0] + self.draws.sigma**2 + JITTER
        d2 = np.maximum(kxx - np.einsum("si,si->s", lk, lk), 1e-300)
        d = np.sqrt(d2)
        mu = np.einsum("si,si->s", lk, self.z)
        self.logw += -0.5 * (np.log(2 * np.pi * d2) + (y - mu) ** 2 / d2)
        if log_slope is not None:
            self.logw += log_slope
        z_new = (y - mu) / d
        if self.Xc is not None:
            V = self._V[:, :n]
            v_new = (self._k(x, self.Xc)[:, 0, :] - np.einsum("sn,snm->sm", lk, V)) / d[:, None]
            self._V[:, n] = v_new
            self.mean += v_new * z_new[:, None]
            self.qsum += v_new**2
        back = lower_transposed_times(self._L, every, n, lk[:, :, None])[:, :, 0]  # L⁻ᵀ L⁻¹ k
        self._L[:, n, :n] = -back / d[:, None]
        self._L[:, n, n] = 1.0 / d
        self.z = np.concatenate([self.z, z_new[:, None]], axis=1)
        self._alphas = None
        self.X = np.vstack([self.X, x])
        if self.y.ndim == 2:
            self.y = np.column_stack([self.y, np.broadcast_to(y, len(self.y))])
        else:
            self.y = np.append(self.y, y)

    @property
    def weights(self) -> np.ndarray:
        """Normalised importance weights of the draws: (S,)."""
        return normalised(self.logw)

    @property
    def ess(self) -> float:
        """Effective sample size of the weights (:func:`ess`)."""
        return ess(self.logw)

    @property
    def logw(self) -> np.ndarray:
        """Log importance weights of the draws (unnormalised): (S,)."""
        return self._logw

    @logw.setter
    def logw(self, value) -> None:
        self._logw, self._pareto_k = np.asarray(value, dtype=float), None

    @property
    def pareto_k(self) -> float:
        """Pareto ``k̂`` of the weights (:func:`pareto_k`), computed once per change
        of the weights (the refit check and the step's record both ask)."""
        if self._pareto_k is None:
            self._pareto_k = pareto_k(self._logw)
        return self._pareto_k

    def resample(self, rng: np.random.Generator, size: int | None = None) -> np.ndarray:
        """Indices of an equal-weight sample of the draws (:func:`resample`): (size,)."""
        return resample(self.logw, rng, size)

    def at(self, Xs: np.ndarray, idx=None) -> tuple[np.ndarray, np.ndarray]:
        """Means and variances of draws ``idx`` (default all) at scaled inputs ``Xs``: (S', m).

        A draw repeated in ``idx`` (a resample's) is computed once, and every draw's
        ``L⁻¹`` is read in place: at large ``n`` reading the factors is the cost.
        """
        Xs = np.asarray(Xs, dtype=float)
        if idx is None:
            keep, back = np.arange(len(self.logw)), None
        else:
            keep, back = np.unique(np.asarray(idx), return_inverse=True)
        d = self.draws.subset(keep)
        V = lower_times(self._L, keep, len(self.X), self._k(self.X, Xs, d))  # (S', n, m)
        mean = np.einsum("snm,sn->sm", V, self.z[keep])
        var = np.maximum(self._prior_var_at(Xs, d) - np.einsum("snm,snm->sm", V, V), 0.0)
        return (mean, var) if back is None else (mean[back], var[back])

    def at_grad(self, Xs: np.ndarray, idx) -> tuple[np.ndarray, ...]:
        """:meth:`at` for draws ``idx`` and the gradients with respect to ``Xs (m, d)``:
        (S', m), (S', m), (S', m, d), (S', m, d)
        (:func:`~pp_decomp.components.posterior.gradient.moments_and_grad`); every
        draw's ``L⁻¹`` is read in place, as :meth:`at` reads it."""
        Xs = np.asarray(Xs, dtype=float)
        keep, back = np.unique(np.asarray(idx), return_inverse=True)
        n = len(self.X)

        def solves(K):
            V = lower_times(self._L, keep, n, K)
            return V, lower_transposed_times(self._L, keep, n, V)

        alpha = self._alpha()[keep]
        d = self.draws.subset(keep)
        out = moments_and_grad(
            self.kernel, self.X, Xs, d, solves, alpha, self._prior_var_at(Xs, d), self.mean_var
        )
        return tuple(a[back] for a in out)

    def _alpha(self) -> np.ndarray:
        """``K_s⁻¹ y = L_s⁻ᵀ z_s`` of every draw: (S, n), kept until the next append (every
        gradient evaluation of a step reads it)."""
        if self._alphas is None:
            every, n = np.arange(len(self.logw)), len(self.X)
            self._alphas = lower_transposed_times(self._L, every, n, self.z[:, :, None])[..., 0]
        return self._alphas

    def per_draw(self, idx: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Means and variances of draws ``idx`` at every candidate: (len(idx), N) each."""
        var_s = np.maximum(self._prior_var_at(self.Xc) - self.qsum, 0.0)
        return self.mean[idx], var_s[idx]

    def moments(self, Xs=None) -> tuple[np.ndarray, np.ndarray]:
        """Weighted mixture mean and variance of the latent ``f`` at every candidate
        (or at scaled inputs ``Xs``): (m,), (m,)."""
        if Xs is None:
            mean_s, var_s = self.per_draw(np.arange(len(self.logw)))
        else:
            mean_s, var_s = self.at(Xs)
        w = self.weights[:, None]
        mean = (w * mean_s).sum(0)
        second = (w * (var_s + mean_s**2)).sum(0)
        return mean, np.maximum(second - mean**2, 0.0)

    def joint(self, idx: np.ndarray, Xs=None, rows=None) -> tuple[np.ndarray, np.ndarray]:
        """Joint means (S', m) and covariances (S', m, m) of draws ``idx`` at candidates
        ``rows`` or at scaled inputs ``Xs``: ``cov_s = k_s(X*, X*) - V_sᵀ V_s``."""
        d, n = self.draws.subset(idx), len(self.X)
        if rows is not None:
            Xs = self.Xc[rows]
            V = self._V[idx][:, :n][:, :, rows]
            mean = self.mean[idx][:, rows]
        else:
            V = lower_times(self._L, idx, n, self._k(self.X, Xs, d))
            mean = np.einsum("snm,sn->sm", V, self.z[idx])
        return mean, self._k(Xs, Xs, d) - V.transpose(0, 2, 1) @ V


def factors_within(budget: int, n: int) -> int:
    """How many draws' ``(n, n)`` float64 factors fit in ``budget`` bytes: ``⌊budget / 8n²⌋``.

    >>> factors_within(2**27, 1000)
    16
    """
    return budget // (8 * max(n, 1) ** 2)


def normalised(logw: np.ndarray) -> np.ndarray:
    """Importance weights from their logarithms, summing to one: (S,)."""
    w = np.exp(logw - logw.max())
    return w / w.sum()


def ess(logw: np.ndarray) -> float:
    """Effective sample size ``1 / Σ w_s²`` of the normalised weights."""
    return float(1.0 / np.sum(normalised(logw) ** 2))


def pareto_k(logw: np.ndarray) -> float:
    """Pareto ``k̂`` of importance weights (Vehtari et al. 2024, "Pareto smoothed
    importance sampling", JMLR 25): the shape of a generalised Pareto fitted to
    their largest values. Above about 0.7 (less for few draws) the weighted
    draws' estimates are unreliable whatever the ESS says."""
    if np.ptp(logw) == 0.0:  # equal weights (no observation since the fit)
        return -np.inf
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # arviz-stats warns above 0.7; the caller decides
        # psislw takes log-likelihood-like values and smooths their negation
        _, k = array_stats.psislw(-np.array(logw, dtype=float), r_eff=1.0)
    return float(k)


NEARLY_EQUAL = 0.95  # ESS share of the draws from which weights count as nearly equal


def weights_degraded(ess_value: float, k: float, S: int, ess_share: float, k_max: float) -> bool:
    """Whether ``S`` importance weights with ESS ``ess_value`` and Pareto ``k̂ = k`` call
    for a refit: an ESS below ``ess_share · S``, or ``k̂`` above ``k_max`` while the
    ESS is below :data:`NEARLY_EQUAL` ``· S``. Nearly equal weights estimate as well
    as equal ones whatever their tail's fitted shape, and ``k̂`` of so flat a tail is
    noise: on 32 draws whose log weights vary by 1e-4 (ESS 32.00) it is above
    ``k_threshold(32) = 0.34`` about a quarter of the time (docs/design.md,
    "Refits of nearly equal weights")."""
    return ess_value < ess_share * S or (k > k_max and ess_value < NEARLY_EQUAL * S)


def resample(logw: np.ndarray, rng: np.random.Generator, size: int | None = None) -> np.ndarray:
    """Indices of an equal-weight sample of ``size`` (default all) of the weighted
    draws, by systematic resampling: (size,)."""
    S = len(logw)
    size = S if size is None else size
    cum = np.cumsum(normalised(logw))
    return np.minimum(np.searchsorted(cum, (rng.uniform() + np.arange(size)) / size), S - 1)


def log_likelihood(kernel, X, y, draws, mean_var: float = 0.0) -> np.ndarray:
    """``log p(y | θ_s, X)`` of every draw, the GP's marginal likelihood: (S,).

    ``X`` (n, d) scaled inputs, ``y`` (n,) standardised outputs; batched over
    draws (meant for many draws on few points, e.g. draws of the prior);
    ``-inf`` for a draw whose covariance is not positive definite.
    """
    X, y = np.asarray(X, dtype=float), np.asarray(y, dtype=float)
    K = draws_cov(kernel, X, X, draws) + mean_var
    idx = np.arange(len(X))
    K[:, idx, idx] += (draws.sigma**2)[:, None] + JITTER
    return gaussian_log_likelihood(K, y, overwrite_K=True)
