"""``AdditiveGP``: a PyMC marginal GP with an additive SE kernel over groups of inputs.

It shares the fitting and prediction skeleton of every GP model
(:class:`pp_decomp.components.gp.base.MarginalGP`): MAP by multi-start L-BFGS-B
on :class:`MapObjective` (numpy), NUTS by nutpie on the same density compiled
by numba (:mod:`pp_decomp.additive.density`; one nutpie model per ``(M, D,
priors, shared)`` with the group mask swapped as data,
:mod:`pp_decomp.additive.sampler`). The PyMC model
(:mod:`pp_decomp.additive.pymc_model`) defines both and the tests check them against it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from pp_decomp.additive.objective import (
    ADDITIVE_PRIORS,
    ADDITIVE_SEARCH_BOX,
    MapObjective,
    prior_center,
    unpack_rows,
)
from pp_decomp.additive.posterior import AdditivePosterior, group_masks
from pp_decomp.additive.sampler import AdditiveModel
from pp_decomp.components.gp.base import MarginalGP
from pp_decomp.components.gp.priors import Priors
from pp_decomp.components.inference.compiled import compiled
from pp_decomp.components.posterior.draws import Draws
from pp_decomp.validate import check_X


@dataclass(frozen=True)
class AdditiveDraws(Draws):
    """S hyperparameter draws of an additive GP: ``ls (S, D)``, ``eta (S, M)``, ``sigma (S,)``."""

    NDIM = {"ls": 2, "eta": 2, "sigma": 1}

    ls: np.ndarray
    eta: np.ndarray
    sigma: np.ndarray


class AdditiveGP(MarginalGP):
    """A PyMC marginal GP with an additive SE kernel over ``groups`` of input dimensions.

    ``f(x) = Σ_j f_j(x^(j))``, ``f_j ~ GP(0, η_j² exp(-½ Σ_{d ∈ G_j} (x_d - x'_d)²/ℓ_d²))``,
    ``y = f(x) + ε``, ``ε ~ N(0, σ²)``; one ARD lengthscale per input dimension
    (shared by every group containing it, as in Rolland et al. 2018). Inputs are
    scaled to the unit box by ``bounds`` and ``y`` standardised.

    Parameters
    ----------
    groups : sequence of sequences of int
        Disjoint or overlapping groups of dimensions (a dimension in no group
        does not influence ``f``).
    input_dim : int
        ``D``.
    priors : Priors, optional
    bounds : (2, D) array, optional
    name : str
    max_draws : int
        Draws kept for prediction after NUTS.
    shared : bool
        One lengthscale for every dimension and one amplitude for every group,
        as in Kandasamy et al. (2015, §5: "the same scale σ and bandwidth h
        hyperparameters for all the kernels"): three hyperparameters instead
        of ``D + M + 1``. The draws still hold ``ls (S, D)`` and ``eta (S, M)``.
    """

    label = "additive GP"
    draws_type = AdditiveDraws

    def __init__(
        self,
        groups,
        input_dim: int,
        *,
        priors: Priors | None = None,
        bounds=None,
        name: str = "f",
        max_draws: int = 256,
        shared: bool = False,
    ):
        super().__init__(
            input_dim,
            priors=ADDITIVE_PRIORS if priors is None else priors,
            bounds=bounds,
            standardize=True,
            name=name,
            max_draws=max_draws,
        )
        if self.priors.ls_family != "inverse-gamma":
            raise ValueError(
                "the additive GP's per-group kernels use ls_family='inverse-gamma' priors; "
                f"got Priors(ls_family={self.priors.ls_family!r})"
            )
        if self.priors.sigma_family != "gamma":
            raise ValueError(
                "the additive GP's noise prior is sigma_family='gamma'; "
                f"got Priors(sigma_family={self.priors.sigma_family!r})"
            )
        self.groups = [tuple(int(v) for v in g) for g in groups]
        if not self.groups:
            raise ValueError("groups must hold at least one group")
        self.W = group_masks(self.groups, self.input_dim)
        self.shared = bool(shared)

    @property
    def n_groups(self) -> int:
        return len(self.groups)

    def hyper_names(self) -> list[str]:
        """The model's hyperparameters, as named in its PyMC model and its draws."""
        return ["ls", "eta", "sigma"]

    def _compiled(self):
        """The structure's NUTS model: the numba density, sampled by nutpie
        (:mod:`pp_decomp.additive.sampler`)."""
        M, D, p, shared = self.n_groups, self.input_dim, self.priors, self.shared
        return compiled(("additive", M, D, p, shared), lambda: AdditiveModel(M, D, p, shared))

    def _unconstrained(self, init: AdditiveDraws, cm) -> np.ndarray:
        if not self.shared:
            return super()._unconstrained(init, cm)
        S = init.n_draws
        first = {n: np.log(getattr(init, n).reshape(S, -1)[:, 0]) for n in self.hyper_names()}
        return cm.flatten_rows(
            {
                "ls_shared_log__": first["ls"],
                "eta_shared_log__": first["eta"],
                "sigma_log__": first["sigma"],
            }
        )

    def _nutpie_data(self, Xs, ys) -> dict:
        return {"X": Xs, "y": ys, "W": self.W}

    def numpy_density(self):
        """The sampler's density in numpy (:meth:`MapObjective.log_density`), for
        the importance-sampling refreshes of :mod:`pp_decomp.components.inference.refresh`."""
        shared = self.shared

        def log_posterior(Z, Xs, ys):
            return MapObjective(Xs, ys, self.W, self.priors, shared=shared).log_density(Z)

        def to_draws(Z):
            return AdditiveDraws(*unpack_rows(Z, self.input_dim, self.n_groups, shared))

        return log_posterior, to_draws

    def _check_draws(self, draws: AdditiveDraws) -> None:
        if draws.ls.shape[1] != self.input_dim or draws.eta.shape[1] != self.n_groups:
            raise ValueError(
                f"draws have {draws.ls.shape[1]} lengthscales and {draws.eta.shape[1]} "
                f"amplitudes; the model has {self.input_dim} dimensions and {self.n_groups} groups"
            )

    def _make_posterior(self, Xs, ys, draws: AdditiveDraws) -> AdditivePosterior:
        return AdditivePosterior(Xs, ys, self.W, draws.ls, draws.eta, draws.sigma)

    def _map_problem(self, Xs, ys, restarts, rng, init):
        """Numpy objective (:class:`MapObjective`); starts at the prior's centre (or
        ``init``) and at Gaussian perturbations of it."""
        p, M = self.priors, self.n_groups
        n_ls = 1 if self.shared else self.input_dim
        n_eta = 1 if self.shared else M
        center = prior_center(p, M, n_ls, n_eta)
        if init is not None:
            axis = None if self.shared else 0
            center = np.concatenate(
                [
                    np.atleast_1d(np.log(init.ls).mean(axis)),
                    np.atleast_1d(np.log(init.eta).mean(axis)),
                    [np.log(init.sigma).mean()],
                ]
            )
        starts = [center] + [center + rng.normal(0, 0.7, center.size) for _ in range(restarts - 1)]
        box = ADDITIVE_SEARCH_BOX
        bounds = [box["ls_log__"]] * n_ls + [box["eta_log__"]] * n_eta + [box["sigma_log__"]]
        objective = MapObjective(Xs, ys, self.W, p, shared=self.shared)

        def to_draws(z):
            ls, eta, sigma = objective.unpack(z)
            return AdditiveDraws(ls[None], eta[None], np.array([sigma]))

        return objective, starts, bounds, to_draws

    def keep_draws(self, idx) -> AdditiveGP:
        """Keep the draws at positions ``idx`` (repeats allowed: a resample), on the
        same data, without factorising again."""
        self.draws = self.draws.subset(np.asarray(idx, dtype=int))
        self._posterior = self.posterior.subset(idx)
        return self

    def predict_groups(self, Xnew, groups=None) -> tuple[np.ndarray, np.ndarray]:
        """Mixture mean and variance of each group ``f_j`` at ``Xnew (m, D)``: ``(M', m)`` each.

        In original units; the output mean ``ȳ`` is not attributed to any group.
        """
        Xnew = check_X(Xnew, "Xnew", input_dim=self.input_dim)
        if groups is not None:
            groups = np.asarray(groups, dtype=int)
            if groups.ndim != 1 or np.any((groups < 0) | (groups >= self.n_groups)):
                raise ValueError(
                    f"groups must index the model's {self.n_groups} groups; got {groups.tolist()}"
                )
        mean, var = self.posterior.group_moments(self.scale_X(Xnew), groups)
        return self.y_std * mean, self.y_std**2 * var
