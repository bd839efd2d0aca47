"""Classic test functions of Contal et al. (2014), as single-component problems (maximised).

* ``branin``: negated Branin-Hoo on ``[-5, 10] x [0, 15]``; max ``-0.397887`` (3 maximisers).
* ``goldstein-price``: negated Goldstein-Price on ``[-2, 2]²``; max ``-3`` at ``(0, -1)``.
* ``himmelblau``: negated Himmelblau tilted by a linear term, ``-(H(x, y) + 0.5 x)``,
  on ``[-5, 5]²``; four peaks, one global maximum (the paper does not print its
  tilt; ``0.5 x`` is this module's choice).

The Gaussian mixture, the generated GPs and the paper's protocol (the
functions on a finite search set, kernels fitted beforehand on half of it)
are in :mod:`pp_decomp.models.contal`.

Each has ``J = 1`` component (the function itself) and ``g = f_1``, so
decomposed and composed strategies coincide; the decomposition does not matter
on these, they test the optimisation machinery and the baselines.
"""

from __future__ import annotations

import numpy as np
from scipy import optimize

from pp_decomp.components import KnownKernels
from pp_decomp.problem import Problem
from pp_decomp.space import Box, CandidateSet

SOURCE = "Contal et al. 2014, Sec. 5 (classic test functions)"


def branin(X):
    """Branin-Hoo function at ``X (n, 2)``; minimum 0.397887 at three points."""
    x, y = X[:, 0], X[:, 1]
    b, c, t = 5.1 / (4 * np.pi**2), 5 / np.pi, 1 / (8 * np.pi)
    return (y - b * x**2 + c * x - 6) ** 2 + 10 * (1 - t) * np.cos(x) + 10


def goldstein_price(X):
    """Goldstein-Price function at ``X (n, 2)``; minimum 3 at ``(0, -1)``."""
    x, y = X[:, 0], X[:, 1]
    a = 1 + (x + y + 1) ** 2 * (19 - 14 * x + 3 * x**2 - 14 * y + 6 * x * y + 3 * y**2)
    b = 30 + (2 * x - 3 * y) ** 2 * (18 - 32 * x + 12 * x**2 + 48 * y - 36 * x * y + 27 * y**2)
    return a * b


def himmelblau_tilted(X):
    """Himmelblau's function plus ``0.5 x`` at ``X (n, 2)``, so one of its four minima is global."""
    x, y = X[:, 0], X[:, 1]
    return (x**2 + y - 11) ** 2 + (x + y**2 - 7) ** 2 + 0.5 * x


def _box_optimum(fn, box: Box, starts) -> float:
    """Max of ``-fn`` by L-BFGS-B from ``starts`` (thorough local search from known basins)."""
    best = -np.inf
    for x0 in starts:
        res = optimize.minimize(
            lambda z: fn(z[None])[0],
            x0,
            method="L-BFGS-B",
            bounds=list(zip(box.lower, box.upper, strict=True)),
            options={"ftol": 1e-15, "gtol": 1e-12},
        )
        best = max(best, -float(res.fun))
    return best


def _single(name, domain, fn, optimum, description, *, noise_sd=0.0, known=None):
    return Problem(
        domain=domain,
        components=lambda X: fn(np.asarray(X, dtype=float))[:, None],
        n_components=1,
        weights=np.ones(1),
        lipschitz=np.ones(1),
        maximize=True,
        noise_sd=noise_sd,
        known_kernels=known,
        optimum=optimum,
        name=name,
        component_names=["f"],
        description=description,
        metadata={"source": SOURCE},
    )


def _grid_starts(box: Box, k: int = 12):
    axes = [np.linspace(lo, hi, k) for lo, hi in zip(box.lower, box.upper, strict=True)]
    return np.stack(np.meshgrid(*axes), -1).reshape(-1, box.dim)


def branin_problem(seed: int = 0) -> Problem:
    """Maximise the negated Branin-Hoo function on ``[-5, 10] x [0, 15]`` (Contal et al. 2014)."""
    box = Box([-5.0, 0.0], [10.0, 15.0])
    opt = _box_optimum(branin, box, _grid_starts(box))
    return _single("branin", box, lambda X: -branin(X), opt, "negated Branin-Hoo, 2-D")


def goldstein_price_problem(seed: int = 0) -> Problem:
    """Maximise the negated Goldstein-Price function on ``[-2, 2]²`` (Contal et al. 2014)."""
    box = Box([-2.0, -2.0], [2.0, 2.0])
    opt = _box_optimum(goldstein_price, box, _grid_starts(box))
    return _single(
        "goldstein-price", box, lambda X: -goldstein_price(X), opt, "negated Goldstein-Price, 2-D"
    )


def himmelblau_problem(seed: int = 0) -> Problem:
    """Maximise the negated tilted Himmelblau function on ``[-5, 5]²`` (Contal et al. 2014)."""
    box = Box([-5.0, -5.0], [5.0, 5.0])
    opt = _box_optimum(himmelblau_tilted, box, _grid_starts(box))
    return _single(
        "himmelblau",
        box,
        lambda X: -himmelblau_tilted(X),
        opt,
        "negated Himmelblau tilted by 0.5x, 2-D, one global of four peaks",
    )


def candidate_problem(
    name: str,
    X: np.ndarray,
    values: np.ndarray,
    description: str,
    *,
    noise_sd: float = 0.0,
    known: KnownKernels | None = None,
) -> Problem:
    """One component known at the candidate points ``X (N, d)`` only, ``values (N,)``
    maximised, with observation noise ``noise_sd`` and optionally its known kernel.

    >>> import numpy as np
    >>> p = candidate_problem("two", np.array([[0.0], [1.0]]), np.array([1.0, 2.0]), "two points")
    >>> p.optimum, float(p.evaluate(np.array([[1.0]]))[0, 0])
    (2.0, 2.0)
    """
    lookup = {tuple(x): v for x, v in zip(X, values, strict=True)}

    def fn(Z):
        try:
            return np.array([lookup[tuple(z)] for z in Z])
        except KeyError as err:
            raise ValueError(f"{name}: {err.args[0]} is not a candidate point") from err

    return _single(
        name, CandidateSet(X), fn, float(values.max()), description, noise_sd=noise_sd, known=known
    )
