"""The "entire" GP of Wang Alg. 1: one GP on the composed output."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import xarray as xr

from pp_decomp.components.posterior import JITTER, cholesky_inverse, mixture_moments
from pp_decomp.composition.linear import LinearComposition
from pp_decomp.rng import SeedLike, as_generator
from pp_decomp.validate import check_positive_int, check_X, check_Y


class EntireGP:
    """GP regression of ``y = Σ_j g_j(x) y_j`` with the composed kernel.

    Given the component GPs' hyperparameters (their draws are paired index by
    index; one draw is broadcast), the composed model is

    * prior mean ``m(x) = Σ_j g_j(x) m_j`` (``m_j`` the components' output means),
    * kernel ``k(x, x') = Σ_j g_j(x) k_j(x, x') g_j(x')``,
    * noise variance ``Σ_j g_j(x)² σ_j²`` at each observation,

    so that with the same kernels Theorem 6 holds: the decomposed variance
    ``Σ g_j² σ_j²(x)`` never exceeds this model's variance.

    Parameters
    ----------
    components : sequence of fitted :class:`~pp_decomp.ComponentGP`
        Provide kernels, noise and prior means (their own data are not used).
    composition : LinearComposition
    """

    def __init__(self, components: Sequence, composition: LinearComposition):
        if len(components) != composition.n_components:
            raise ValueError(
                f"components has {len(components)} GP(s) but composition has "
                f"{composition.n_components} weight(s)"
            )
        self.components = list(components)
        self.composition = composition
        sizes = {c.draws.n_draws for c in self.components} - {1}
        if len(sizes) > 1:
            raise ValueError(f"components must have equal numbers of draws (or 1); got {sizes}")

    def _prior_mean(self, X, G):
        return G @ np.array([c.y_mean for c in self.components])

    def _kernel(self, X1, X2, G1, G2):
        return sum(
            G1[:, j][None, :, None] * c.prior_cov(X1, X2) * G2[:, j][None, None, :]
            for j, c in enumerate(self.components)
        )

    def fit(self, X, Y) -> EntireGP:
        """Condition on inputs ``X (n, d)`` and component observations ``Y (n, J)``."""
        X = check_X(X, "X", min_rows=0)  # no rows: the prior
        Y = check_Y(Y, "Y", n=X.shape[0], n_components=self.composition.n_components)
        G = self.composition.weights(X)
        y = np.einsum("nj,nj->n", G, Y)
        K = self._kernel(X, X, G, G)
        noise = sum(
            np.atleast_1d(c.noise_var)[:, None] * G[:, j] ** 2
            for j, c in enumerate(self.components)
        )
        idx = np.arange(X.shape[0])
        K[:, idx, idx] += noise
        self.X, self.G = X, G
        self.L_inv = cholesky_inverse(K)
        r = y - self._prior_mean(X, G)
        self.alpha = np.einsum("sji,sj->si", self.L_inv, self.L_inv @ r)
        return self

    def predict_per_draw(self, Xnew):
        """Per-draw mean and variance of the composed ``f`` at ``Xnew``: (S, m), (S, m)."""
        Xnew = check_X(Xnew, "Xnew")
        Gn = self.composition.weights(Xnew)
        Ks = self._kernel(self.X, Xnew, self.G, Gn)
        kss = sum(Gn[:, j] ** 2 * c.prior_var[:, None] for j, c in enumerate(self.components))
        mean = self._prior_mean(Xnew, Gn) + np.einsum("snm,sn->sm", Ks, self.alpha)
        V = self.L_inv @ Ks
        var = np.maximum(kss - np.einsum("snm,snm->sm", V, V), 0.0)
        return mean, var

    def predict(self, Xnew) -> tuple[np.ndarray, np.ndarray]:
        """Mixture mean and variance of the composed ``f`` at ``Xnew``: (m,), (m,)."""
        return mixture_moments(*self.predict_per_draw(Xnew))

    def sample(
        self, Xnew, n_samples: int, seed: SeedLike = None, joint: bool = False
    ) -> np.ndarray:
        """Posterior samples of the composed ``f`` at ``Xnew``: (n_samples, m).

        Each sample picks a hyperparameter draw ``s`` uniformly; ``joint=True``
        samples ``N(μ_s, K_s(X*, X*) - K_s(X*, X) K_s⁻¹ K_s(X, X*))`` over all of
        ``Xnew`` (jitter ``10⁻⁶ · max_x k(x, x)`` on the diagonal), otherwise each
        point from its marginal.
        """
        n_samples = check_positive_int(n_samples, "n_samples")
        Xnew = check_X(Xnew, "Xnew")
        rng = as_generator(seed)
        S = self.alpha.shape[0]
        s_idx = rng.integers(0, S, size=n_samples)
        z = rng.standard_normal((n_samples, Xnew.shape[0]))
        if not joint:
            mean_s, var_s = self.predict_per_draw(Xnew)
            return mean_s[s_idx] + np.sqrt(var_s[s_idx]) * z
        Gn = self.composition.weights(Xnew)
        Ks = self._kernel(self.X, Xnew, self.G, Gn)
        Kss = np.broadcast_to(self._kernel(Xnew, Xnew, Gn, Gn), (S,) + (Xnew.shape[0],) * 2)
        V = self.L_inv @ Ks
        mean = self._prior_mean(Xnew, Gn) + np.einsum("snm,sn->sm", Ks, self.alpha)
        cov = Kss - V.transpose(0, 2, 1) @ V
        diag = np.arange(Xnew.shape[0])
        cov[:, diag, diag] += JITTER * Kss[:, diag, diag].max(axis=1, keepdims=True)
        L = np.linalg.cholesky(cov)
        return mean[s_idx] + np.einsum("kij,kj->ki", L[s_idx], z)

    def posterior(self, Xnew) -> xr.Dataset:
        """``mean(point)`` and ``variance(point)`` as an xarray Dataset."""
        mean, var = self.predict(Xnew)
        return xr.Dataset(
            {"mean": ("point", mean), "variance": ("point", var)},
            attrs={"composition": "entire"},
        )
