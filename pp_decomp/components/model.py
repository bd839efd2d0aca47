"""The PyMC model of one component GP, and its shared compiled form.

A structure is ``(kernel, input_dim, priors)``; its model holds ``X`` and ``y``
as ``pm.Data``, so every component with that structure shares one compiled
model (:mod:`pp_decomp.components.compiled`).
"""

from __future__ import annotations

import numpy as np

from pp_decomp.components.compiled import CompiledModel, compiled
from pp_decomp.components.posterior import JITTER
from pp_decomp.components.priors import Priors
from pp_decomp.kernels import pymc_cov


def build_model(kernel: str, input_dim: int, priors: Priors, n: int = 3):
    """The PyMC model ``y ~ MvNormal(0, η² k_ℓ(X, X) + c + (σ² + jitter) I)``.

    ``ℓ_d`` lognormal (dimension-scaled) or inverse gamma, ``η ~ Gamma``,
    ``σ ~ Gamma`` (``α ~ Gamma`` for ``rq``),
    ``c = mean_sd²`` the integrated constant mean;
    ``X`` (n, d) and ``y`` (n,) are ``pm.Data`` placeholders filled with zeros;
    swap them with ``pm.set_data`` or nutpie's ``with_data``.
    """
    import pymc as pm

    with pm.Model() as model:
        X = pm.Data("X", np.zeros((n, input_dim)))
        y = pm.Data("y", np.zeros(n))
        ls = priors.pymc_ls(input_dim)
        eta = pm.Gamma("eta", alpha=priors.eta_alpha, beta=priors.eta_beta)
        sigma = priors.pymc_sigma()
        alpha = None
        if kernel == "rq":
            alpha = pm.Gamma("alpha", alpha=priors.alpha_alpha, beta=priors.alpha_beta)
        cov = pymc_cov(kernel, input_dim, ls, eta, alpha)
        if priors.mean_var > 0:  # the constant mean, integrated out
            cov = cov + pm.gp.cov.Constant(priors.mean_var)
        gp = pm.gp.Marginal(cov_func=cov)
        gp.marginal_likelihood("y_obs", X=X, y=y, sigma=sigma, jitter=JITTER)
    return model


def compiled_model(kernel: str, input_dim: int, priors: Priors) -> CompiledModel:
    """The shared compiled model of a component structure."""
    key = ("component", kernel, int(input_dim), priors)
    label = f"{kernel} GP model (d={int(input_dim)})"
    return compiled(key, lambda: build_model(kernel, int(input_dim), priors), label)
