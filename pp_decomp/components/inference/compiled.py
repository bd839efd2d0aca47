"""Models built once per structure and reused, and the MAP search shared by every
GP model.

A structure is a key such as ``("component", kernel, input_dim, priors)``; its
model holds the data apart, so every GP and every refit with that structure
shares one nutpie model (for NUTS) and only the data are swapped. Both kinds
sample a density compiled by numba, not a PyMC model compiled by PyTensor
(15-40 s per structure): a component GP's
(:class:`pp_decomp.components.model.pymc_model.ComponentModel`) and the additive GP's
(:class:`pp_decomp.additive.sampler.AdditiveModel`). MAP fits use objectives
without PyTensor (:mod:`pp_decomp.components.inference.map_objective`,
:class:`pp_decomp.additive.gp.MapObjective`).
"""

from __future__ import annotations

import threading
from collections.abc import Callable

import numpy as np
from scipy import optimize

_CACHE: dict[tuple, CompiledModel] = {}
_LOCK = threading.Lock()

# MAP search box in the log space: lengthscales and amplitudes within e^±7 of
# the unit scale, noise sd down to e^-12 (the prior decides the rest)
SEARCH_BOX = {
    "ls_log__": (-7.0, 7.0),
    "eta_log__": (-7.0, 5.0),
    "sigma_log__": (-12.0, 3.0),
    "alpha_log__": (-7.0, 7.0),
}


def penalty(z: np.ndarray) -> tuple[float, np.ndarray]:
    """Objective and gradient where ``K`` is not numerically positive definite.

    A steep finite wall (e.g. repeated inputs with a huge amplitude) sends the
    line search back instead of stopping it.
    """
    return 1e10 * (1.0 + float(z @ z)), 2e10 * z


def map_search(f: Callable, starts, bounds, name: str):
    """Multi-start L-BFGS-B on ``f(z) -> (value, gradient)``; the best finite result.

    Raises a RuntimeError naming the model ``name`` when every start fails.
    """
    best = None
    for z0 in starts:
        res = optimize.minimize(f, z0, jac=True, method="L-BFGS-B", bounds=bounds)
        if np.isfinite(res.fun) and (best is None or res.fun < best.fun):
            best = res
    if best is None:
        raise RuntimeError(f"{name}: MAP optimisation failed from every start")
    return best


class CompiledModel:
    """One model structure for NUTS: its unconstrained parameters (``value_names``,
    PyMC's ``*_log__`` names, in the order of a flat row) and its nutpie model
    (``nutpie_model``, with ``with_data``), built once per structure by a
    subclass (:class:`~pp_decomp.components.model.pymc_model.ComponentModel`,
    :class:`~pp_decomp.additive.sampler.AdditiveModel`)."""

    label = "model"

    @property
    def value_names(self) -> list[str]:
        raise NotImplementedError

    def flatten_rows(self, parts: dict) -> np.ndarray:
        """One flat row per draw from one ``(S, ...)`` array per value name: (S, k)."""
        rows = [np.asarray(parts[n], dtype=float) for n in self.value_names]
        S = len(rows[0])
        return np.column_stack([r.reshape(S, -1) for r in rows])


def compiled(key: tuple, make: Callable[[], CompiledModel]) -> CompiledModel:
    """The shared compiled model of structure ``key``: ``make()`` on first use, then cached."""
    with _LOCK:
        if key not in _CACHE:
            _CACHE[key] = make()
        return _CACHE[key]
