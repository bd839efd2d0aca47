"""Draws and the batched posterior of correlated components
(see :mod:`pp_decomp.components.correlated.density`).

For draw ``s`` with factors ``K = U diag(λ) Uᵀ``, ``P``, ``W`` and ``A``
(:func:`~pp_decomp.components.correlated.density.kronecker_factors`), and
``k_*(x) = c_ℓ(x, X) + m`` (n,), the components' joint posterior at ``x`` is

* mean ``μ(x) = k_*(x)ᵀ A B`` (J,);
* covariance ``Σ(x) = (1 + m) B - (B P) diag(r(x)) (B P)ᵀ`` (J, J),
  ``r_j(x) = Σ_k (Uᵀ k_*(x))_k² W_kj``;

and across inputs ``X_*`` (m, d), with ``M_j = K_* U diag(W_:j) Uᵀ K_*ᵀ`` (m, m),
``Cov = B ⊗ K_** - Σ_j (B P)_:j (B P)_:jᵀ ⊗ M_j`` (mJ, mJ), component-major.
All on the model's scale (unit-scaled inputs, standardised outputs).

A joint sample over many inputs is drawn by pathwise conditioning (Matheron's
rule; Wilson et al. 2020) instead of from the ``mJ × mJ`` covariance: a prior
sample ``F = L_K Z L_Bᵀ`` on ``X_* ∪ X`` (``B ⊗ K`` factorises), noise ``E``
at ``X``, and ``f_* = F_* + K_* A_R B`` with ``A_R`` the ``α`` of the residual
``Y - F_X - E``: ``O((m + n)³)`` and ``(m + n)²`` memory.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from pp_decomp.components.correlated.density import (
    correlation_and_slope,
    kronecker_factors,
    log_marginal,
)
from pp_decomp.components.posterior.batched import JITTER
from pp_decomp.kernels import scaled_sqdist
from pp_decomp.validate import check_finite


def check_correlations(corr: np.ndarray, tol: float = 1e-8) -> None:
    """Refuse ``corr (S, J, J)`` unless every matrix is a correlation matrix:
    symmetric, unit diagonal, positive semi-definite (to ``tol``)."""
    J = corr.shape[-1]
    bad = [
        s
        for s, C in enumerate(corr)
        if not np.allclose(C, C.T, atol=tol)
        or not np.allclose(np.diag(C), 1.0, atol=tol)
        or np.linalg.eigvalsh((C + C.T) / 2).min() < -tol * J
    ]
    if bad:
        raise ValueError(
            f"corr must hold correlation matrices (symmetric, unit diagonal, positive "
            f"semi-definite); draw(s) {bad[:5]} are not, e.g. {corr[bad[0]].round(3).tolist()}"
        )


@dataclass(frozen=True)
class CoregionDraws:
    """S draws of the hyperparameters of ``J`` correlated components.

    Parameters
    ----------
    ls : (S, d) lengthscales of the shared kernel (unit-scaled inputs)
    sigma : (S, J) noise standard deviations (standardised outputs)
    eta : (S, J) amplitudes (standardised outputs)
    corr : (S, J, J) correlations between the components
    """

    ls: np.ndarray
    sigma: np.ndarray
    eta: np.ndarray
    corr: np.ndarray

    def __post_init__(self):
        ls, sigma, eta = (np.atleast_2d(np.asarray(v, dtype=float)) for v in self.arrays[:3])
        corr = np.asarray(self.corr, dtype=float)
        corr = corr[None] if corr.ndim == 2 else corr
        S, J = sigma.shape
        for name, arr in (("ls", ls), ("sigma", sigma), ("eta", eta)):
            check_finite(arr, name)
            if np.any(arr <= 0):
                raise ValueError(f"{name} must be > 0; got min {arr.min()!r}")
        if ls.shape[0] != S or eta.shape != (S, J) or corr.shape != (S, J, J):
            raise ValueError(
                f"draws must share S={S} and J={J}: ls {ls.shape}, eta {eta.shape}, "
                f"corr {corr.shape}"
            )
        check_finite(corr, "corr")
        check_correlations(corr)
        for name, arr in (("ls", ls), ("sigma", sigma), ("eta", eta), ("corr", corr)):
            object.__setattr__(self, name, arr)

    @property
    def arrays(self) -> tuple:
        """``(ls, sigma, eta, corr)``."""
        return self.ls, self.sigma, self.eta, self.corr

    @property
    def n_draws(self) -> int:
        """S, the number of draws."""
        return self.ls.shape[0]

    def subset(self, idx) -> CoregionDraws:
        """The draws at positions ``idx``."""
        return CoregionDraws(*(a[idx] for a in self.arrays))

    def as_dict(self) -> dict:
        """Plain lists, for checkpoints (inverse: :meth:`from_dict`)."""
        return {
            k: v.tolist() for k, v in zip(("ls", "sigma", "eta", "corr"), self.arrays, strict=True)
        }

    @classmethod
    def from_dict(cls, d: dict) -> CoregionDraws:
        """Draws from :meth:`as_dict`'s lists."""
        return cls(**{k: np.asarray(v) for k, v in d.items()})

    def covariance(self) -> np.ndarray:
        """``B = diag(η) C diag(η)`` per draw: (S, J, J)."""
        return self.eta[:, :, None] * self.corr * self.eta[:, None, :]


