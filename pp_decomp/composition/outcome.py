"""Outcome transforms: the component GPs regress ``t(y_j)``, and ``g`` sees ``t⁻¹``.

A component that is positive and spans orders of magnitude (an attack rate
near 0 where vaccination stops the epidemic and near 0.5 where it does not) is
far from a stationary GP in its own units and close to one on the log scale.
With ``outcome_transform="log"`` every component GP models ``log y_j``, and
the objective is composed as ``g(exp F, x)``: the posterior of each ``y_j`` is
log-normal per hyperparameter draw (positive, skewed), and the Monte Carlo
compositions push its draws through ``g`` as they do any others. The modelled
composition is not linear even where ``g`` is, so the analytic D-GPUCB does not
apply: ``d-gpucb-mc-min`` is the default. This is BoTorch's ``Log`` outcome
transform, for each component of a decomposed model.
"""

from __future__ import annotations

import copy

import numpy as np

from pp_decomp.choices import OUTCOME_TRANSFORMS
from pp_decomp.problem import Problem
from pp_decomp.validate import check_choice


def check_outcome_transform(name):
    """``name`` if it is one of :data:`OUTCOME_TRANSFORMS` (or a tuple of them, one per
    component), else a ValueError naming it."""
    if isinstance(name, tuple | list):
        return tuple(check_choice(n, "outcome_transform", OUTCOME_TRANSFORMS) for n in name)
    return check_choice(name, "outcome_transform", OUTCOME_TRANSFORMS)


def is_identity(name) -> bool:
    """Whether transform ``name`` (or every component's) is ``"none"``."""
    return all(n == "none" for n in ((name,) if isinstance(name, str) else name))


def _per_component(name, J: int) -> tuple:
    return (name,) * J if isinstance(name, str) else tuple(name)


def forward(name: str, Y: np.ndarray, names=None) -> np.ndarray:
    """``t(Y)``: what the component GPs regress, ``(..., J)``.

    Raises a ValueError naming the first component (by ``names``) and value
    outside the transform's domain (``y > 0`` for ``"log"``).
    """
    Y = np.asarray(Y, dtype=float)
    if is_identity(name):
        return Y
    logged = np.array([n == "log" for n in _per_component(name, Y.shape[-1])])
    bad = np.argwhere(~(Y > 0) & logged)
    if len(bad):
        j = int(bad[0][-1])
        label = names[j] if names is not None else f"component {j}"
        value = float(Y[tuple(bad[0])])
        raise ValueError(f"outcome_transform='log' needs positive components; {label} = {value!r}")
    return np.where(logged, np.log(np.where(logged, Y, 1.0)), Y)


def inverse(name: str, F: np.ndarray) -> np.ndarray:
    """``t⁻¹(F)``: the components in their own units, ``(..., J)``."""
    F = np.asarray(F, dtype=float)
    if is_identity(name):
        return F
    logged = np.array([n == "log" for n in _per_component(name, F.shape[-1])])
    return np.where(logged, np.exp(np.where(logged, F, 0.0)), F)


def model_problem(problem: Problem, name: str) -> Problem:
    """The problem as the component GPs see it under transform ``name``.

    Parameters
    ----------
    problem : Problem
        The system, its components in their own units.
    name : {"none", "log"}, or one of them per component

    Returns
    -------
    ``problem`` itself for ``"none"``; else a copy on the same domain,
    components and sign whose ``g`` is ``F ↦ g(t⁻¹(F), x)`` (nonlinear, no
    weights, Lipschitz constants bounded numerically when asked for), without a
    ``components`` function or known kernels: the system is run only through
    ``problem``.
    """
    name = check_outcome_transform(name)
    if is_identity(name):
        return problem
    # a copy, not a new Problem: g was checked on the system's outputs, and a new
    # Problem would check g ∘ t⁻¹ on random values g may not accept
    g, out = problem.g, copy.copy(problem)
    out.g = lambda F, X: g(inverse(name, F), X)
    out.components = out.weights = out.linear = out.lipschitz = out.known_kernels = None
    out.offset = None
    out.metadata = dict(problem.metadata)
    return out
