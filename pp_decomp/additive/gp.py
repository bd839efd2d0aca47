"""``AdditiveGP``: a PyMC marginal GP with an additive SE kernel over groups of inputs.

The PyMC model holds the group mask ``W (M, D)`` as data next to ``X`` and ``y``,
so one compiled model (MAP objective or nutpie) serves every decomposition with
the same number of groups ``M`` and dimension ``D``: structure learning swaps
``W`` like data instead of recompiling.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
import pymc as pm
import pytensor.tensor as pt
from scipy import optimize

from pp_decomp.additive.posterior import AdditivePosterior, group_masks
from pp_decomp.components.gp import to_model_scale, unit_scale
from pp_decomp.components.posterior import JITTER
from pp_decomp.components.priors import Priors
from pp_decomp.diagnostics import FitDiagnostics, summarize_nuts, warn_if_bad
from pp_decomp.rng import SeedLike, as_generator, int_seed
from pp_decomp.validate import (
    check_bounds,
    check_choice,
    check_positive_int,
    check_X,
    check_y,
)

_CACHE: dict[tuple, _CompiledAdditive] = {}
_LOCK = threading.Lock()


class MaskedAdditiveExpQuad(pm.gp.cov.Covariance):
    """``k(x, x') = Σ_j η_j² exp(-½ Σ_d W_jd (x_d - x'_d)² / ℓ_d²)`` as a PyMC covariance."""

    def __init__(self, input_dim: int, ls, eta, W):
        super().__init__(input_dim)
        self.ls, self.eta, self.W = ls, eta, W

    def full(self, X, Xs=None):
        """The ``(n1, n2)`` covariance matrix between the rows of ``X`` and ``Xs``."""
        Xs = X if Xs is None else Xs
        d2 = (X[:, None, :] - Xs[None, :, :]) ** 2 / self.ls**2  # (n1, n2, D)
        r2 = pt.tensordot(d2, self.W.T, axes=[[2], [0]])  # (n1, n2, M)
        return pt.sum(self.eta**2 * pt.exp(-0.5 * r2), axis=-1)

    def diag(self, X):
        """``k(x, x) = Σ_j η_j²`` at every row of ``X``."""
        return pt.alloc(pt.sum(self.eta**2), X.shape[0])


def build_additive_model(n_groups: int, input_dim: int, priors: Priors, n: int = 3) -> pm.Model:
    """``y ~ MvNormal(0, Σ_j η_j² k_j(X, X) + (σ² + jitter) I)`` with ``X``, ``y``, ``W`` as data.

    Priors: ``ℓ_d ~ InverseGamma``, ``η_j ~ Gamma`` with the amplitude prior
    scaled by ``1/sqrt(M)`` (so the summed prior variance stays near 1 on
    standardised outputs), ``σ ~ Gamma``.
    """
    with pm.Model() as model:
        X = pm.Data("X", np.zeros((n, input_dim)))
        y = pm.Data("y", np.zeros(n))
        W = pm.Data("W", np.ones((n_groups, input_dim)))
        ls = pm.InverseGamma("ls", alpha=priors.ls_alpha, beta=priors.ls_beta, shape=input_dim)
        eta = pm.Gamma(
            "eta",
            alpha=priors.eta_alpha,
            beta=priors.eta_beta * np.sqrt(n_groups),
            shape=n_groups,
        )
        sigma = pm.Gamma("sigma", alpha=priors.sigma_alpha, beta=priors.sigma_beta)
        gp = pm.gp.Marginal(cov_func=MaskedAdditiveExpQuad(input_dim, ls, eta, W))
        gp.marginal_likelihood("y_obs", X=X, y=y, sigma=sigma, jitter=JITTER)
    return model


@dataclass
class _CompiledAdditive:
    n_groups: int
    input_dim: int
    priors: Priors
    model: pm.Model = field(init=False)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def __post_init__(self):
        self.model = build_additive_model(self.n_groups, self.input_dim, self.priors)

    @cached_property
    def nutpie_model(self):
        import nutpie

        return nutpie.compile_pymc_model(self.model, backend="numba")


def _compiled(n_groups: int, input_dim: int, priors: Priors) -> _CompiledAdditive:
    key = (int(n_groups), int(input_dim), priors)
    with _LOCK:
        if key not in _CACHE:
            _CACHE[key] = _CompiledAdditive(int(n_groups), int(input_dim), priors)
        return _CACHE[key]


class MapObjective:
    """Negative log posterior of the additive model and its gradient, in numpy.

    The same model as :func:`build_additive_model`, as a function of
    ``z = (log ℓ (D), log η (M), log σ)`` without the log-transform's Jacobian,
    so its minimum is the posterior mode of the constrained parameters. With
    ``K = Σ_j K_j + (σ² + jitter) I``, ``α = K⁻¹ y`` and ``B = ααᵀ - K⁻¹``:

    * ``∂ log p(y) / ∂ log η_j = tr(B K_j)``
    * ``∂ log p(y) / ∂ log ℓ_d = ½ tr(B Σ_j W_jd K_j ⊙ Δ²_d / ℓ_d²)``
    * ``∂ log p(y) / ∂ log σ = σ² tr(B)``

    plus the log-prior gradients. Computing these directly avoids compiling a
    PyTensor graph for every number of groups (slow for ``(n, n, D)`` tensors).
    """

    def __init__(self, X, y, W, priors: Priors):
        self.y = np.asarray(y, dtype=float)
        self.W = np.asarray(W, dtype=float)
        self.p = priors
        self.d2 = (X[:, None, :] - X[None, :, :]) ** 2  # (n, n, D)
        self.M, self.D = self.W.shape

    def __call__(self, z):
        D, M, p, n = self.D, self.M, self.p, len(self.y)
        ls, eta, sigma = np.exp(z[:D]), np.exp(z[D : D + M]), float(np.exp(z[-1]))
        scaled = self.d2 / ls**2  # (n, n, D)
        Kj = eta[:, None, None] ** 2 * np.exp(-0.5 * np.einsum("abd,jd->jab", scaled, self.W))
        K = Kj.sum(0)
        K[np.diag_indices(n)] += sigma**2 + JITTER
        try:
            L = np.linalg.cholesky(K)
        except np.linalg.LinAlgError:
            return 1e10 * (1.0 + float(z @ z)), 2e10 * z
        L_inv = np.linalg.solve(L, np.eye(n))
        K_inv = L_inv.T @ L_inv
        alpha = K_inv @ self.y
        loglik = -0.5 * self.y @ alpha - np.log(np.diag(L)).sum() - 0.5 * n * np.log(2 * np.pi)
        B = np.outer(alpha, alpha) - K_inv
        g_eta = np.einsum("ab,jab->j", B, Kj)
        g_ls = 0.5 * np.einsum("ab,jab,abd,jd->d", B, Kj, scaled, self.W, optimize=True)
        g_sigma = sigma**2 * np.trace(B)
        rate_eta = p.eta_beta * np.sqrt(M)
        logprior = (
            np.sum(-(p.ls_alpha + 1) * np.log(ls) - p.ls_beta / ls)
            + np.sum((p.eta_alpha - 1) * np.log(eta) - rate_eta * eta)
            + (p.sigma_alpha - 1) * np.log(sigma)
            - p.sigma_beta * sigma
        )
        grad = np.concatenate(
            [
                g_ls - (p.ls_alpha + 1) + p.ls_beta / ls,
                g_eta + (p.eta_alpha - 1) - rate_eta * eta,
                [g_sigma + (p.sigma_alpha - 1) - p.sigma_beta * sigma],
            ]
        )
        return -(loglik + logprior), -grad


@dataclass(frozen=True)
class AdditiveDraws:
    """S hyperparameter draws of an additive GP: ``ls (S, D)``, ``eta (S, M)``, ``sigma (S,)``."""

    ls: np.ndarray
    eta: np.ndarray
    sigma: np.ndarray

    def __post_init__(self):
        ls = np.atleast_2d(np.asarray(self.ls, dtype=float))
        eta = np.atleast_2d(np.asarray(self.eta, dtype=float))
        sigma = np.atleast_1d(np.asarray(self.sigma, dtype=float))
        for name, arr in (("ls", ls), ("eta", eta), ("sigma", sigma)):
            if not np.all(np.isfinite(arr)) or np.any(arr <= 0):
                raise ValueError(f"{name} must be finite and > 0; got {arr!r}")
        if not (ls.shape[0] == eta.shape[0] == sigma.shape[0]):
            raise ValueError(
                f"ls, eta and sigma must hold one row per draw; got shapes "
                f"{ls.shape}, {eta.shape}, {sigma.shape}"
            )
        object.__setattr__(self, "ls", ls)
        object.__setattr__(self, "eta", eta)
        object.__setattr__(self, "sigma", sigma)

    @property
    def n_draws(self) -> int:
        return self.ls.shape[0]

    def thin(self, max_draws: int) -> AdditiveDraws:
        """At most ``max_draws`` draws, evenly spaced."""
        if self.n_draws <= max_draws:
            return self
        idx = np.linspace(0, self.n_draws - 1, max_draws).round().astype(int)
        return AdditiveDraws(self.ls[idx], self.eta[idx], self.sigma[idx])

    def as_dict(self) -> dict:
        """Plain lists (for checkpoints)."""
        return {"ls": self.ls.tolist(), "eta": self.eta.tolist(), "sigma": self.sigma.tolist()}


class AdditiveGP:
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
    """

    def __init__(
        self,
        groups,
        input_dim: int,
        *,
        priors: Priors | None = None,
        bounds=None,
        name: str = "f",
        max_draws: int = 256,
    ):
        self.input_dim = check_positive_int(input_dim, "input_dim")
        self.groups = [tuple(int(v) for v in g) for g in groups]
        if not self.groups:
            raise ValueError("groups must hold at least one group")
        self.W = group_masks(self.groups, self.input_dim)
        self.priors = priors if priors is not None else Priors()
        self.bounds = None if bounds is None else check_bounds(bounds, self.input_dim)
        self.name = str(name)
        self.max_draws = check_positive_int(max_draws, "max_draws")
        self.draws: AdditiveDraws | None = None
        self.idata = None
        self.diagnostics: FitDiagnostics | None = None
        self._post: AdditivePosterior | None = None

    @property
    def n_groups(self) -> int:
        return len(self.groups)

    def scale_X(self, X) -> np.ndarray:
        """Inputs on the model's unit scale."""
        return unit_scale(X, self.bounds)

    def _set_data(self, X, y):
        X = check_X(X, "X", input_dim=self.input_dim, min_rows=2)
        y = check_y(y, "y", n=X.shape[0])
        self.X_train, self.y_train = X, y
        Xs, ys, self.y_mean, self.y_std = to_model_scale(X, y, self.bounds)
        return Xs, ys

    # ------------------------------------------------------------------ inference
    def fit(
        self,
        X,
        y,
        inference: str = "map",
        *,
        draws: int = 500,
        tune: int = 500,
        chains: int = 2,
        restarts: int = 3,
        seed: SeedLike = None,
        init: AdditiveDraws | None = None,
    ) -> AdditiveGP:
        """Infer the hyperparameters by ``"map"`` (L-BFGS-B, ``restarts`` starts) or ``"nuts"``."""
        check_choice(inference, "inference", ("map", "nuts"))
        check_positive_int(restarts, "restarts")
        Xs, ys = self._set_data(X, y)
        rng = as_generator(seed)
        start = time.perf_counter()
        if inference == "map":
            hyper = self._fit_map(Xs, ys, restarts, rng, init)
            self.idata = None
            self.diagnostics = FitDiagnostics("map", 1, seconds=time.perf_counter() - start)
        else:
            import nutpie

            cm = _compiled(self.n_groups, self.input_dim, self.priors)
            model = cm.nutpie_model.with_data(X=Xs, y=ys, W=self.W)
            kw = {} if init is None else {"init_mean": self._unconstrained(init, cm)}
            self.idata = nutpie.sample(
                model,
                draws=check_positive_int(draws, "draws"),
                tune=check_positive_int(tune, "tune", minimum=0),
                chains=check_positive_int(chains, "chains"),
                cores=min(chains, 2),
                seed=int_seed(rng),
                progress_bar=False,
                **kw,
            )
            post = self.idata.posterior
            hyper = AdditiveDraws(
                post["ls"].values.reshape(-1, self.input_dim),
                post["eta"].values.reshape(-1, self.n_groups),
                post["sigma"].values.reshape(-1),
            )
            self.diagnostics = summarize_nuts(
                self.idata, ["ls", "eta", "sigma"], time.perf_counter() - start
            )
            warn_if_bad(self.diagnostics, self.name)
        self.draws = hyper.thin(self.max_draws)
        self._post = AdditivePosterior(
            Xs, ys, self.W, self.draws.ls, self.draws.eta, self.draws.sigma
        )
        return self

    def condition(self, X, y, draws: AdditiveDraws) -> AdditiveGP:
        """Condition on ``(X, y)`` with given draws (unit-scaled inputs, standardised ``y``)."""
        if not isinstance(draws, AdditiveDraws):
            raise TypeError(f"draws must be an AdditiveDraws; got {type(draws).__name__}")
        if draws.ls.shape[1] != self.input_dim or draws.eta.shape[1] != self.n_groups:
            raise ValueError(
                f"draws have {draws.ls.shape[1]} lengthscales and {draws.eta.shape[1]} "
                f"amplitudes; the model has {self.input_dim} dimensions and {self.n_groups} groups"
            )
        Xs, ys = self._set_data(X, y)
        self.draws = draws
        self.idata = None
        self.diagnostics = FitDiagnostics("fixed", draws.n_draws)
        self._post = AdditivePosterior(Xs, ys, self.W, draws.ls, draws.eta, draws.sigma)
        return self

    @staticmethod
    def _unconstrained(init: AdditiveDraws, cm) -> np.ndarray:
        parts = {
            "ls_log__": np.log(init.ls).mean(0),
            "eta_log__": np.log(init.eta).mean(0),
            "sigma_log__": [np.log(init.sigma).mean()],
        }
        return np.concatenate([np.asarray(parts[v.name], dtype=float) for v in cm.model.value_vars])

    def _fit_map(self, Xs, ys, restarts, rng, init):
        p, D, M = self.priors, self.input_dim, self.n_groups
        objective = MapObjective(Xs, ys, self.W, p)
        center = np.concatenate(
            [
                np.full(D, np.log(p.ls_beta / max(p.ls_alpha - 1.0, 1.0))),
                np.full(M, np.log(p.eta_alpha / (p.eta_beta * np.sqrt(M)))),
                [np.log(p.sigma_alpha / p.sigma_beta)],
            ]
        )
        if init is not None:
            center = np.concatenate(
                [np.log(init.ls).mean(0), np.log(init.eta).mean(0), [np.log(init.sigma).mean()]]
            )
        starts = [center] + [center + rng.normal(0, 0.7, center.size) for _ in range(restarts - 1)]
        box = [(-7.0, 7.0)] * D + [(-9.0, 5.0)] * M + [(-12.0, 3.0)]
        best = None
        for z0 in starts:
            res = optimize.minimize(objective, z0, jac=True, method="L-BFGS-B", bounds=box)
            if np.isfinite(res.fun) and (best is None or res.fun < best.fun):
                best = res
        if best is None:
            raise RuntimeError(f"additive GP {self.name!r}: MAP failed from every start")
        v = np.exp(best.x)
        return AdditiveDraws(v[None, :D], v[None, D : D + M], v[D + M :])

    # ------------------------------------------------------------------ prediction
    @property
    def posterior(self) -> AdditivePosterior:
        """The batched posterior on the model's scale."""
        if self._post is None:
            raise RuntimeError(f"additive GP {self.name!r} is not fitted; call fit() first")
        return self._post

    def predict(self, Xnew) -> tuple[np.ndarray, np.ndarray]:
        """Mixture mean and variance of ``f`` at ``Xnew (m, D)`` in original units."""
        Xnew = check_X(Xnew, "Xnew", input_dim=self.input_dim)
        mean, var = self.posterior.moments(self.scale_X(Xnew))
        return self.y_mean + self.y_std * mean, self.y_std**2 * var

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
