"""Models built once per structure and reused, and the MAP search shared by every
GP model.

A structure is a key such as ``("component", kernel, input_dim, priors)``; its
model holds the data apart, so every GP and every refit with that structure
shares one nutpie model (for NUTS) and only the data are swapped. A component
GP's is its compiled density (:class:`pp_decomp.components.model.ComponentModel`,
no compiling beyond numba's one-off); the additive GP's is its PyMC model
compiled by nutpie (:class:`CompiledModel`, ~15-40 s once per process). MAP fits
use objectives without PyTensor (:mod:`pp_decomp.components.map_objective`,
:class:`pp_decomp.additive.gp.MapObjective`).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from functools import cached_property

import numpy as np
from scipy import optimize

from pp_decomp._progress import one_off
from pp_decomp._quiet import quiet_third_party

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
    """One PyMC model structure with its nutpie model, compiled by nutpie (lazy).

    Parameters
    ----------
    builder : callable returning a ``pm.Model`` with ``pm.Data`` placeholders
    """

    def __init__(self, builder: Callable, label: str = "model"):
        self.model = builder()
        self.label = label

    @property
    def value_names(self) -> list[str]:
        return [v.name for v in self.model.value_vars]

    def flatten_rows(self, parts: dict) -> np.ndarray:
        """One flat row per draw from one ``(S, ...)`` array per value name: (S, k)."""
        rows = [np.asarray(parts[n], dtype=float) for n in self.value_names]
        S = len(rows[0])
        return np.column_stack([r.reshape(S, -1) for r in rows])

    @cached_property
    def nutpie_model(self):
        import nutpie

        what = f"compiling the {self.label} for NUTS with nutpie (once per process, ~15-40 s)"
        with quiet_third_party(), one_off(what):
            return nutpie.compile_pymc_model(self.model, backend="numba")


def compiled(key: tuple, make: Callable[[], CompiledModel]) -> CompiledModel:
    """The shared compiled model of structure ``key``: ``make()`` on first use, then cached."""
    with _LOCK:
        if key not in _CACHE:
            _CACHE[key] = make()
        return _CACHE[key]
