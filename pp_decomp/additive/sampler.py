"""The additive GP's model for NUTS: nutpie samples the numba density of
:mod:`pp_decomp.additive.density`, not a PyTensor graph.

nutpie samples a Python model through two callables, the log density with its
gradient and the expansion of a point into the stored variables
(:func:`nutpie.compiled_pyfunc.from_pyfunc`). The density is compiled by numba
and releases the GIL, so the chains run in parallel; NUTS samples the
log-scale parameters ``z``, so the density adds the transform's log Jacobian
``Σ z`` and its gradient ``1``.

Before, nutpie compiled the PyMC model (:func:`~pp_decomp.additive.model.build_additive_model`)
by numba through PyTensor: 15-40 s once per structure, and a gradient built
from ``(n, n, D)`` tensors. On the D = 24 Kandasamy function its refits took
27-608 s at 40-130 observations beside other runs
(``benchmarks/additive_nuts_speed.py`` times both on one dataset).

The data ``X``, ``y`` and the group mask ``W`` are the model's shared data,
swapped by ``with_data`` as nutpie's own models do, so one model per
``(M, D, priors, shared)`` serves every decomposition with ``M`` groups.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property

import numpy as np
from nutpie.compiled_pyfunc import PyFuncModel, from_pyfunc

from pp_decomp.additive.density import ard_log_posterior, shared_log_posterior
from pp_decomp.components.compiled import CompiledModel
from pp_decomp.components.model import JitteredCenter
from pp_decomp.components.priors import Priors


@dataclass(frozen=True)
class StartableModel(PyFuncModel):
    """A :class:`PyFuncModel` whose chains' initial points can be replaced by
    ``dataclasses.replace(model, initial_point_func=f)``, as for the component
    GPs' models (:class:`~pp_decomp.components.nuts.StartAtDraws`)."""

    initial_point_func: Callable | None = None

    def _make_model(self, init_mean):
        if self.initial_point_func is None:
            return super()._make_model(init_mean)
        started = dataclasses.replace(
            self, _make_initial_points=self.initial_point_func, initial_point_func=None
        )
        return started._make_model(init_mean)


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
    def nutpie_model(self) -> StartableModel:
        from pp_decomp.additive.gp import MapObjective, prior_center, unpack_rows

        priors, shared, D, M = self.priors, self.shared, self.D, self.M
        density = shared_log_posterior if shared else ard_log_posterior
        names, shapes = self._expanded()
        sizes = self.sizes

        def make_logp_fn():
            built: list = []  # the sampler's data terms, computed on its first call

            def logp(z, X, y, W):
                if not built:
                    built.append(MapObjective(X, y, W, priors, shared=shared).density_args())
                value, grad = density(z, *built[0])
                if not (np.isfinite(value) and np.all(np.isfinite(grad))):
                    return -np.inf, np.zeros_like(z)  # K not positive definite: rejected
                return float(value + z.sum()), grad + 1.0  # the log transform's Jacobian

            return logp

        def make_expand_fn(seed1, seed2, chain):
            def expand(z, X, y, W):
                ls, eta, sigma = unpack_rows(z, D, M, shared)
                values = [*np.split(z, np.cumsum(sizes)[:-1]), ls[0], eta[0], sigma[0]]
                return {
                    n: np.asarray(a, dtype=float).reshape(s)
                    for n, a, s in zip(names, values, shapes, strict=True)
                }

            return expand

        model = from_pyfunc(
            ndim=int(sum(self.sizes)),
            make_logp_fn=make_logp_fn,
            make_expand_fn=make_expand_fn,
            expanded_dtypes=[np.dtype("float64")] * len(names),
            expanded_shapes=shapes,
            expanded_names=names,
            shared_data={"X": np.zeros((3, D)), "y": np.zeros(3), "W": np.ones((M, D))},
            make_initial_point_fn=JitteredCenter(prior_center(priors, M, *sizes[:2])),
        )
        fields = {f.name: getattr(model, f.name) for f in dataclasses.fields(model)}
        return StartableModel(**fields)