class CoregionPosterior:
    """The posterior of correlated components given ``S`` hyperparameter draws.

    Parameters
    ----------
    kernel : str
    X : (n, d) unit-scaled inputs
    Y : (n, J) standardised outputs
    draws : CoregionDraws
    mean_var : float, the constant in the shared kernel
    """

    def __init__(self, kernel: str, X, Y, draws: CoregionDraws, mean_var: float):
        self.kernel, self.X, self.Y, self.draws = kernel, X, Y, draws
        self.mean_var = float(mean_var)
        self.B = draws.covariance()
        self.noise = draws.sigma**2 + JITTER  # (S, J)
        r2 = scaled_sqdist(X, X, draws.ls)
        self.factors = [
            kronecker_factors(self._K(r2[s]), self.B[s], self.noise[s], Y)
            for s in range(draws.n_draws)
        ]

    @property
    def n_draws(self) -> int:
        return self.draws.n_draws

    @property
    def n_components(self) -> int:
        return self.Y.shape[1]

    def _K(self, r2: np.ndarray) -> np.ndarray:
        return correlation_and_slope(self.kernel, r2)[0] + self.mean_var

    def _cross(self, Xnew) -> np.ndarray:
        """``k_*`` per draw: (S, m, n)."""
        return self._K(scaled_sqdist(Xnew, self.X, self.draws.ls))

    def log_likelihoods(self) -> np.ndarray:
        """``log p(Y | θ_s)`` of every draw on this posterior's data: (S,), from the
        factors already made (the importance weights of later observations)."""
        return np.array([log_marginal(f, self.noise[s]) for s, f in enumerate(self.factors)])

    def subset(self, idx) -> CoregionPosterior:
        """This posterior on the draws at positions ``idx``, nothing recomputed."""
        idx = np.asarray(idx)
        out = object.__new__(CoregionPosterior)
        out.__dict__.update(self.__dict__)
        out.draws, out.B, out.noise = self.draws.subset(idx), self.B[idx], self.noise[idx]
        out.factors = [self.factors[i] for i in idx]
        return out

    def moments(self, Xnew) -> tuple[np.ndarray, np.ndarray]:
        """Per-draw means (S, m, J) and pointwise covariances across components (S, m, J, J)."""
        Ks = self._cross(Xnew)
        S, m, J = self.n_draws, Ks.shape[1], self.n_components
        mean, cov = np.empty((S, m, J)), np.empty((S, m, J, J))
        prior = 1.0 + self.mean_var
        for s, f in enumerate(self.factors):
            B = self.B[s]
            mean[s] = Ks[s] @ f["A"] @ B
            r = (Ks[s] @ f["U"]) ** 2 @ f["W"]  # (m, J)
            BP = B @ f["P"]
            cov[s] = prior * B - np.einsum("ij,mj,kj->mik", BP, r, BP)
        return mean, cov

    def pathwise_sample(self, Xnew, s: int, rng: np.random.Generator) -> np.ndarray:
        """One joint sample of every component over ``Xnew (m, d)`` under draw ``s``: (m, J)."""
        f, B, m = self.factors[s], self.B[s], len(Xnew)
        X_all = np.vstack([Xnew, self.X])
        K = self._K(scaled_sqdist(X_all, X_all, self.draws.ls[s : s + 1]))[0]
        K[np.diag_indices_from(K)] += 1e-8 * K.diagonal().max()
        F = np.linalg.cholesky(K) @ rng.standard_normal((len(X_all), B.shape[0]))
        F = F @ np.linalg.cholesky(B + 1e-10 * np.eye(len(B)) * B.diagonal().max()).T
        residual = self.Y - F[m:] - np.sqrt(self.noise[s]) * rng.standard_normal(self.Y.shape)
        A_R = f["U"] @ ((f["U"].T @ residual @ f["P"]) * f["W"]) @ f["P"].T
        return F[:m] + K[:m, m:] @ A_R @ B

    def joint(self, Xnew, s: int) -> tuple[np.ndarray, np.ndarray]:
        """Draw ``s``'s joint mean (m, J) and covariance (mJ, mJ) at ``Xnew``, component-major."""
        f, B = self.factors[s], self.B[s]
        ls = self.draws.ls[s : s + 1]
        Ks = self._K(scaled_sqdist(Xnew, self.X, ls))[0]
        Kss = self._K(scaled_sqdist(Xnew, Xnew, ls))[0]
        cov = np.kron(B, Kss)
        KU = Ks @ f["U"]
        BP = B @ f["P"]
        for j in range(self.n_components):
            cov -= np.kron(np.outer(BP[:, j], BP[:, j]), (KU * f["W"][:, j]) @ KU.T)
        return Ks @ f["A"] @ B, cov
