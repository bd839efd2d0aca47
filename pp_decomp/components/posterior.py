"""Batched GP posterior over hyperparameter draws, in plain numpy.

For each draw ``s`` with ``K_s = k_s(X, X) + (σ_s² + jitter) I = L_s L_sᵀ``:

* ``μ_s(x) = k_s(x, X) K_s⁻¹ y``
* ``σ_s²(x) = k_s(x, x) - ‖L_s⁻¹ k_s(X, x)‖²``

Over the S draws the posterior of ``f(x)`` is a Gaussian mixture with

* mean ``E_s μ_s(x)``
* variance ``E_s σ_s²(x) + Var_s μ_s(x)``.

Factorisations are done once at construction; predictions are chunked over new
points so that the ``(S, m, n)`` cross-covariance stays within ``max_bytes``.
No Python loop runs over draws or points.
"""

from __future__ import annotations

import numpy as np

from pp_decomp.components.draws import HyperDraws
from pp_decomp.kernels import kernel_matrix

_MAX_BYTES = 64 * 2**20
JITTER = 1e-6  # PyMC's JITTER_DEFAULT, added to K's diagonal both here and in the PyMC model


class GPPosterior:
    """Posterior of a zero-mean GP given data, for each of S hyperparameter draws.

    Parameters
    ----------
    kind : str
        Kernel name (:data:`pp_decomp.kernels.KERNELS`).
    X : (n, d) array
        Training inputs (already scaled as the draws expect).
    y : (n,) array
        Training outputs (already standardised as the draws expect).
    draws : HyperDraws
        S hyperparameter draws.
    jitter : float
        Added to the diagonal of ``K`` (PyMC's default ``1e-6``).
    """

    def __init__(self, kind: str, X: np.ndarray, y: np.ndarray, draws: HyperDraws, jitter=JITTER):
        self.kind = kind
        self.X = np.asarray(X, dtype=float)
        self.y = np.asarray(y, dtype=float)
        self.draws = draws
        self.jitter = float(jitter)
        n = self.X.shape[0]
        K = self.prior_cov(self.X, self.X)
        idx = np.arange(n)
        K[:, idx, idx] += (draws.sigma**2)[:, None] + self.jitter
        self.L_inv = cholesky_inverse(K)
        self.alpha = np.einsum("sji,sj->si", self.L_inv, self.L_inv @ self.y)

    @property
    def n_draws(self) -> int:
        return self.draws.n_draws

    def prior_cov(self, X1: np.ndarray, X2: np.ndarray) -> np.ndarray:
        """``k_s(X1, X2)`` for every draw: (S, n1, n2)."""
        d = self.draws
        return kernel_matrix(self.kind, X1, X2, d.ls, d.eta, d.alpha)

    def _chunks(self, m: int):
        n = max(self.X.shape[0], 1)
        step = max(1, _MAX_BYTES // (8 * self.n_draws * n * 3))
        for start in range(0, m, step):
            yield slice(start, min(m, start + step))

    def mean_var_per_draw(self, Xnew: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Per-draw posterior means and variances of the latent ``f`` at ``Xnew``.

        Returns
        -------
        mean, var : (S, m) arrays
        """
        Xnew = np.asarray(Xnew, dtype=float)
        m = Xnew.shape[0]
        mean = np.empty((self.n_draws, m))
        var = np.empty((self.n_draws, m))
        eta2 = (self.draws.eta**2)[:, None]
        for sl in self._chunks(m):
            Ks = self.prior_cov(self.X, Xnew[sl])  # (S, n, mc)
            mean[:, sl] = np.einsum("snm,sn->sm", Ks, self.alpha)
            V = self.L_inv @ Ks
            var[:, sl] = eta2 - np.einsum("snm,snm->sm", V, V)
        np.maximum(var, 0.0, out=var)
        return mean, var

    def mean_var(self, Xnew: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Mixture mean and variance over the draws: (m,), (m,)."""
        mean_s, var_s = self.mean_var_per_draw(Xnew)
        return mixture_moments(mean_s, var_s)

    def joint_per_draw(self, Xnew: np.ndarray, idx: np.ndarray | None = None):
        """Per-draw joint posterior mean (S', m) and covariance (S', m, m) at ``Xnew``."""
        Xnew = np.asarray(Xnew, dtype=float)
        if idx is None:
            idx = np.arange(self.n_draws)
        draws, L_inv, alpha = self.draws.subset(idx), self.L_inv[idx], self.alpha[idx]
        Ks = kernel_matrix(self.kind, self.X, Xnew, draws.ls, draws.eta, draws.alpha)
        Kss = kernel_matrix(self.kind, Xnew, Xnew, draws.ls, draws.eta, draws.alpha)
        V = L_inv @ Ks
        mean = np.einsum("snm,sn->sm", Ks, alpha)
        cov = Kss - V.transpose(0, 2, 1) @ V
        return mean, cov

    def sample(
        self,
        Xnew: np.ndarray,
        n_samples: int,
        rng: np.random.Generator,
        joint: bool = False,
        noise: bool = False,
    ) -> np.ndarray:
        """Posterior samples of ``f`` (or of ``y`` if ``noise``) at ``Xnew``: (n_samples, m).

        Each sample first draws a hyperparameter index ``s`` uniformly, so the
        samples follow the mixture. ``joint=True`` samples whole functions over
        ``Xnew`` (jointly Gaussian given ``s``); otherwise each point is sampled
        from its marginal independently, which is all a pointwise acquisition needs.
        """
        Xnew = np.asarray(Xnew, dtype=float)
        m = Xnew.shape[0]
        s_idx = rng.integers(0, self.n_draws, size=n_samples)
        z = rng.standard_normal((n_samples, m))
        if joint:
            uniq, inverse = np.unique(s_idx, return_inverse=True)
            mean, cov = self.joint_per_draw(Xnew, uniq)
            diag = np.arange(m)
            cov[:, diag, diag] += self.jitter
            if noise:
                cov[:, diag, diag] += (self.draws.sigma[uniq] ** 2)[:, None]
            Lc = np.linalg.cholesky(cov)
            out = mean[inverse] + np.einsum("kij,kj->ki", Lc[inverse], z)
            return out
        mean_s, var_s = self.mean_var_per_draw(Xnew)
        if noise:
            var_s = var_s + (self.draws.sigma**2)[:, None]
        return mean_s[s_idx] + np.sqrt(var_s[s_idx]) * z


def cholesky_inverse(K: np.ndarray) -> np.ndarray:
    """``L⁻¹`` where ``K = L Lᵀ``, batched over leading axes: (..., n, n).

    Holding ``L⁻¹`` turns every later triangular solve into one batched matmul
    (``L⁻¹ k`` for the variance, ``L⁻ᵀ L⁻¹ y`` for the weights).
    """
    L = np.linalg.cholesky(K)
    eye = np.broadcast_to(np.eye(K.shape[-1]), K.shape)
    return np.linalg.solve(L, eye)


def mixture_moments(mean_s: np.ndarray, var_s: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Mean and variance of an equal-weight Gaussian mixture along axis 0.

    ``mean = E_s μ_s``, ``var = E_s σ_s² + Var_s μ_s``.
    """
    mean = mean_s.mean(axis=0)
    var = var_s.mean(axis=0) + mean_s.var(axis=0)
    return mean, var
