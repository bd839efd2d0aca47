"""Models built once per structure and reused, and the MAP search shared by every
GP model.

A structure is a key such as ``("component", kernel, input_dim, priors)``; its
model holds the data apart, so every GP and every refit with that structure
shares one nutpie model (for NUTS) and only the data are swapped. Both kinds
sample a density compiled by numba, not a PyMC model compiled by PyTensor
(15-40 s per structure): a component GP's
(:class:`pp_decomp.components.gp.pymc_model.ComponentModel`) and the additive GP's
(:class:`pp_decomp.additive.sampler.AdditiveModel`). MAP fits use objectives
without PyTensor (:mod:`pp_decomp.components.inference.map_objective`,
:class:`pp_decomp.additive.gp.MapObjective`).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np
from scipy import optimize

from pp_decomp.validate import check_positive_int

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


@dataclass
class MapSearch:
    """One model's MAP search with its starts drawn: minimise ``f(z) -> (value,
    gradient)`` by L-BFGS-B within ``bounds`` from each of ``starts``; ``to_draws``
    maps the best ``z`` to the model's draws, ``name`` names the model in errors.

    Each start's search (:meth:`run`) is independent of the others and of other
    models' searches, so :func:`map_searches` may run them on several threads;
    :meth:`best` then picks as a sequential search would.
    """

    f: Callable
    starts: list
    bounds: object
    name: str
    to_draws: Callable | None = None
    data: tuple = ()  # the model-scale data searched on, for the model adopting the result
    memory: int = 10  # L-BFGS-B's corrections kept (scipy's maxcor)

    def run(self, z0):
        """The L-BFGS-B search from ``z0``: scipy's ``OptimizeResult``."""
        return optimize.minimize(
            self.f,
            z0,
            jac=True,
            method="L-BFGS-B",
            bounds=self.bounds,
            options={"maxcor": self.memory},
        )

    def best(self, results=None):
        """The lowest finite result of ``results`` (default: :meth:`run` from every
        start in turn), the first among equals; a RuntimeError naming the model when
        every start failed."""
        results = [self.run(z0) for z0 in self.starts] if results is None else results
        best = None
        for res in results:
            if np.isfinite(res.fun) and (best is None or res.fun < best.fun):
                best = res
        if best is None:
            raise RuntimeError(f"{self.name}: MAP optimisation failed from every start")
        return best


def map_search(f: Callable, starts, bounds, name: str, memory: int = 10):
    """Multi-start L-BFGS-B on ``f(z) -> (value, gradient)``, keeping ``memory``
    corrections; the best finite result.

    Raises a RuntimeError naming the model ``name`` when every start fails.
    """
    memory = check_positive_int(memory, "memory")
    return MapSearch(f, starts, bounds, name, memory=memory).best()


def map_searches(searches: list[MapSearch], workers: int) -> list:
    """Every start of every search in ``searches`` on ``workers`` threads (the
    objectives release the GIL); each search's :meth:`MapSearch.best`, the same
    result as the searches run one after another.

    >>> import numpy as np
    >>> quad = lambda c: MapSearch(lambda z: (float((z - c) @ (z - c)), 2 * (z - c)),
    ...                            [np.zeros(1), np.ones(1)], None, "q")
    >>> [round(float(r.x[0]), 6) for r in map_searches([quad(0.5), quad(2.0)], workers=2)]
    [0.5, 2.0]
    """
    workers = min(check_positive_int(workers, "workers"), sum(len(s.starts) for s in searches))
    if workers <= 1:
        return [s.best() for s in searches]
    with ThreadPoolExecutor(workers, thread_name_prefix="pp_decomp-map") as pool:
        futures = [[pool.submit(s.run, z0) for z0 in s.starts] for s in searches]
        return [s.best([f.result() for f in fs]) for s, fs in zip(searches, futures, strict=True)]


class CompiledModel:
    """One model structure for NUTS: its unconstrained parameters (``value_names``,
    PyMC's ``*_log__`` names, in the order of a flat row) and its nutpie model
    (``nutpie_model``, with ``with_data``), built once per structure by a
    subclass (:class:`~pp_decomp.components.gp.pymc_model.ComponentModel`,
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

    def chain_rows(self, posterior) -> np.ndarray:
        """The flat unconstrained rows of a nutpie run's ``posterior`` group
        (``chain``, ``draw``, ...), chains one after another: (C * D, k)."""
        C, D = posterior.sizes["chain"], posterior.sizes["draw"]
        return self.flatten_rows(
            {n: posterior[n].values.reshape(C * D, -1) for n in self.value_names}
        )


def compiled(key: tuple, make: Callable[[], CompiledModel]) -> CompiledModel:
    """The shared compiled model of structure ``key``: ``make()`` on first use, then cached."""
    with _LOCK:
        if key not in _CACHE:
            _CACHE[key] = make()
        return _CACHE[key]
