"""``AdditiveGP``: a PyMC marginal GP with an additive SE kernel over groups of inputs.

It shares the fitting and prediction skeleton of every GP model
(:class:`pp_decomp.components.base.MarginalGP`): MAP by multi-start L-BFGS-B
on :class:`MapObjective` (numpy), NUTS by nutpie on the same density compiled
by numba (:mod:`pp_decomp.additive.density`; one nutpie model per ``(M, D,
priors, shared)`` with the group mask swapped as data,
:mod:`pp_decomp.additive.sampler`). The PyMC model
(:mod:`pp_decomp.additive.model`) defines both and the tests check them against it.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from pp_decomp.additive.posterior import AdditivePosterior, group_masks
from pp_decomp.components.base import MarginalGP
from pp_decomp.components.compiled import SEARCH_BOX, compiled, penalty
from pp_decomp.components.draws import Draws
from pp_decomp.components.posterior import JITTER
from pp_decomp.components.priors import Priors
from pp_decomp.kernels.families import ExpQuad
from pp_decomp.validate import check_X

# the additive models keep the inverse-gamma lengthscales (mean 0.3 per group
# dimension) and the amplitude prior (Gamma(2, 2) scaled by 1/sqrt(M)) they were
# developed and measured with, and no constant-mean term
# the additive models' own priors, measured with the gamma noise prior (issue-22 figures)
ADDITIVE_PRIORS = Priors(
    ls_family="inverse-gamma", eta_alpha=2.0, eta_beta=2.0, sigma_family="gamma", mean_sd=0.0
)
# an additive GP splits its amplitude over M groups: amplitudes may be smaller
ADDITIVE_SEARCH_BOX = {**SEARCH_BOX, "eta_log__": (-9.0, 5.0)}


def unpack_rows(Z, D: int, M: int, shared: bool):
    """``ℓ (S, D)``, ``η (S, M)``, ``σ (S,)`` from log-scale rows ``Z (S, k)``: ``k = D + M + 1``,
    or 3 with ``shared`` (one lengthscale and one amplitude, repeated)."""
    v = np.exp(np.atleast_2d(np.asarray(Z, dtype=float)))
    if shared:
        S = len(v)
        return np.repeat(v[:, :1], D, 1), np.repeat(v[:, 1:2], M, 1), v[:, 2].reshape(S)
    return v[:, :D], v[:, D : D + M], v[:, -1]


def prior_center(priors: Priors, n_groups: int, n_ls: int, n_eta: int) -> np.ndarray:
    """The priors' centre in ``z = (log ℓ (n_ls), log η (n_eta), log σ)``: the log of
    each prior's mean (the amplitude's rate scaled by ``sqrt(M)``), PyMC's initial
    point for these distributions; MAP's first start and a cold NUTS chain's centre."""
    p = priors
    ls = np.log(p.ls_beta / max(p.ls_alpha - 1.0, 1.0))
    eta = np.log(p.eta_alpha / (p.eta_beta * np.sqrt(n_groups)))
    return np.concatenate(
        [np.full(n_ls, ls), np.full(n_eta, eta), [np.log(p.sigma_alpha / p.sigma_beta)]]
    )


class MapObjective:
    """Negative log posterior of the additive model and its gradient, in numpy.

    The same model as :func:`pp_decomp.additive.model.build_additive_model`, as a
    function of ``z = (log ℓ (D), log η (M), log σ)`` without the log-transform's
    Jacobian, so its minimum is the posterior mode of the constrained parameters.
    With ``K = Σ_j K_j + (σ² + jitter) I``, ``α = K⁻¹ y`` and ``B = ααᵀ - K⁻¹``:

    * ``∂ log p(y) / ∂ log η_j = tr(B K_j)``
    * ``∂ log p(y) / ∂ log ℓ_d = ½ tr(B Σ_j W_jd K_j ⊙ Δ²_d / ℓ_d²)``
    * ``∂ log p(y) / ∂ log σ = σ² tr(B)``

    plus the log-prior gradients. Computing these directly avoids compiling a
    PyTensor graph for every number of groups (slow for ``(n, n, D)`` tensors).

    With ``shared=True`` one lengthscale and one amplitude serve every dimension
    and group (Kandasamy et al. 2015, §5): ``z = (log ℓ, log η, log σ)``, the
    likelihood's gradients are summed over the tied entries and each prior is
    counted once.
    """

    def __init__(self, X, y, W, priors: Priors, shared: bool = False):
        self.y = np.asarray(y, dtype=float)
        self.W = np.asarray(W, dtype=float)
        self.p, self.shared = priors, shared
        self.d2 = (X[:, None, :] - X[None, :, :]) ** 2  # (n, n, D)
        self.M, self.D = self.W.shape

    def unpack(self, z) -> tuple[np.ndarray, np.ndarray, float]:
        """``ℓ (D,)``, ``η (M,)``, ``σ`` from the log-scale vector ``z``."""
        ls, eta, sigma = unpack_rows(z, self.D, self.M, self.shared)
        return ls[0], eta[0], float(sigma[0])

    def log_prior_value(self, ls, eta, sigma):
        """Log prior (up to a constant) of the free lengthscales ``ls (..., n_ls)``,
        amplitudes ``eta (..., n_eta)`` and noise ``sigma (...)``: (...)."""
        p, rate_eta = self.p, self.p.eta_beta * np.sqrt(self.M)
        return (
            np.sum(-(p.ls_alpha + 1) * np.log(ls) - p.ls_beta / ls, axis=-1)
            + np.sum((p.eta_alpha - 1) * np.log(eta) - rate_eta * eta, axis=-1)
            + (p.sigma_alpha - 1) * np.log(sigma)
            - p.sigma_beta * sigma
        )

    def _log_prior(self, ls, eta, sigma, g_ls, g_eta, g_sigma):
        """Log prior, and the gradient of log likelihood plus log prior from the
        likelihood's ``g_*``."""
        p, rate_eta = self.p, self.p.eta_beta * np.sqrt(self.M)
        value = self.log_prior_value(ls, eta, sigma)
        grad = np.concatenate(
            [
                g_ls - (p.ls_alpha + 1) + p.ls_beta / ls,
                g_eta + (p.eta_alpha - 1) - rate_eta * eta,
                [g_sigma + (p.sigma_alpha - 1) - p.sigma_beta * sigma],
            ]
        )
        return value, grad

    @cached_property
    def _group_d2(self) -> np.ndarray:
        """``Σ_d W_jd Δ²_abd``, each group's unscaled squared distances: (M, n, n)."""
        return np.ascontiguousarray(np.einsum("abd,jd->jab", self.d2, self.W))

    def density_args(self) -> tuple:
        """The data arguments of the numba density (:mod:`pp_decomp.additive.density`)
        after ``z``: ``(G, y, prm)`` with the groups' squared distances ``G (M, n, n)``
        when shared, else ``(Δ² (n, n, D), W, y, prm)``; ``prm`` the prior constants."""
        from pp_decomp.additive.density import prior_constants

        y, prm = np.ascontiguousarray(self.y), prior_constants(self.p, self.M)
        if self.shared:
            return self._group_d2, y, prm
        return np.ascontiguousarray(self.d2), np.ascontiguousarray(self.W), y, prm

    def log_density(self, Z: np.ndarray) -> np.ndarray:
        """The log density NUTS samples at the rows of ``Z (S, k)``: the log
        posterior of the constrained parameters plus the log transform's Jacobian
        ``Σ z``, by the numba density one row at a time, ``-inf`` where ``K`` is
        not positive definite: (S,)."""
        from pp_decomp.additive.density import ard_log_density_rows, shared_log_density_rows

        Z = np.ascontiguousarray(np.atleast_2d(np.asarray(Z, dtype=float)))
        rows = shared_log_density_rows if self.shared else ard_log_density_rows
        return rows(Z, *self.density_args())

    def __call__(self, z):
        """``(-log posterior, its gradient)`` at ``z``; a steep finite wall
        (:func:`~pp_decomp.components.compiled.penalty`) where ``K`` is not
        numerically positive definite, for L-BFGS-B's line search."""
        out = self.evaluate(z)
        return penalty(z) if out is None else out

    def evaluate(self, z) -> tuple[float, np.ndarray] | None:
        """``(-log posterior, its gradient)`` at ``z``, or ``None`` where ``K`` is
        not numerically positive definite."""
        n = len(self.y)
        ls, eta, sigma = self.unpack(z)
        scaled = self.d2 / ls**2  # (n, n, D)
        Kj = eta[:, None, None] ** 2 * ExpQuad.correlation(np.einsum("abd,jd->jab", scaled, self.W))
        K = Kj.sum(0)
        K[np.diag_indices(n)] += sigma**2 + JITTER
        try:
            L = np.linalg.cholesky(K)
        except np.linalg.LinAlgError:
            return None
        # the gradient needs K⁻¹ itself, so it is formed once here
        L_inv = np.linalg.solve(L, np.eye(n))
        K_inv = L_inv.T @ L_inv
        alpha = K_inv @ self.y
        loglik = -0.5 * self.y @ alpha - np.log(np.diag(L)).sum() - 0.5 * n * np.log(2 * np.pi)
        B = np.outer(alpha, alpha) - K_inv
        g_eta = np.einsum("ab,jab->j", B, Kj)
        g_ls = 0.5 * np.einsum("ab,jab,abd,jd->d", B, Kj, scaled, self.W, optimize=True)
        g_sigma = sigma**2 * np.trace(B)
        if self.shared:
            ls, eta, g_ls, g_eta = (
                ls[:1],
                eta[:1],
                g_ls.sum(keepdims=True),
                g_eta.sum(keepdims=True),
            )
        logprior, grad = self._log_prior(ls, eta, sigma, g_ls, g_eta, g_sigma)
        return -(loglik + logprior), -grad


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
        from pp_decomp.additive.sampler import AdditiveModel

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
        the importance-sampling refreshes of :mod:`pp_decomp.components.refresh`."""
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
