"""The PyMC model of one component GP, and the model NUTS samples.

The PyMC model is the definition (and the tests' reference). NUTS samples the
same density compiled by numba (:mod:`pp_decomp.components.gp.density`,
:mod:`pp_decomp.components.inference.native`), one :class:`ComponentModel` per structure
``(kernel, input_dim, priors)``, shared by every component with that structure
and every refit; only the data are swapped.
"""

from __future__ import annotations

from functools import cached_property

import numpy as np

from pp_decomp.components.gp.density import constants, log_densities
from pp_decomp.components.gp.priors import Priors
from pp_decomp.components.inference.compiled import CompiledModel, compiled
from pp_decomp.components.inference.native import density_model
from pp_decomp.components.posterior.batched import JITTER
from pp_decomp.kernels import pymc_cov


def build_model(kernel: str, input_dim: int, priors: Priors, n: int = 3):
    """The PyMC model ``y ~ MvNormal(0, η² k_ℓ(X, X) + c + (σ² + jitter) I)``.

    ``ℓ_d`` lognormal (dimension-scaled) or inverse gamma, ``η ~ Gamma``,
    ``σ ~ LogNormal`` or ``Gamma`` (``α ~ Gamma`` for ``rq``),
    ``c = mean_sd²`` the integrated constant mean;
    ``X`` (n, d) and ``y`` (n,) are ``pm.Data`` placeholders filled with zeros;
    swap them with ``pm.set_data`` or nutpie's ``with_data``.
    """
    import pymc as pm

    with pm.Model() as model:
        X = pm.Data("X", np.zeros((n, input_dim)))
        y = pm.Data("y", np.zeros(n))
        ls = priors.pymc_ls(input_dim)
        eta = priors.pymc_eta()
        sigma = priors.pymc_sigma()
        alpha = None
        if kernel == "rq":
            alpha = priors.pymc_alpha()
        cov = pymc_cov(kernel, input_dim, ls, eta, alpha)
        if priors.mean_var > 0:  # the constant mean, integrated out
            cov = cov + pm.gp.cov.Constant(priors.mean_var)
        gp = pm.gp.Marginal(cov_func=cov)
        gp.marginal_likelihood("y_obs", X=X, y=y, sigma=sigma, jitter=JITTER)
    return model


class ComponentModel(CompiledModel):
    """A component structure for NUTS: nutpie samples the numba density
    (:mod:`pp_decomp.components.inference.native`), which the PyMC model defines and the
    tests check; nothing is compiled by PyTensor."""

    def __init__(self, kernel: str, input_dim: int, priors: Priors):
        self.kernel, self.input_dim, self.priors = kernel, int(input_dim), priors
        self.label = f"{kernel} GP model (d={self.input_dim})"

    @property
    def value_names(self) -> list[str]:
        rq = ["alpha_log__"] if self.kernel == "rq" else []
        return ["ls_log__", "eta_log__", "sigma_log__", *rq]

    @cached_property
    def prm(self) -> np.ndarray:
        """The density's constants (:func:`~pp_decomp.components.gp.density.constants`)."""
        return constants(self.kernel, self.input_dim, self.priors, self.priors.mean_var)

    @cached_property
    def nutpie_model(self):
        names = [n.removesuffix("_log__") for n in self.value_names]
        sizes = [self.input_dim] + [1] * (len(names) - 1)
        return density_model(
            names,
            sizes,
            self.prm,
            JitteredCenter(self.priors.log_center(self.kernel, self.input_dim)),
        )

    def log_posterior(self, Z: np.ndarray, X: np.ndarray, y: np.ndarray) -> np.ndarray:
        """The log density NUTS samples (Jacobian included) at the rows of ``Z (M, k)``
        (flat unconstrained points), on scaled data ``(X, y)``: (M,)."""
        Z = np.ascontiguousarray(Z, dtype=float)
        return log_densities(Z, np.ascontiguousarray(X), np.ascontiguousarray(y), self.prm)

    def unflatten(self, Z: np.ndarray) -> dict:
        """Flat unconstrained rows ``Z (M, k)`` as one ``(M, ...)`` array per value name."""
        d = self.input_dim
        out = {"ls_log__": Z[:, :d]}
        for i, name in enumerate(self.value_names[1:]):
            out[name] = Z[:, d + i]
        return out


class JitteredCenter:
    """A cold chain's start: the priors' centre plus ``U(-1, 1)`` per coordinate,
    the jitter nutpie gives a PyMC model's initial point; ``seed -> (k,)``."""

    def __init__(self, center: np.ndarray):
        self.center = np.asarray(center, dtype=float)

    def __call__(self, seed) -> np.ndarray:
        rng = np.random.default_rng(seed)
        return self.center + rng.uniform(-1.0, 1.0, self.center.shape)


def compiled_model(kernel: str, input_dim: int, priors: Priors) -> CompiledModel:
    """The shared NUTS model of a component structure (built on first use, then cached)."""
    key = ("component", kernel, int(input_dim), priors)
    return compiled(key, lambda: ComponentModel(kernel, int(input_dim), priors))
