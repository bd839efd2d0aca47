"""The "entire" GP of Wang Alg. 1: one GP on the composed output."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import xarray as xr

from pp_decomp.components.posterior.batched import JITTER, DrawPosterior, factorise, mixture_moments
from pp_decomp.composition.core import LinearComposition
from pp_decomp.validate import SeedLike, as_generator, check_X, check_Y


class EntireGP(DrawPosterior):
    """GP regression of ``y = Σ_j g_j(x) y_j`` with the composed kernel.

    Given the component GPs' hyperparameters (their draws are paired index by
    index; one draw is broadcast), the composed model is

    * prior mean ``m(x) = b(x) + Σ_j g_j(x) m_j`` (``m_j`` the components' output
      means, ``b`` the composition's known term),
    * kernel ``k(x, x') = Σ_j g_j(x) k_j(x, x') g_j(x')``,
    * noise variance ``Σ_j g_j(x)² σ_j²`` at each observation,

    so that with the same kernels Theorem 6 holds: the decomposed variance
    ``Σ g_j² σ_j²(x)`` never exceeds this model's variance. It works in the
    original units (no scaling), so it is its own posterior.

    Parameters
    ----------
    components : sequence of fitted :class:`~pp_decomp.ComponentGP`
        Provide kernels, noise and prior means (their own data are not used).
    composition : LinearComposition
    name : str
    """

    def __init__(self, components: Sequence, composition: LinearComposition, name: str = "entire"):
        if len(components) != composition.n_components:
            raise ValueError(
                f"components has {len(components)} GP(s) but composition has "
                f"{composition.n_components} weight(s)"
            )
        self.components = list(components)
        self.composition = composition
        self.name = str(name)
        sizes = {c.draws.n_draws for c in self.components} - {1}
        if len(sizes) > 1:
            raise ValueError(f"components must have equal numbers of draws (or 1); got {sizes}")
        self.n_draws = max(sizes) if sizes else 1

    def _prior_mean(self, G, X):
        return G @ np.array([c.y_mean for c in self.components]) + self.composition.offset_at(X)

    def _kernel(self, X1, X2, G1, G2):
        K = sum(
            G1[:, j][None, :, None] * c.prior_cov(X1, X2) * G2[:, j][None, None, :]
            for j, c in enumerate(self.components)
        )
        return np.broadcast_to(K, (self.n_draws, len(X1), len(X2))).copy()

    def _noise(self, G) -> np.ndarray:
        """``Σ_j g_j(x)² σ_j²`` per draw at rows with weights ``G``: (S, n)."""
        noise = sum(
            np.atleast_1d(c.noise_var)[:, None] * G[:, j] ** 2
            for j, c in enumerate(self.components)
        )
        return np.broadcast_to(noise, (self.n_draws, G.shape[0]))

    def condition(self, X, Y) -> EntireGP:
        """Condition on inputs ``X (n, d)`` and component observations ``Y (n, J)``."""
        X = check_X(X, "X", min_rows=0)  # no rows: the prior
        Y = check_Y(Y, "Y", n=X.shape[0], n_components=self.composition.n_components)
        G = self.composition.weights(X)
        K = self._kernel(X, X, G, G)
        idx = np.arange(X.shape[0])
        K[:, idx, idx] += self._noise(G)
        self.X, self.G = X, G
        # y - m(x) at the observations: the known term b(x) is in both and cancels
        means = np.array([c.y_mean for c in self.components])
        self.L_inv, self.alpha, self.log_marginal_likelihood = factorise(
            K, np.einsum("nj,nj->n", G, Y - means)
        )
        return self

    def per_draw(self, Xnew) -> tuple[np.ndarray, np.ndarray]:
        """Per-draw mean and variance of the composed ``f`` at ``Xnew``: (S, m), (S, m)."""
        Xnew = check_X(Xnew, "Xnew")
        Gn = self.composition.weights(Xnew)
        Ks = self._kernel(self.X, Xnew, self.G, Gn)
        kss = sum(Gn[:, j] ** 2 * c.prior_var[:, None] for j, c in enumerate(self.components))
        mean = self._prior_mean(Gn, Xnew) + np.einsum("snm,sn->sm", Ks, self.alpha)
        V = self.L_inv @ Ks
        var = np.maximum(kss - np.einsum("snm,snm->sm", V, V), 0.0)
        return mean, var

    def joint_per_draw(self, Xnew, idx=None) -> tuple[np.ndarray, np.ndarray]:
        """Per-draw joint mean (S', m) and covariance (S', m, m) of the composed ``f``."""
        Xnew = check_X(Xnew, "Xnew")
        idx = np.arange(self.n_draws) if idx is None else np.asarray(idx)
        Gn = self.composition.weights(Xnew)
        Ks = self._kernel(self.X, Xnew, self.G, Gn)[idx]
        Kss = self._kernel(Xnew, Xnew, Gn, Gn)[idx]
        V = self.L_inv[idx] @ Ks
        mean = self._prior_mean(Gn, Xnew) + np.einsum("snm,sn->sm", Ks, self.alpha[idx])
        return mean, Kss - V.transpose(0, 2, 1) @ V

    def sample_jitter(self, cov):
        diag = np.arange(cov.shape[-1])
        return JITTER * cov[:, diag, diag].max(axis=1, keepdims=True)

    def noise_per_draw(self, Xnew) -> np.ndarray:
        """Observation-noise variance ``Σ_j g_j(x)² σ_j²`` per draw at ``Xnew``: (S, m)."""
        return self._noise(self.composition.weights(check_X(Xnew, "Xnew")))

    # the model interface (:class:`pp_decomp.components.gp.protocol.GPModel`)
    def predict_per_draw(self, Xnew, pred_noise: bool = False):
        """Per-draw mean and variance of the composed ``f`` (or ``y``) at ``Xnew``."""
        mean, var = self.per_draw(Xnew)
        return mean, var + self.noise_per_draw(Xnew) if pred_noise else var

    def joint_predict_per_draw(self, Xnew, idx=None) -> tuple[np.ndarray, np.ndarray]:
        """Per-draw joint mean (S', m) and covariance (S', m, m) of the composed ``f``."""
        return self.joint_per_draw(Xnew, idx)

    def predict(self, Xnew, pred_noise: bool = False) -> tuple[np.ndarray, np.ndarray]:
        """Mixture mean and variance of the composed ``f`` (or ``y``) at ``Xnew``: (m,), (m,)."""
        return mixture_moments(*self.predict_per_draw(Xnew, pred_noise))

    def sample(
        self,
        Xnew,
        n_samples: int,
        seed: SeedLike = None,
        joint: bool = False,
        pred_noise: bool = False,
    ) -> np.ndarray:
        """Posterior samples of the composed ``f`` (``y`` with ``pred_noise``): (n_samples, m).

        Each sample picks a hyperparameter draw ``s`` uniformly; ``joint=True``
        samples ``N(μ_s, K_s(X*, X*) - K_s(X*, X) K_s⁻¹ K_s(X, X*))`` over all of
        ``Xnew`` (jitter ``10⁻⁶ · max_x k(x, x)`` on the diagonal), otherwise each
        point from its marginal.
        """
        Xnew = check_X(Xnew, "Xnew")
        return DrawPosterior.sample(self, Xnew, n_samples, as_generator(seed), joint, pred_noise)

    def to_dataset(self, Xnew) -> xr.Dataset:
        """``mean(point)`` and ``variance(point)`` as an xarray Dataset."""
        mean, var = self.predict(Xnew)
        return xr.Dataset(
            {"mean": ("point", mean), "variance": ("point", var)},
            attrs={"composition": "entire"},
        )
