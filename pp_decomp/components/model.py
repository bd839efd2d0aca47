"""The PyMC model of one component, compiled once per structure and reused.

A structure is ``(kernel, input_dim, priors)``. Its model holds ``X`` and ``y``
as ``pm.Data``, so every component and every refit with that structure shares
one compiled log-density (for MAP) and one compiled nutpie model (for NUTS);
only the data are swapped (DESIGN.md §5: compiling costs ~15 s, sampling ~1 s).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
import pymc as pm
import pytensor
import pytensor.tensor as pt

from pp_decomp.components.posterior import JITTER
from pp_decomp.components.priors import Priors
from pp_decomp.kernels import pymc_cov

_CACHE: dict[tuple, CompiledComponentModel] = {}
_LOCK = threading.Lock()


def build_model(kind: str, input_dim: int, priors: Priors, n: int = 3) -> pm.Model:
    """The PyMC model ``y ~ MvNormal(0, η² k_ℓ(X, X) + (σ² + jitter) I)``.

    ``X`` (n, d) and ``y`` (n,) are ``pm.Data`` placeholders filled with zeros;
    swap them with ``pm.set_data`` or nutpie's ``with_data``.
    """
    with pm.Model() as model:
        X = pm.Data("X", np.zeros((n, input_dim)))
        y = pm.Data("y", np.zeros(n))
        ls = pm.InverseGamma("ls", alpha=priors.ls_alpha, beta=priors.ls_beta, shape=input_dim)
        eta = pm.Gamma("eta", alpha=priors.eta_alpha, beta=priors.eta_beta)
        sigma = pm.Gamma("sigma", alpha=priors.sigma_alpha, beta=priors.sigma_beta)
        alpha = None
        if kind == "rq":
            alpha = pm.Gamma("alpha", alpha=priors.alpha_alpha, beta=priors.alpha_beta)
        gp = pm.gp.Marginal(cov_func=pymc_cov(kind, input_dim, ls, eta, alpha))
        gp.marginal_likelihood("y_obs", X=X, y=y, sigma=sigma, jitter=JITTER)
    return model


@dataclass
class CompiledComponentModel:
    """One model structure with its compiled MAP objective and nutpie model (lazy)."""

    kind: str
    input_dim: int
    priors: Priors
    model: pm.Model = field(init=False)

    def __post_init__(self):
        self.model = build_model(self.kind, self.input_dim, self.priors)

    @property
    def value_names(self) -> list[str]:
        return [v.name for v in self.model.value_vars]

    @cached_property
    def _logp_dlogp(self):
        # MAP in the unconstrained space without the Jacobian: its optimum is the
        # posterior mode of the constrained parameters.
        logp = self.model.logp(jacobian=False)
        grads = pt.grad(logp, self.model.value_vars)
        return pytensor.function(self.model.value_vars, [logp, *grads], on_unused_input="ignore")

    def search_bounds(self) -> list[tuple[float, float]]:
        """Box for MAP search in the log space: lengthscales and amplitude within
        e^±7 of the unit scale, noise sd down to e^-12 (the prior decides the rest)."""
        box = {
            "ls_log__": (-7.0, 7.0),
            "eta_log__": (-7.0, 5.0),
            "sigma_log__": (-12.0, 3.0),
            "alpha_log__": (-7.0, 7.0),
        }
        return [
            box[n] for n, k in zip(self.value_names, self.sizes(), strict=True) for _ in range(k)
        ]

    def sizes(self) -> list[int]:
        """Length of each unconstrained value, in ``value_names`` order (``d`` for ``ls``)."""
        return [self.input_dim if n == "ls_log__" else 1 for n in self.value_names]

    def logp_and_grad(self, X: np.ndarray, y: np.ndarray):
        """A function ``z -> (-logp, -grad)`` of the flat unconstrained vector ``z``."""
        self.model["X"].set_value(X)
        self.model["y"].set_value(y)
        fn = self._logp_dlogp
        sizes = self.sizes()
        splits = np.cumsum(sizes)[:-1]
        names = self.value_names

        def f(z):
            parts = np.split(z, splits)
            args = [p if n == "ls_log__" else p[0] for p, n in zip(parts, names, strict=True)]
            try:
                out = fn(*args)
            except (ValueError, np.linalg.LinAlgError):
                # K not numerically positive definite here (e.g. repeated inputs with a
                # huge amplitude): a steep finite wall sends the line search back.
                return 1e10 * (1.0 + float(z @ z)), 2e10 * z
            grad = np.concatenate([np.atleast_1d(g) for g in out[1:]])
            return -float(out[0]), -grad

        return f

    @cached_property
    def nutpie_model(self):
        import nutpie

        return nutpie.compile_pymc_model(self.model, backend="numba")


def compiled_model(kind: str, input_dim: int, priors: Priors) -> CompiledComponentModel:
    """The shared compiled model of a structure (built on first use, then cached)."""
    key = (kind, int(input_dim), priors)
    with _LOCK:
        if key not in _CACHE:
            _CACHE[key] = CompiledComponentModel(kind, int(input_dim), priors)
        return _CACHE[key]
