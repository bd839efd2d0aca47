"""The MAP objective of a component GP: the compiled density without the Jacobian.

The negative log posterior of :func:`pp_decomp.components.gp.pymc_model.build_model`
and its gradient as a function of the log-scale hyperparameters, evaluated by
:func:`pp_decomp.components.gp.density.log_density` (numba): no graph to compile
before the first fit, and no per-call overhead on the small ``n`` of an
optimisation loop, where the L-BFGS-B search would otherwise spend its time.
The tests check this objective against the PyMC model's compiled log density.
"""

from __future__ import annotations

import numpy as np

from pp_decomp.components.gp.density import constants, log_density
from pp_decomp.components.gp.priors import Priors
from pp_decomp.components.inference.compiled import SEARCH_BOX, penalty
from pp_decomp.components.posterior.draws import HyperDraws


class GPMapObjective:
    """``z -> (-log p(θ | y), -∇)`` of one component GP, ``z = (log ℓ (d), log η, log σ[, log α])``.

    The log priors of :class:`Priors` enter without the log transform's
    Jacobian, so the minimum is the posterior mode of the constrained
    parameters, as for the compiled PyMC objective it replaces. The formulas are
    in :mod:`pp_decomp.components.gp.density`.

    Parameters
    ----------
    kernel : ``"se"``, ``"matern52"``, ``"matern32"`` or ``"rq"``
    X : (n, d) unit-scaled inputs
    y : (n,) standardised outputs
    priors : Priors
    mean_var : float, the constant added to the kernel
    """

    def __init__(self, kernel: str, X, y, priors: Priors, mean_var: float):
        self.kernel = kernel
        self.X = np.ascontiguousarray(X, dtype=float)
        self.y = np.ascontiguousarray(y, dtype=float)
        self.n, self.d = self.X.shape
        self.prm = constants(kernel, self.d, priors, float(mean_var))

    @property
    def size(self) -> int:
        """Length of ``z``."""
        return self.d + 2 + (self.kernel == "rq")

    def bounds(self) -> list[tuple[float, float]]:
        """The search box of ``z`` (:data:`SEARCH_BOX`)."""
        box = SEARCH_BOX
        extra = [box["alpha_log__"]] if self.kernel == "rq" else []
        return [box["ls_log__"]] * self.d + [box["eta_log__"], box["sigma_log__"], *extra]

    def __call__(self, z) -> tuple[float, np.ndarray]:
        z = np.ascontiguousarray(z, dtype=float)
        value, grad = log_density(z, self.X, self.y, self.prm, False)
        if not np.isfinite(value):  # K not numerically positive definite
            return penalty(z)
        return -value, -grad


def map_problem(gp, Xs, ys, restarts: int, rng, init):
    """Objective (:class:`GPMapObjective`), starts and search box of a built-in
    ``ComponentGP``'s MAP fit, and ``z -> HyperDraws``: one start at the prior's
    centre (or at ``init``), the rest drawn from the prior."""
    p, d, kernel = gp.priors, gp.input_dim, gp.kernel
    objective = GPMapObjective(kernel, Xs, ys, p, gp.mean_var)
    rq = kernel == "rq"
    if init is not None:
        start = [np.log(getattr(init, n)).mean(0) for n in gp.hyper_names()]
        starts = [np.concatenate([np.atleast_1d(part) for part in start])]
    else:
        starts = [p.log_center(kernel, d)]
    for _ in range(restarts - 1):
        draw = [p.sample_log_ls(rng, d), [np.log(rng.gamma(p.eta_alpha) / p.eta_beta)]]
        draw.append([p.sample_log_sigma(rng)])
        # drawn whatever the kernel, so the other draws do not depend on it
        alpha = np.log(rng.gamma(p.alpha_alpha) / p.alpha_beta)
        starts.append(np.concatenate(draw + ([[alpha]] if rq else [])))

    def to_draws(z):
        v = np.exp(z)
        return HyperDraws(
            ls=v[None, :d],
            eta=v[d : d + 1],
            sigma=v[d + 1 : d + 2],
            alpha=v[d + 2 :] if rq else None,
        )

    return objective, starts, objective.bounds(), to_draws
