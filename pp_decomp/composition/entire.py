"""The "entire" GP of Wang Alg. 1: one GP on the composed output."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import xarray as xr

from pp_decomp.components.posterior import cholesky_inverse, mixture_moments
from pp_decomp.composition.linear import LinearComposition
from pp_decomp.validate import check_X, check_Y


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
        X = check_X(X, "X", min_rows=2)
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

    def posterior(self, Xnew) -> xr.Dataset:
        """``mean(point)`` and ``variance(point)`` as an xarray Dataset."""
        mean, var = self.predict(Xnew)
        return xr.Dataset(
            {"mean": ("point", mean), "variance": ("point", var)},
            attrs={"composition": "entire"},
        )
