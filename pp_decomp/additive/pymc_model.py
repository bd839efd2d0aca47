"""The PyMC model of an additive GP: the model's definition and the tests' reference.

NUTS samples the same density written in numpy
(:class:`~pp_decomp.additive.gp.MapObjective`, :mod:`pp_decomp.additive.sampler`),
which the tests check against this model's. The group mask ``W (M, D)`` is
data next to ``X`` and ``y``, as in the sampler's model, so one model serves
every decomposition with the same number of groups ``M`` and dimension ``D``.
"""

from __future__ import annotations

import numpy as np
import pymc as pm
import pytensor.tensor as pt

from pp_decomp.components.gp.priors import Priors, f64
from pp_decomp.components.posterior.batched import JITTER


class MaskedAdditiveExpQuad(pm.gp.cov.Covariance):
    """``k(x, x') = Σ_j η_j² exp(-½ Σ_d W_jd (x_d - x'_d)² / ℓ_d²)`` as a PyMC covariance."""

    def __init__(self, input_dim: int, ls, eta, W):
        super().__init__(input_dim)
        self.ls, self.eta, self.W = ls, eta, W

    def full(self, X, Xs=None):
        """The ``(n1, n2)`` covariance matrix between the rows of ``X`` and ``Xs``."""
        Xs = X if Xs is None else Xs
        d2 = (X[:, None, :] - Xs[None, :, :]) ** 2 / self.ls**2  # (n1, n2, D)
        r2 = pt.tensordot(d2, self.W.T, axes=[[2], [0]])  # (n1, n2, M)
        return pt.sum(self.eta**2 * pt.exp(-0.5 * r2), axis=-1)

    def diag(self, X):
        """``k(x, x) = Σ_j η_j²`` at every row of ``X``."""
        return pt.alloc(pt.sum(self.eta**2), X.shape[0])


def build_additive_model(
    n_groups: int, input_dim: int, priors: Priors, n: int = 3, shared: bool = False
) -> pm.Model:
    """``y ~ MvNormal(0, Σ_j η_j² k_j(X, X) + (σ² + jitter) I)`` with ``X``, ``y``, ``W`` as data.

    Priors: ``ℓ_d ~ InverseGamma``, ``η_j ~ Gamma`` with the amplitude prior
    scaled by ``1/sqrt(M)`` (so the summed prior variance stays near 1 on
    standardised outputs), ``σ ~ Gamma``. With ``shared=True`` one ``ls_shared``
    and one ``eta_shared`` are drawn from those priors and ``ls (D,)``,
    ``eta (M,)`` are deterministic copies of them.
    """
    rate = f64(priors.eta_beta * np.sqrt(n_groups))
    with pm.Model() as model:
        X = pm.Data("X", np.zeros((n, input_dim)))
        y = pm.Data("y", np.zeros(n))
        W = pm.Data("W", np.ones((n_groups, input_dim)))
        if shared:
            ls1 = pm.InverseGamma("ls_shared", alpha=f64(priors.ls_alpha), beta=f64(priors.ls_beta))
            eta1 = pm.Gamma("eta_shared", alpha=f64(priors.eta_alpha), beta=rate)
            ls = pm.Deterministic("ls", pt.alloc(ls1, input_dim))
            eta = pm.Deterministic("eta", pt.alloc(eta1, n_groups))
        else:
            ls = pm.InverseGamma(
                "ls", alpha=f64(priors.ls_alpha), beta=f64(priors.ls_beta), shape=input_dim
            )
            eta = pm.Gamma("eta", alpha=f64(priors.eta_alpha), beta=rate, shape=n_groups)
        sigma = pm.Gamma("sigma", alpha=f64(priors.sigma_alpha), beta=f64(priors.sigma_beta))
        gp = pm.gp.Marginal(cov_func=MaskedAdditiveExpQuad(input_dim, ls, eta, W))
        gp.marginal_likelihood("y_obs", X=X, y=y, sigma=sigma, jitter=JITTER)
    return model
