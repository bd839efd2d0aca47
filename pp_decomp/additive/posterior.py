"""Per-group posteriors of an additive SE GP, batched over hyperparameter draws.

Groups ``G_j ⊂ {0..D-1}`` (disjoint or overlapping) are rows of a 0/1 mask
``W (M, D)``. With lengthscales ``ℓ (S, D)`` shared by the groups that contain a
dimension and amplitudes ``η (S, M)``:

``k_j(x, x') = η_j² exp(-½ Σ_d W_jd (x_d - x'_d)² / ℓ_d²)``, ``k = Σ_j k_j``.

For each draw, ``K = k(X, X) + (σ² + jitter) I = L Lᵀ`` is factorised once and
shared by every group (Kandasamy eq. 5, Rolland eq. 4):

* ``μ_j(x) = k_j(x, X) K⁻¹ y``
* ``σ_j²(x) = k_j(x, x) - ‖L⁻¹ k_j(X, x)‖²``

and the full posterior has ``μ = Σ_j μ_j``, ``σ² = k(x, x) - ‖L⁻¹ k(X, x)‖²``.
"""

from __future__ import annotations

import numpy as np

from pp_decomp.components.posterior.batched import JITTER, DrawPosterior, factorise, mixture_moments
from pp_decomp.kernels.families import ExpQuad


def group_masks(groups, input_dim: int) -> np.ndarray:
    """The ``(M, D)`` 0/1 membership mask of ``groups`` (sequences of dimension indices)."""
    W = np.zeros((len(groups), input_dim))
    for j, g in enumerate(groups):
        g = [int(v) for v in g]
        if not g:
            raise ValueError(f"group {j} is empty")
        if min(g) < 0 or max(g) >= input_dim:
            raise ValueError(f"group {j} = {g} has dimensions outside 0..{input_dim - 1}")
        W[j, g] = 1.0
    return W


def group_sqdist(X1: np.ndarray, X2: np.ndarray, ls: np.ndarray, W: np.ndarray) -> np.ndarray:
    """Scaled squared distances per draw and group: ``(S, M, n1, n2)``.

    ``r²_sj(x, x') = Σ_d W_jd (x_d - x'_d)² / ℓ_sd²``.
    """
    d2 = (X1[:, None, :] - X2[None, :, :]) ** 2  # (n1, n2, D)
    return np.einsum("abd,sd,md->smab", d2, 1.0 / ls**2, W, optimize=True)


def group_cov(X1, X2, ls, eta, W) -> np.ndarray:
    """Group covariances ``k_j(X1, X2)`` per draw: ``(S, M, n1, n2)``."""
    return (eta**2)[:, :, None, None] * ExpQuad.correlation(group_sqdist(X1, X2, ls, W))


class AdditivePosterior(DrawPosterior):
    """Posterior of an additive zero-mean GP for each of S hyperparameter draws.

    Parameters
    ----------
    X : (n, D) array, y : (n,) array
        Training data, on the scale the draws expect.
    W : (M, D) 0/1 group mask
    ls : (S, D), eta : (S, M), sigma : (S,)
        Hyperparameter draws.
    """

    def __init__(self, X, y, W, ls, eta, sigma, jitter: float = JITTER):
        self.X = np.asarray(X, dtype=float)
        self.y = np.asarray(y, dtype=float)
        self.W = np.asarray(W, dtype=float)
        self.ls = np.atleast_2d(np.asarray(ls, dtype=float))
        self.eta = np.atleast_2d(np.asarray(eta, dtype=float))
        self.sigma = np.atleast_1d(np.asarray(sigma, dtype=float))
        self.jitter = jitter
        K = group_cov(self.X, self.X, self.ls, self.eta, self.W).sum(1)
        idx = np.arange(len(self.X))
        K[:, idx, idx] += (self.sigma**2)[:, None] + jitter
        self.L_inv, self.alpha, self.log_marginal_likelihood = factorise(K, self.y)

    def subset(self, idx) -> AdditivePosterior:
        """The posterior of draws ``idx`` (repeats allowed), from this one's factors."""
        idx = np.asarray(idx, dtype=int)
        out = object.__new__(AdditivePosterior)
        out.__dict__.update(self.__dict__)
        for name in ("ls", "eta", "sigma", "L_inv", "alpha", "log_marginal_likelihood"):
            setattr(out, name, getattr(self, name)[idx])
        return out

    @property
    def n_groups(self) -> int:
        return self.W.shape[0]

    @property
    def n_draws(self) -> int:
        return self.ls.shape[0]

    @property
    def noise_var(self) -> np.ndarray:
        """Observation-noise variance per draw as the likelihood has it, ``σ_s² + jitter``: (S,)."""
        return self.sigma**2 + self.jitter

    def group_per_draw(self, Xnew, groups=None) -> tuple[np.ndarray, np.ndarray]:
        """Per-draw means and variances of the groups at ``Xnew (m, D)``: ``(S, M', m)`` each.

        Only the dimensions of each group matter; ``groups`` selects a subset (default all).
        """
        Xnew = np.asarray(Xnew, dtype=float)
        idx = np.arange(self.n_groups) if groups is None else np.asarray(groups)
        Kx = group_cov(Xnew, self.X, self.ls, self.eta[:, idx], self.W[idx])  # (S, M', m, n)
        mean = np.einsum("sjmn,sn->sjm", Kx, self.alpha)
        # L⁻¹ k_j(X, x) for every draw and group by one batched matrix product (BLAS),
        # not einsum's loops: (S, M', n, m)
        V = self.L_inv[:, None] @ Kx.transpose(0, 1, 3, 2)
        var = (self.eta[:, idx] ** 2)[:, :, None] - np.einsum("sjam,sjam->sjm", V, V)
        return mean, np.maximum(var, 1e-12)

    def group_moments(self, Xnew, groups=None) -> tuple[np.ndarray, np.ndarray]:
        """Mixture mean and variance of each group over the draws: ``(M', m)`` each."""
        mean_s, var_s = self.group_per_draw(Xnew, groups)
        return mixture_moments(mean_s, var_s)

    def per_draw(self, Xnew) -> tuple[np.ndarray, np.ndarray]:
        """Per-draw mean and variance of the full ``f`` at ``Xnew``: ``(S, m)`` each."""
        Xnew = np.asarray(Xnew, dtype=float)
        Kx = group_cov(Xnew, self.X, self.ls, self.eta, self.W).sum(1)  # (S, m, n)
        mean = np.einsum("smn,sn->sm", Kx, self.alpha)
        V = self.L_inv @ Kx.transpose(0, 2, 1)  # (S, n, m)
        prior = (self.eta**2).sum(1)[:, None]
        return mean, np.maximum(prior - np.einsum("sam,sam->sm", V, V), 1e-12)

    def joint_per_draw(self, Xnew, idx=None) -> tuple[np.ndarray, np.ndarray]:
        """Per-draw joint mean (S', m) and covariance (S', m, m) of the full ``f`` at ``Xnew``."""
        Xnew = np.asarray(Xnew, dtype=float)
        idx = np.arange(self.n_draws) if idx is None else np.asarray(idx)
        ls, eta, L_inv = self.ls[idx], self.eta[idx], self.L_inv[idx]
        Kx = group_cov(Xnew, self.X, ls, eta, self.W).sum(1)  # (S', m, n)
        Kxx = group_cov(Xnew, Xnew, ls, eta, self.W).sum(1)
        V = np.einsum("sab,smb->sam", L_inv, Kx)
        return np.einsum("smn,sn->sm", Kx, self.alpha[idx]), Kxx - V.transpose(0, 2, 1) @ V
