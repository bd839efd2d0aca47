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

import numpy as np

from pp_decomp.components.draws import HyperDraws
from pp_decomp.components.posterior import JITTER, cholesky_inverse
from pp_decomp.kernels import kernel_matrix


class IncrementalPosterior:
    """Weighted per-draw GP posteriors at a fixed candidate set, updated by appends.

    Parameters
    ----------
    kernel : str
        Kernel name.
    X : (n, d) array, scaled inputs; y : (n,) array, standardised outputs
    draws : HyperDraws with S draws
    Xc : (N, d) array, scaled candidates
    """

    def __init__(self, kernel, X, y, draws: HyperDraws, Xc):
        self.kernel, self.draws, self.Xc = kernel, draws, np.asarray(Xc, dtype=float)
        self.X = np.asarray(X, dtype=float)
        self.y = np.asarray(y, dtype=float)
        S, n = draws.n_draws, len(self.X)
        K = self._k(self.X, self.X)
        idx = np.arange(n)
        K[:, idx, idx] += (draws.sigma**2)[:, None] + JITTER
        self.L_inv = cholesky_inverse(K)  # (S, n, n)
        self.z = np.einsum("sij,j->si", self.L_inv, self.y)  # (S, n)
        # V = L⁻¹ k(X, X_c) is kept (S·n·N floats, ~100 MB at S=128, n=100, N=1000) in a
        # buffer with spare rows, so that each append costs O(S n N) and no rebuild.
        self._cap = n + 16
        self._V = np.empty((S, self._cap, len(self.Xc)))
        self._V[:, :n] = self.L_inv @ self._k(self.X, self.Xc)
        V = self._V[:, :n]
        self.mean = np.einsum("snm,sn->sm", V, self.z)
        self.qsum = np.einsum("snm,snm->sm", V, V)
        self.logw = np.zeros(S)

    def _k(self, A, B):
        d = self.draws
        return kernel_matrix(self.kernel, A, B, d.ls, d.eta, d.alpha)

    def append(self, x: np.ndarray, y: float) -> None:
        """Condition on one more scaled observation; reweight draws by its predictive density."""
        x = np.asarray(x, dtype=float).reshape(1, -1)
        n = len(self.X)
        V = self._V[:, :n]
        k_new = self._k(self.X, x)[:, :, 0]  # (S, n)
        lk = np.einsum("sij,sj->si", self.L_inv, k_new)  # L⁻¹ k
        kxx = self.draws.eta**2 + self.draws.sigma**2 + JITTER
        d2 = np.maximum(kxx - np.einsum("si,si->s", lk, lk), 1e-300)
        d = np.sqrt(d2)
        mu = np.einsum("si,si->s", lk, self.z)
        self.logw += -0.5 * (np.log(2 * np.pi * d2) + (y - mu) ** 2 / d2)
        z_new = (y - mu) / d
        v_new = (self._k(x, self.Xc)[:, 0, :] - np.einsum("sn,snm->sm", lk, V)) / d[:, None]
        L_inv = np.zeros((self.L_inv.shape[0], n + 1, n + 1))
        L_inv[:, :n, :n] = self.L_inv
        L_inv[:, n, :n] = -np.einsum("si,sij->sj", lk, self.L_inv) / d[:, None]
        L_inv[:, n, n] = 1.0 / d
        self.L_inv = L_inv
        if n == self._cap:
            self._cap = 2 * n
            grown = np.empty((self._V.shape[0], self._cap, self._V.shape[2]))
            grown[:, :n] = self._V[:, :n]
            self._V = grown
        self._V[:, n] = v_new
        self.z = np.concatenate([self.z, z_new[:, None]], axis=1)
        self.mean += v_new * z_new[:, None]
        self.qsum += v_new**2
        self.X = np.vstack([self.X, x])
        self.y = np.append(self.y, y)

    @property
    def weights(self) -> np.ndarray:
        w = np.exp(self.logw - self.logw.max())
        return w / w.sum()

    @property
    def ess(self) -> float:
        """Effective sample size ``1 / Σ w_s²`` of the normalised weights."""
        return float(1.0 / np.sum(self.weights**2))

    def moments(self) -> tuple[np.ndarray, np.ndarray]:
        """Weighted mixture mean and variance of the latent ``f`` at every candidate: (N,), (N,)."""
        w = self.weights[:, None]
        var_s = np.maximum(self.draws.eta[:, None] ** 2 - self.qsum, 0.0)
        mean = (w * self.mean).sum(0)
        second = (w * (var_s + self.mean**2)).sum(0)
        return mean, np.maximum(second - mean**2, 0.0)

    def resample(self, rng: np.random.Generator) -> np.ndarray:
        """Draw indices of an equal-weight sample of the draws (systematic resampling): (S,)."""
        S = len(self.logw)
        cum = np.cumsum(self.weights)
        return np.minimum(np.searchsorted(cum, (rng.uniform() + np.arange(S)) / S), S - 1)

    def per_draw(self, idx: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Means and variances of draws ``idx`` at every candidate: (len(idx), N) each."""
        var_s = np.maximum(self.draws.eta[:, None] ** 2 - self.qsum, 0.0)
        return self.mean[idx], var_s[idx]

    def joint(self, idx: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Joint means (S', m) and covariances (S', m, m) of draws ``idx`` at candidates ``rows``.

        ``cov_s = k_s(X_c, X_c) - V_sᵀ V_s`` with ``V = L⁻¹ k(X, X_c)`` kept for the appends.
        """
        d, n = self.draws.subset(idx), len(self.X)
        Xr = self.Xc[rows]
        V = self._V[idx][:, :n][:, :, rows]
        K = kernel_matrix(self.kernel, Xr, Xr, d.ls, d.eta, d.alpha)
        return self.mean[idx][:, rows], K - V.transpose(0, 2, 1) @ V
