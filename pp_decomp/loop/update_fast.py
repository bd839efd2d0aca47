"""The fast full-Bayes path on finite candidate sets.

Two costs dominate a full-Bayes loop: re-sampling the hyperparameter posterior
of every component at every step, and predicting at every candidate for every
draw. Between full refits this module keeps the draws and

* **reweights** them by each new observation's one-step predictive density,
  ``w_s ← w_s · N(y_new; μ_s(x_new), σ_s²(x_new) + σ_n,s²)``: the exact
  incremental posterior ``p(θ | D, y_new) ∝ p(θ | D) p(y_new | θ, D)``,
  importance-sampled, with the effective sample size ``(Σw)² / Σw²`` reported
  at every step and a full NUTS refit (warm-started at the current posterior
  mean) once it drops below ``ess_min · S`` or the draws are ``max_age`` steps old;
* **appends** each new point to every draw's Cholesky factor in ``O(S n N)``:
  with ``K = L Lᵀ``, ``l = L⁻¹ k(X, x)``, ``d = sqrt(k(x, x) + σ² - lᵀl)``, the
  new row of ``V = L⁻¹ k(X, X_c)`` is ``(k(x, X_c) - lᵀ V) / d`` and the new
  entry of ``z = L⁻¹ y`` is ``(y - lᵀ z) / d``, so per-draw means ``Vᵀ z`` and
  variances ``η² - Σ V²`` at all ``N`` candidates update by one rank-one term.

The standardisation of ``y`` is frozen between refits so that reweighting is
exact. Everything is float64 and batched over draws and candidates.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from pp_decomp.components import ComponentGP, HyperDraws
from pp_decomp.components.posterior import JITTER, cholesky_inverse
from pp_decomp.kernels import kernel_matrix


class IncrementalPosterior:
    """Weighted per-draw GP posteriors at a fixed candidate set, updated by appends.

    Parameters
    ----------
    kind : str
        Kernel name.
    X : (n, d) array, scaled inputs; y : (n,) array, standardised outputs
    draws : HyperDraws with S draws
    Xc : (N, d) array, scaled candidates
    """

    def __init__(self, kind, X, y, draws: HyperDraws, Xc):
        self.kind, self.draws, self.Xc = kind, draws, np.asarray(Xc, dtype=float)
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
        return kernel_matrix(self.kind, A, B, d.ls, d.eta, d.alpha)

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

    def per_draw(self, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        """Equal-weight per-draw means and variances (systematic resampling by weight)."""
        S = len(self.logw)
        cum = np.cumsum(self.weights)
        idx = np.minimum(np.searchsorted(cum, (rng.uniform() + np.arange(S)) / S), S - 1)
        var_s = np.maximum(self.draws.eta[:, None] ** 2 - self.qsum, 0.0)
        return self.mean[idx], var_s[idx]


@dataclass
class FastSettings:
    """Refit policy of the fast path."""

    ess_min: float = 0.5  # refit when ESS < ess_min · S
    max_age: int = 10  # ... or after this many appended points
    draws: int = 64  # draws per chain kept at each NUTS refit: S = 128 over 2 chains
    tune: int = 300


class FastComponent:
    """One component on the fast path: NUTS refits plus incremental reweighted updates."""

    def __init__(self, name, kernel, dim, priors, bounds, Xc, settings: FastSettings):
        self.gp = ComponentGP(
            kernel, dim, priors=priors, bounds=bounds, name=name, max_draws=2 * settings.draws
        )
        self.Xc_scaled = self.gp.scale_X(Xc)
        self.settings = settings
        self.post: IncrementalPosterior | None = None
        self.n_at_refit = 0
        self.last_fit = None

    def _standardise(self, y):
        return (np.asarray(y, dtype=float) - self.gp.y_mean) / self.gp.y_std

    def needs_refit(self, n: int) -> bool:
        """Whether a NUTS refit is due at ``n`` observations.

        True before the first fit, when the effective sample size of the reweighted
        draws falls below ``ess_min`` times their number, or when the draws are
        ``max_age`` observations old.
        """
        if self.post is None:
            return True
        s = self.settings
        return self.post.ess < s.ess_min * len(self.post.logw) or n - self.n_at_refit >= s.max_age

    def refit(self, X, y, rng) -> None:
        """Warm-started NUTS refit on ``(X, y)``; the new draws replace the reweighted ones."""
        init = self.gp.draws if self.post is not None else None
        s = self.settings
        self.gp.fit(X, y, "nuts", draws=s.draws, tune=s.tune, chains=2, seed=rng, init=init)
        self.rebuild(X, y, self.gp.draws)

    def rebuild(self, X, y, draws: HyperDraws, y_mean=None, y_std=None) -> None:
        """Posterior from ``draws`` on all of ``(X, y)``, standardisation frozen from now on."""
        if y_mean is not None:
            self.gp.y_mean, self.gp.y_std = y_mean, y_std
        self.gp.draws = draws  # the next refit warm-starts from these
        self.post = IncrementalPosterior(
            self.gp.kernel, self.gp.scale_X(X), self._standardise(y), draws, self.Xc_scaled
        )
        self.n_at_refit = len(X)

    def update(self, X, y) -> None:
        """Append the observations beyond those already conditioned on."""
        for i in range(len(self.post.X), len(X)):
            self.post.append(self.gp.scale_X(X[i : i + 1])[0], self._standardise(y[i]))

    def moments(self) -> tuple[np.ndarray, np.ndarray]:
        """Mixture mean and variance at every candidate, in the component's units, each ``(N,)``."""
        mean, var = self.post.moments()
        return self.gp.y_mean + self.gp.y_std * mean, self.gp.y_std**2 * var

    def per_draw(self, rng) -> tuple[np.ndarray, np.ndarray]:
        """Per-draw means and variances at every candidate (resampled), each ``(S, N)``."""
        mean, var = self.post.per_draw(rng)
        return self.gp.y_mean + self.gp.y_std * mean, self.gp.y_std**2 * var


class FastGPView:
    """A :class:`FastComponent` seen through the ``ComponentGP`` prediction interface.

    Acquisitions pass rows of the candidate set; they are mapped back to their
    indices, and the step's moments and (resampled) per-draw arrays are
    computed once per step.
    """

    def __init__(self, comp: FastComponent, index: dict, rng: np.random.Generator):
        self.comp, self.index, self.name = comp, index, comp.gp.name
        self._moments = comp.moments()
        self._per_draw = comp.per_draw(rng)

    def _idx(self, X) -> np.ndarray:
        X = np.ascontiguousarray(X, dtype=float)
        try:
            return np.fromiter((self.index[row.tobytes()] for row in X), int, len(X))
        except KeyError as err:
            raise ValueError("the fast path predicts only at the problem's candidates") from err

    def predict(self, X, pred_noise: bool = False):
        """Mixture mean and variance at candidate rows ``X``, read from the cached posterior."""
        i = self._idx(X)
        return self._moments[0][i], self._moments[1][i]

    def predict_per_draw(self, X, pred_noise: bool = False):
        """Per-draw means and variances at candidate rows ``X``, read from the cached posterior."""
        i = self._idx(X)
        return self._per_draw[0][:, i], self._per_draw[1][:, i]


def candidate_index(Xc: np.ndarray) -> dict:
    """Row bytes → row index of the candidate set."""
    Xc = np.ascontiguousarray(Xc, dtype=float)
    return {row.tobytes(): i for i, row in enumerate(Xc)}
