"""The Mackey-Glass system as a 6-D black box (Contal et al. 2014, Sec. 5).

The delay-differential equation (Mackey & Glass 1977), in its chaotic regime

``dx/dt = β x(t-τ) / (1 + x(t-τ)^n) - γ x(t)``,  ``β = 0.2, γ = 0.1, n = 10, τ = 17``,

is integrated from the constant history ``x(t) = 1.2`` (``t <= 0``) by the
classical Runge-Kutta scheme with step ``h = 0.1`` (so ``τ`` is 170 steps); the
delayed value at a half step is the mean of its two grid neighbours. The first
1000 time units are dropped as transient and ``x`` is kept at unit times.

A point is the delay vector ``z(t) = (x(t), x(t-6), ..., x(t-30))`` (embedding
dimension 6, lag 6), and its value is the series 85 time units ahead,
``f(z(t)) = x(t + 85)``: on the attractor (dimension about 2.1) a 6-D delay
vector fixes the state, so ``f`` is a function of ``z``, and at 85 steps ahead a
chaotic one. The problem is the finite set of ``n_points`` delay vectors at
random times of a 20 000-unit run (the seed picks them), maximised without
noise; its optimum is the largest value in the set. Why this reading of the
paper's one sentence: :doc:`/design` ("Mackey-Glass").

>>> from pp_decomp.models.mackey_glass import mackey_glass
>>> p = mackey_glass(seed=0, n_points=200)
>>> p.dim, p.domain.size
(6, 200)
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from pp_decomp.models.classic import candidate_problem
from pp_decomp.models.contal import fitted_on_half
from pp_decomp.problem import Problem
from pp_decomp.validate import check_positive, check_positive_int

BETA, GAMMA, TAU = 0.2, 0.1, 17.0  # the exponent n = 10 is in _rate
STEP = 0.1
MIN_STEP = 1e-3  # 20 000 units at a finer step would take hours of Python
TRANSIENT = 1000
LENGTH = 20_000
LAG, EMBEDDING, HORIZON = 6, 6, 85


def _rate(x, delayed):
    # x**10 by multiplications: libm's pow may differ in its last bits between
    # machines, and the chaotic series would carry that difference everywhere.
    d2 = delayed * delayed
    d4 = d2 * d2
    return BETA * delayed / (1.0 + d4 * d4 * d2) - GAMMA * x


def mackey_glass_series(
    length: int = LENGTH, transient: int = TRANSIENT, step: float = STEP
) -> np.ndarray:
    """``x(t)`` at the unit times ``t = 0, ..., length - 1`` after ``transient`` units, (length,),
    integrated with step ``step`` (at least 0.001; ``1 / step`` and ``τ / step`` whole
    numbers). Read-only, cached.

    >>> x = mackey_glass_series(50, transient=10)
    >>> x.shape
    (50,)
    """
    length = check_positive_int(length, "length")
    transient = check_positive_int(transient, "transient", minimum=0)
    step = check_positive(step, "step")
    if step < MIN_STEP:
        raise ValueError(f"step must be at least {MIN_STEP:g}; got {step}")
    per_unit, lag = round(1 / step), round(TAU / step)
    if not (np.isclose(per_unit * step, 1.0) and np.isclose(lag * step, TAU)):
        raise ValueError(
            f"step must divide 1 and tau = {TAU:g} a whole number of times; got {step}"
        )
    return _series(length, transient, per_unit, lag)


@lru_cache(maxsize=2)
def _series(length: int, transient: int, per_unit: int, lag: int) -> np.ndarray:
    n = (transient + length) * per_unit
    x = np.empty(lag + n + 1)
    x[: lag + 1] = 1.2  # the constant history up to t = 0
    xs = x.tolist()  # a scalar loop on a list: 20x faster than on an array
    h = 1.0 / per_unit
    for k in range(lag, lag + n):
        d0, d1 = xs[k - lag], xs[k - lag + 1]
        dh = 0.5 * (d0 + d1)
        xk = xs[k]
        k1 = _rate(xk, d0)
        k2 = _rate(xk + 0.5 * h * k1, dh)
        k3 = _rate(xk + 0.5 * h * k2, dh)
        k4 = _rate(xk + h * k3, d1)
        xs[k + 1] = xk + h / 6.0 * (k1 + 2 * k2 + 2 * k3 + k4)
    units = np.asarray(xs)[lag::per_unit]
    out = units[transient : transient + length].copy()
    out.setflags(write=False)
    return out


def delay_vectors(series: np.ndarray, times: np.ndarray) -> np.ndarray:
    """``z(t) = (x(t), x(t - 6), ..., x(t - 30))`` for each of ``times``, (n, 6)."""
    return np.stack([series[times - LAG * i] for i in range(EMBEDDING)], axis=1)


def mackey_glass(seed: int = 0, n_points: int = 1000, known_kernels: bool = False) -> Problem:
    """Maximise ``x(t + 85)`` over ``n_points`` Mackey-Glass delay vectors ``z(t)`` (6-D).

    ``known_kernels=True`` attaches an SE kernel fitted by MAP on a random half
    of the points, Contal et al.'s protocol, for ``inference="fixed"``.
    """
    seed = check_positive_int(seed, "seed", minimum=0)
    n = check_positive_int(n_points, "n_points", minimum=2)
    first, last = LAG * (EMBEDDING - 1), LENGTH - HORIZON
    if n > last - first:
        raise ValueError(f"n_points must be at most {last - first}; got {n_points}")
    series = mackey_glass_series()
    rng = np.random.default_rng(np.random.SeedSequence([seed, 6]))
    times = np.sort(rng.choice(np.arange(first, last), size=n, replace=False))
    X, f = delay_vectors(series, times), series[times + HORIZON]
    return candidate_problem(
        "mackey-glass-known" if known_kernels else "mackey-glass",
        X,
        f,
        f"Mackey-Glass x(t+{HORIZON}) over {n} delay vectors (dim {EMBEDDING}, lag {LAG})",
        known=fitted_on_half(X, f, seed) if known_kernels else None,
    )
