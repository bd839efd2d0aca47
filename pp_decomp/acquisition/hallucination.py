"""Pending inputs as hallucinated observations (GP-BUCB, Desautels et al. 2014).

While inputs ``P (k, d)`` are being evaluated, their outputs are unknown, but
observing them would shrink the posterior variance by an amount that does not
depend on the outputs. :class:`HallucinatedGP` is the posterior of a GP model
after observing ``P`` with outputs equal to its own posterior mean: for every
hyperparameter draw ``s`` the mean is unchanged and

* ``σ̃_s²(x) = σ_s²(x) - c_s(x)ᵀ (C_s + N_s)⁻¹ c_s(x)``
* ``K̃_s(X, X') = K_s(X, X') - K_s(X, P) (C_s + N_s)⁻¹ K_s(P, X')``

with ``C_s = K_s(P, P)`` the posterior covariance of the pending inputs,
``c_s(x) = K_s(P, x)`` and ``N_s`` their observation noise. A UCB rule then
turns away from inputs whose uncertainty the pending evaluations will remove,
which is how the UCB family builds a batch (and GP-UCB-PE's, Contal et al.
2013, upper-confidence part). The Monte Carlo acquisitions sample from the
hallucinated per-draw marginals; improvement-based ones also raise their
incumbent to the believed values at ``P`` (Kriging believer, Ginsbourger et
al. 2010).
"""

from __future__ import annotations

import numpy as np

from pp_decomp.acquisition.surrogate import (
    ComposedSurrogate,
    CopulaSurrogate,
    CorrelatedSurrogate,
    DecomposedSurrogate,
)
from pp_decomp.components.posterior.batched import joint_samples, mixture_moments
from pp_decomp.rng import as_generator
from pp_decomp.validate import check_positive_int

_CHUNK = 128  # new points per joint covariance: bounds the (S, k + chunk, k + chunk) array


class HallucinatedGP:
    """A GP model (:class:`~pp_decomp.components.gp.protocol.GPModel`) that has also
    observed its own posterior mean at the pending inputs ``P (k, d)``."""

    def __init__(self, gp, P: np.ndarray):
        self.gp, self.name = gp, gp.name
        self.P = np.atleast_2d(np.asarray(P, dtype=float))
        self._noise_P = self._noise(self.P)

    def _noise(self, X: np.ndarray) -> np.ndarray:
        """Each draw's observation-noise variance at ``X``: (S, m)."""
        _, var_f = self.gp.predict_per_draw(X)
        _, var_y = self.gp.predict_per_draw(X, pred_noise=True)
        return np.maximum(var_y - var_f, 0.0)

    @property
    def n_draws(self) -> int:
        return self.gp.n_draws

    def _reduction(self, X: np.ndarray, idx: np.ndarray):
        """Means (S', m), prior-to-hallucination covariances (S', m, m) and the
        hallucinated covariance reduction ``Vᵀ V`` factor ``V`` (S', k, m) at ``X``."""
        k = len(self.P)
        mean, C = self.gp.joint_predict_per_draw(np.vstack([self.P, X]), idx)
        A = C[:, :k, :k]
        diag = np.arange(k)
        A[:, diag, diag] += self._noise_P[idx]
        V = np.linalg.solve(np.linalg.cholesky(A), C[:, :k, k:])
        return mean[:, k:], C[:, k:, k:], V

    def joint_predict_per_draw(self, Xnew, idx=None) -> tuple[np.ndarray, np.ndarray]:
        """Per-draw joint means (S', m) and hallucinated covariances (S', m, m)."""
        idx = np.arange(self.n_draws) if idx is None else np.asarray(idx)
        mean, cov, V = self._reduction(np.asarray(Xnew, dtype=float), idx)
        return mean, cov - V.transpose(0, 2, 1) @ V

    def predict_per_draw(self, Xnew, pred_noise: bool = False):
        """Per-draw means (unchanged) and hallucinated variances at ``Xnew``: (S, m) each."""
        X = np.asarray(Xnew, dtype=float)
        mean, var = self.gp.predict_per_draw(X, pred_noise)
        idx = np.arange(self.n_draws)
        for start in range(0, len(X), _CHUNK):
            sl = slice(start, start + _CHUNK)
            _, _, V = self._reduction(X[sl], idx)
            var[:, sl] = np.maximum(var[:, sl] - np.einsum("skm,skm->sm", V, V), 0.0)
        return mean, var

    def predict(self, Xnew, pred_noise: bool = False) -> tuple[np.ndarray, np.ndarray]:
        """Equal-weight mixture mean and variance over the draws: (m,) each."""
        return mixture_moments(*self.predict_per_draw(Xnew, pred_noise))

    def sample(
        self, Xnew, n_samples: int, seed=None, joint: bool = False, pred_noise: bool = False
    ) -> np.ndarray:
        """Samples of the hallucinated posterior at ``Xnew``: (n_samples, m)."""
        n_samples = check_positive_int(n_samples, "n_samples")
        rng = as_generator(seed)
        X = np.asarray(Xnew, dtype=float)
        s_idx = rng.integers(0, self.n_draws, size=n_samples)
        z = rng.standard_normal((n_samples, len(X)))
        if not joint:
            mean, var = self.predict_per_draw(X, pred_noise)
            return mean[s_idx] + np.sqrt(var[s_idx]) * z
        uniq, inverse = np.unique(s_idx, return_inverse=True)
        mean, cov = self.joint_predict_per_draw(X, uniq)
        diag = np.arange(len(X))
        scale = np.abs(cov[:, diag, diag]).max(axis=1, keepdims=True)
        noise = self._noise(X)[uniq] if pred_noise else None
        return joint_samples(mean, cov, inverse, z, 1e-6 * np.maximum(scale, 1e-12), noise)


def hallucinate(surrogate, P: np.ndarray):
    """The surrogate of a step with pending inputs ``P (k, d)`` hallucinated
    (the surrogate itself when ``P`` is empty)."""
    if surrogate is None or not len(P):
        return surrogate
    if isinstance(surrogate, CorrelatedSurrogate):
        raise ValueError(
            f"correlated=True chooses one input at a time after the design: {len(P)} "
            "input(s) are pending; tell their results (or run with workers=1) first"
        )
    if isinstance(surrogate, CopulaSurrogate):  # C stays that of the observed data
        comps = [HallucinatedGP(c, P) for c in surrogate.components]
        return CopulaSurrogate(comps, surrogate.problem, surrogate.correlation)
    if isinstance(surrogate, DecomposedSurrogate):
        comps = [HallucinatedGP(c, P) for c in surrogate.components]
        return DecomposedSurrogate(comps, surrogate.problem)
    if isinstance(surrogate, ComposedSurrogate):
        return ComposedSurrogate(HallucinatedGP(surrogate.gp, P))
    raise TypeError(f"cannot hallucinate pending inputs on a {type(surrogate).__name__}")
