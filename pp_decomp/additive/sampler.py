"""The additive GP's model for NUTS: nutpie samples the numba density of
:mod:`pp_decomp.additive.density`, not a PyTensor graph.

The model is a :class:`~pp_decomp.components.inference.native.NutsModel`, the log
density with its gradient and the expansion of a point into the stored
variables for :func:`nutpie.compiled_pyfunc.from_pyfunc`. The density is
compiled by numba and releases the GIL, so the chains run in parallel; NUTS
samples the log-scale parameters ``z``, so the density adds the transform's
log Jacobian ``Σ z`` and its gradient ``1``.

The data ``X``, ``y`` and the group mask ``W`` are the model's shared data,
swapped by ``with_data``, so one model per ``(M, D, priors, shared)`` serves
every decomposition with ``M`` groups.
"""

from __future__ import annotations

from functools import cached_property, partial

import numba
import numpy as np

from pp_decomp.additive.density import ard_log_posterior, shared_log_posterior
from pp_decomp.additive.objective import MapObjective, prior_center
from pp_decomp.components.gp.priors import Priors
from pp_decomp.components.gp.pymc_model import JitteredCenter
from pp_decomp.components.inference.compiled import CompiledModel
from pp_decomp.components.inference.native import NutsModel


@numba.njit(nogil=True, cache=True)
def _with_jacobian(value, g, grad, z):
    """``value + Σ z`` and ``g + 1`` written to ``grad``: ``(value, grad)``;
    ``(-inf, 0)`` where either is not finite (``K`` not positive definite)."""
    finite = np.isfinite(value)
    for k in range(grad.shape[0]):
        grad[k] = g[k] + 1.0
        value += z[k]
        finite = finite and np.isfinite(g[k])
    if not finite:
        grad[:] = 0.0
        return -np.inf, grad
    return value, grad


@numba.njit(nogil=True, cache=True)
def _shared_logp(G, y, prm, grad, z):
    value, g = shared_log_posterior(z, G, y, prm)
    return _with_jacobian(value, g, grad, z)


@numba.njit(nogil=True, cache=True)
def _ard_logp(d2, W, y, prm, grad, z):
    value, g = ard_log_posterior(z, d2, W, y, prm)
    return _with_jacobian(value, g, grad, z)


def _chain_logp(X, y, W, *, priors: Priors, shared: bool, k: int):
    """One chain's ``z -> (value, gradient (k,))`` on ``(X, y, W)``, its data
    terms computed once, its gradient buffer its own."""
    args = MapObjective(X, y, W, priors, shared=shared).density_args()
    return partial(_shared_logp if shared else _ard_logp, *args, np.zeros(k))


class _Expand:
    """One chain's ``z -> {value names: z's parts, ls (D,), eta (M,), sigma}``, a
    shared lengthscale and amplitude repeated. The values are views of buffers
    of its own, refilled at every call (nutpie copies them at once)."""

    def __init__(self, names, shapes, sizes, D: int, M: int, shared: bool):
        self.z, self.e = np.empty(sum(sizes)), np.empty(sum(sizes))
        self.ls, self.eta, self.shared = np.empty(D), np.empty(M), shared
        ends = np.cumsum(sizes)
        parts = zip(names, shapes, sizes, ends, strict=True)
        self.out = {n: self.z[e - s : e].reshape(shape) for n, shape, s, e in parts}
        if not shared:
            self.ls, self.eta = self.e[:D], self.e[D : D + M]
        self.out.update(ls=self.ls, eta=self.eta, sigma=self.e[-1:].reshape(()))

    def __call__(self, z: np.ndarray) -> dict:
        np.copyto(self.z, z)
        np.exp(z, out=self.e)
        if self.shared:
            self.ls.fill(self.e[0])
            self.eta.fill(self.e[1])
        return self.out


class AdditiveModel(CompiledModel):
    """One additive structure for NUTS: ``M`` groups over ``D`` inputs under
    ``priors``, ``shared`` or ARD hyperparameters (see :class:`~pp_decomp.additive.gp.AdditiveGP`).

    Unconstrained parameters ``z = (log ℓ (D or 1), log η (M or 1), log σ)``;
    stored variables ``ls (D,)``, ``eta (M,)``, ``sigma`` and the log-scale ones.
    """

    def __init__(self, n_groups: int, input_dim: int, priors: Priors, shared: bool):
        self.M, self.D, self.priors, self.shared = int(n_groups), int(input_dim), priors, shared
        what = f"{self.M} groups, D={self.D}{', shared' if shared else ''}"
        self.label = f"additive GP model ({what})"

    @property
    def value_names(self) -> list[str]:
        if self.shared:
            return ["ls_shared_log__", "eta_shared_log__", "sigma_log__"]
        return ["ls_log__", "eta_log__", "sigma_log__"]

    @property
    def sizes(self) -> list[int]:
        """Entries of each unconstrained parameter, in :attr:`value_names`' order."""
        return [1, 1, 1] if self.shared else [self.D, self.M, 1]

    def unflatten(self, Z: np.ndarray) -> dict:
        """Flat unconstrained rows ``Z (S, k)`` as one ``(S, ...)`` array per value name."""
        ends = np.cumsum(self.sizes)
        parts = np.split(np.asarray(Z, dtype=float), ends[:-1], axis=1)
        return {
            n: p if n == "ls_log__" or n == "eta_log__" else p[:, 0]
            for n, p in zip(self.value_names, parts, strict=True)
        }

    def _expanded(self) -> tuple[list[str], list[tuple[int, ...]]]:
        free = [
            (s,) if n in ("ls_log__", "eta_log__") else ()
            for n, s in zip(self.value_names, self.sizes, strict=True)
        ]
        names = [*self.value_names, "ls", "eta", "sigma"]
        shapes = [*free, (self.D,), (self.M,), ()]
        return names, shapes

    @cached_property
    def nutpie_model(self) -> NutsModel:
        """The NUTS model, on data ``X (n, D)``, ``y (n,)`` and masks ``W (M, D)``."""
        names, shapes = self._expanded()
        k, D, M = int(sum(self.sizes)), self.D, self.M
        return NutsModel(
            ndim=k,
            make_logp=partial(_chain_logp, priors=self.priors, shared=self.shared, k=k),
            make_expand=partial(_Expand, names[:3], shapes[:3], self.sizes, D, M, self.shared),
            names=tuple(names),
            shapes=tuple(shapes),
            shared_data={"X": np.zeros((3, D)), "y": np.zeros(3), "W": np.ones((M, D))},
            initial_point=JitteredCenter(prior_center(self.priors, M, *self.sizes[:2])),
        )
