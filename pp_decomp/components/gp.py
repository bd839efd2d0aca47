"""``ComponentGP``: one observed component ``f_j`` as a PyMC marginal GP with priors."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from pp_decomp.components.base import MarginalGP
from pp_decomp.components.draws import HyperDraws
from pp_decomp.components.map_objective import GPMapObjective
from pp_decomp.components.posterior import JITTER, GPPosterior
from pp_decomp.components.priors import Priors
from pp_decomp.kernels import canonical_kernel
from pp_decomp.validate import check_X


class ComponentGP(MarginalGP):
    """A PyMC ``pm.gp.Marginal`` model of one component with a hyperparameter posterior.

    The model (:func:`pp_decomp.components.model.build_model`) is

    ``ℓ_d ~ LogNormal`` (dimension-scaled), ``η ~ Gamma``, ``σ ~ LogNormal``
    (``α ~ Gamma`` for ``rq``),
    ``ỹ ~ MvNormal(0, η² k_ℓ(X̃, X̃) + c + (σ² + 10⁻⁶) I)``

    on unit-scaled inputs ``X̃ = (X - lower) / (upper - lower)`` and standardised
    outputs ``ỹ = (y - ȳ) / s_y``, where ``c = mean_sd²`` is an integrated
    constant mean (:class:`~pp_decomp.Priors`). Predictions are returned in the
    original units.

    Parameters
    ----------
    kernel : {"se", "matern52", "matern32", "rq"}
        Covariance family (aliases ``"expquad"``, ``"matern"``, ``"ratquad"``).
    input_dim : int
        Number of input dimensions ``d`` (one ARD lengthscale each).
    priors : Priors, optional
        Hyperparameter priors on the scaled/standardised problem.
    bounds : (2, d) array, optional
        Lower and upper input bounds used to scale inputs to the unit box. When
        omitted, inputs are used as given, so the default priors assume they
        span roughly a unit range.
    standardize : bool
        Standardise ``y`` before fitting (default). With ``False`` the GP has a
        known constant prior mean in the original units (no integrated constant
        mean), as in the papers' known-kernel studies.
    name : str
        Component name used in warnings and labels.
    max_draws : int
        Hyperparameter draws kept for prediction (evenly thinned from the
        posterior); the full posterior stays in :attr:`idata`.

    Attributes
    ----------
    idata : xarray.DataTree
        The last fit's posterior (one draw for ``"map"``).
    draws : HyperDraws
        The draws used for prediction.
    diagnostics : FitDiagnostics
        Convergence summary of the last fit.
    """

    label = "component"
    draws_type = HyperDraws

    def __init__(
        self,
        kernel: str = "se",
        input_dim: int = 1,
        *,
        priors: Priors | None = None,
        bounds=None,
        standardize: bool = True,
        name: str = "f",
        max_draws: int = 256,
    ):
        self.kernel = canonical_kernel(kernel)
        super().__init__(
            input_dim,
            priors=priors,
            bounds=bounds,
            standardize=standardize,
            name=name,
            max_draws=max_draws,
        )

    @property
    def mean_var(self) -> float:
        """Prior variance of the integrated constant mean (0 without standardisation)."""
        return self.priors.mean_var if self.standardize else 0.0

    def hyper_names(self) -> list[str]:
        """The model's hyperparameters, as named in its PyMC model and its draws."""
        return ["ls", "eta", "sigma"] + (["alpha"] if self.kernel == "rq" else [])

    def _compiled(self):
        from pp_decomp.components.model import compiled_model  # PyMC loads only when fitting

        priors = self.priors if self.standardize else replace(self.priors, mean_sd=0.0)
        return compiled_model(self.kernel, self.input_dim, priors)

    def _check_draws(self, draws: HyperDraws) -> None:
        if draws.input_dim != self.input_dim:
            raise ValueError(
                f"draws.ls has {draws.input_dim} column(s) but input_dim is {self.input_dim}"
            )
        if (draws.alpha is None) != (self.kernel != "rq"):
            raise ValueError(
                f"draws.alpha must be given exactly for kernel 'rq'; kernel is "
                f"{self.kernel!r} and alpha is {draws.alpha!r}"
            )

    def _make_posterior(self, Xs, ys, draws: HyperDraws) -> GPPosterior:
        return GPPosterior(self.kernel, Xs, ys, draws, JITTER, self.mean_var)

    def _map_problem(self, Xs, ys, restarts, rng, init):
        """Objective (:class:`~pp_decomp.components.map_objective.GPMapObjective`),
        starts and search box of the MAP fit: one start at the prior's centre (or
        at ``init``), the rest drawn from the prior."""
        p, d = self.priors, self.input_dim
        objective = GPMapObjective(self.kernel, Xs, ys, p, self.mean_var)
        rq = self.kernel == "rq"
        if init is not None:
            start = [np.log(getattr(init, n)).mean(0) for n in self.hyper_names()]
            starts = [np.concatenate([np.atleast_1d(part) for part in start])]
        else:
            starts = [p.log_center(self.kernel, d)]
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

    # -------------------------------------------------------------- prediction
    def prior_cov(self, X1, X2) -> np.ndarray:
        """Prior covariance per draw in original units: (S, n1, n2)."""
        X1 = self.scale_X(check_X(X1, "X1", input_dim=self.input_dim, min_rows=0))
        X2 = self.scale_X(check_X(X2, "X2", input_dim=self.input_dim, min_rows=0))
        return self.y_std**2 * self.posterior.prior_cov(X1, X2)

    @property
    def prior_var(self) -> np.ndarray:
        """Prior variance ``k(x, x) = s_y² (η² + c)`` per draw in original units: (S,)."""
        return self.y_std**2 * (self.draws.eta**2 + self.mean_var)

    def __repr__(self) -> str:
        fitted = "unfitted" if self._posterior is None else f"S={self.draws.n_draws}"
        return f"ComponentGP({self.name!r}, kernel={self.kernel!r}, d={self.input_dim}, {fitted})"
