"""PyMC models compiled once per structure and reused, and the MAP search shared by
every GP model.

A structure is a key such as ``("component", kernel, input_dim, priors)``. Its
model holds the data as ``pm.Data``, so every GP and every refit with that
structure shares one compiled log-density (for MAP) and one compiled nutpie
model (for NUTS); only the data are swapped (compiling costs ~15 s, sampling ~1 s).
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
    """One model structure with its compiled MAP objective and nutpie model (lazy).

    Parameters
    ----------
    builder : callable returning a ``pm.Model`` with ``pm.Data`` placeholders
    """

    def __init__(self, builder: Callable, label: str = "model"):
        self.model = builder()
        self.label = label
        # the compiled logp's data are shared state: one MAP search at a time
        self.lock = threading.Lock()

    @property
    def value_names(self) -> list[str]:
        return [v.name for v in self.model.value_vars]

    @cached_property
    def shapes(self) -> dict[str, tuple]:
        """Shape of each unconstrained value (``()`` for scalars), by value name."""
        point = self.model.initial_point()
        return {n: np.shape(point[n]) for n in self.value_names}

    def sizes(self) -> list[int]:
        """Length of each unconstrained value, in ``value_names`` order."""
        return [int(np.prod(self.shapes[n])) for n in self.value_names]

    def search_bounds(self, box: dict | None = None) -> list[tuple[float, float]]:
        """Per-coordinate bounds of the flat unconstrained vector (:data:`SEARCH_BOX`)."""
        box = SEARCH_BOX if box is None else box
        return [
            box[n] for n, k in zip(self.value_names, self.sizes(), strict=True) for _ in range(k)
        ]

    def flatten(self, parts: dict) -> np.ndarray:
        """The flat unconstrained vector from one array per value name."""
        return np.concatenate([np.atleast_1d(parts[n]).astype(float) for n in self.value_names])

    def split(self, z: np.ndarray) -> dict:
        """Inverse of :meth:`flatten`."""
        parts = np.split(z, np.cumsum(self.sizes())[:-1])
        return dict(zip(self.value_names, parts, strict=True))

    @cached_property
    def _logp_dlogp(self):
        import pytensor
        import pytensor.tensor as pt

        # MAP in the unconstrained space without the Jacobian: its optimum is the
        # posterior mode of the constrained parameters.
        logp = self.model.logp(jacobian=False)
        grads = pt.grad(logp, self.model.value_vars)
        what = f"compiling the {self.label} for MAP (once per process)"
        with quiet_third_party(), one_off(what):
            return pytensor.function(
                self.model.value_vars, [logp, *grads], on_unused_input="ignore"
            )

    def logp_and_grad(self, **data):
        """A function ``z -> (-logp, -grad)`` of the flat unconstrained vector ``z``,
        with the model's data set to ``data`` (call under :attr:`lock`)."""
        for name, value in data.items():
            self.model[name].set_value(value)
        fn, shapes = self._logp_dlogp, self.shapes
        splits = np.cumsum(self.sizes())[:-1]

        def f(z):
            parts = np.split(z, splits)
            args = [p.reshape(shapes[n]) for n, p in zip(shapes, parts, strict=True)]
            try:
                out = fn(*args)
            except (ValueError, np.linalg.LinAlgError):
                return penalty(z)
            grad = np.concatenate([np.atleast_1d(g) for g in out[1:]])
            return -float(out[0]), -grad

        return f

    @cached_property
    def nutpie_model(self):
        import nutpie

        what = f"compiling the {self.label} for NUTS with nutpie (once per process, ~15-40 s)"
        with quiet_third_party(), one_off(what):
            return nutpie.compile_pymc_model(self.model, backend="numba")


def compiled(key: tuple, builder: Callable, label: str = "model") -> CompiledModel:
    """The shared compiled model of structure ``key`` (built on first use, then cached)."""
    with _LOCK:
        if key not in _CACHE:
            _CACHE[key] = CompiledModel(builder, label)
        return _CACHE[key]
