"""``ComponentGP``: one observed component ``f_j`` as a PyMC marginal GP with priors."""

from __future__ import annotations

import threading
import time

import arviz as az
import numpy as np
from scipy import optimize

from pp_decomp.components.draws import HyperDraws
from pp_decomp.components.posterior import JITTER, GPPosterior
from pp_decomp.components.priors import Priors
from pp_decomp.diagnostics import FitDiagnostics, summarize_nuts, warn_if_bad
from pp_decomp.kernels import canonical_kernel
from pp_decomp.rng import SeedLike, as_generator, int_seed
from pp_decomp.validate import check_bounds, check_choice, check_positive_int, check_X, check_y

INFERENCE = ("map", "nuts")
_MAP_LOCK = threading.Lock()


class ComponentGP:
    """A PyMC ``pm.gp.Marginal`` model of one component with a hyperparameter posterior.

    The model (:func:`pp_decomp.components.model.build_model`) is

    ``ℓ_d ~ InverseGamma``, ``η ~ Gamma``, ``σ ~ Gamma`` (``α ~ Gamma`` for ``rq``),
    ``ỹ ~ MvNormal(0, η² k_ℓ(X̃, X̃) + (σ² + 10⁻⁶) I)``

    on unit-scaled inputs ``X̃ = (X - lower) / (upper - lower)`` and standardised
    outputs ``ỹ = (y - ȳ) / s_y``. Predictions are returned in the original units.

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
        Standardise ``y`` before fitting (default). With ``False`` the GP has
        prior mean 0 in the original units, as in the papers' known-kernel studies.
    name : str
        Component name used in warnings and labels.
    max_draws : int
        Hyperparameter draws kept for prediction (evenly thinned from the
        posterior); the full posterior stays in :attr:`idata`.

    Attributes
    ----------
    idata : arviz.InferenceData
        The last fit's posterior (one draw for ``"map"``).
    draws : HyperDraws
        The draws used for prediction.
    diagnostics : FitDiagnostics
        Convergence summary of the last fit.
    """

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
        self.input_dim = check_positive_int(input_dim, "input_dim")
        self.priors = priors if priors is not None else Priors()
        if not isinstance(self.priors, Priors):
            raise TypeError(f"priors must be a pp_decomp.Priors; got {type(priors).__name__}")
        self.bounds = None if bounds is None else check_bounds(bounds, self.input_dim)
        self.standardize = bool(standardize)
        self.name = str(name)
        self.max_draws = check_positive_int(max_draws, "max_draws")
        self.idata = None
        self.draws: HyperDraws | None = None
        self.diagnostics: FitDiagnostics | None = None
        self._posterior: GPPosterior | None = None

    # ----------------------------------------------------------------- scaling
    def scale_X(self, X: np.ndarray) -> np.ndarray:
        """Inputs on the model's unit scale."""
        return unit_scale(X, self.bounds)

    def _set_data(self, X, y, min_rows: int = 2, mean: float = 0.0):
        X = check_X(X, "X", input_dim=self.input_dim, min_rows=min_rows)
        y = check_y(y, "y", n=X.shape[0])
        self.X_train, self.y_train = X, y
        Xs, ys, self.y_mean, self.y_std = to_model_scale(
            X, y, self.bounds, standardize=self.standardize, mean=mean
        )
        return Xs, ys

    # ----------------------------------------------------------------- fitting
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
        init: HyperDraws | None = None,
    ) -> ComponentGP:
        """Infer the hyperparameters from ``(X, y)`` and condition the GP on them.

        Parameters
        ----------
        X : (n, d) array, n >= 2
        y : (n,) array
        inference : {"map", "nuts"}
            ``"map"``: posterior mode by L-BFGS-B from ``restarts`` starts (one at
            the prior mean, the rest drawn from the prior). ``"nuts"``: full
            posterior by nutpie on the structure's shared compiled model.
        draws, tune, chains : int
            NUTS settings.
        seed : int or Generator
        init : HyperDraws, optional
            Warm start, typically the previous fit's draws: their mean in the
            unconstrained space is NUTS's initial point, or MAP's first start
            (replacing the prior-mean start).
        """
        check_choice(inference, "inference", INFERENCE)
        check_positive_int(draws, "draws")
        check_positive_int(tune, "tune", minimum=0)
        check_positive_int(chains, "chains")
        check_positive_int(restarts, "restarts")
        Xs, ys = self._set_data(X, y)
        rng = as_generator(seed)
        start = time.perf_counter()
        if inference == "map":
            hyper, info = self._fit_map(Xs, ys, restarts, rng, init)
            self.idata = _map_idata(hyper, info)
            self.diagnostics = FitDiagnostics("map", 1, seconds=time.perf_counter() - start)
        else:
            self.idata = self._fit_nuts(Xs, ys, draws, tune, chains, rng, init)
            hyper = HyperDraws.from_posterior(self.idata.posterior, self.kernel == "rq")
            names = ["ls", "eta", "sigma"] + (["alpha"] if self.kernel == "rq" else [])
            self.diagnostics = summarize_nuts(self.idata, names, time.perf_counter() - start)
            warn_if_bad(self.diagnostics, self.name)
        self.draws = hyper.thin(self.max_draws)
        self._posterior = GPPosterior(self.kernel, Xs, ys, self.draws, JITTER)
        return self

    def condition(self, X, y, draws: HyperDraws, mean: float = 0.0) -> ComponentGP:
        """Condition on ``(X, y)`` with given hyperparameter draws (no inference).

        ``draws`` are on the model's scale (unit-scaled inputs, standardised
        outputs, or the original units when ``bounds=None, standardize=False``).
        Without standardisation ``X`` may have no rows (the prior) or one, and
        ``mean`` is the GP's constant prior mean (ignored when standardising).
        """
        if not isinstance(draws, HyperDraws):
            raise TypeError(f"draws must be a HyperDraws; got {type(draws).__name__}")
        if draws.input_dim != self.input_dim:
            raise ValueError(
                f"draws.ls has {draws.input_dim} column(s) but input_dim is {self.input_dim}"
            )
        if (draws.alpha is None) != (self.kernel != "rq"):
            raise ValueError(
                f"draws.alpha must be given exactly for kernel 'rq'; kernel is "
                f"{self.kernel!r} and alpha is {draws.alpha!r}"
            )
        # without standardisation nothing is estimated from the data: the prior
        # (no rows) and one observation are valid posteriors
        Xs, ys = self._set_data(X, y, min_rows=2 if self.standardize else 0, mean=mean)
        self.draws = draws
        self.idata = None
        self.diagnostics = FitDiagnostics("fixed", draws.n_draws)
        self._posterior = GPPosterior(self.kernel, Xs, ys, draws, JITTER)
        return self

    def _unconstrained_mean(self, init: HyperDraws, names) -> np.ndarray:
        parts = {
            "ls_log__": np.log(init.ls).mean(0),
            "eta_log__": [np.log(init.eta).mean()],
            "sigma_log__": [np.log(init.sigma).mean()],
            "alpha_log__": [np.log(init.alpha).mean()] if init.alpha is not None else [],
        }
        return np.concatenate([np.asarray(parts[n], dtype=float) for n in names])

    def _fit_map(self, Xs, ys, restarts, rng, init=None):
        from pp_decomp.components.model import compiled_model  # PyMC loads only when fitting

        cm = compiled_model(self.kernel, self.input_dim, self.priors)
        p = self.priors
        names = cm.value_names
        center = {
            "ls_log__": np.full(self.input_dim, np.log(p.ls_beta / (p.ls_alpha - 1.0)))
            if p.ls_alpha > 1
            else np.zeros(self.input_dim),
            "eta_log__": np.array([np.log(p.eta_alpha / p.eta_beta)]),
            "sigma_log__": np.array([np.log(p.sigma_alpha / p.sigma_beta)]),
            "alpha_log__": np.array([np.log(p.alpha_alpha / p.alpha_beta)]),
        }
        starts = [np.concatenate([center[n] for n in names])]
        if init is not None:
            starts = [self._unconstrained_mean(init, names)]
        for _ in range(restarts - 1):
            draw = {
                "ls_log__": np.log(p.ls_beta / rng.gamma(p.ls_alpha, size=self.input_dim)),
                "eta_log__": np.log([rng.gamma(p.eta_alpha) / p.eta_beta]),
                "sigma_log__": np.log([rng.gamma(p.sigma_alpha) / p.sigma_beta]),
                "alpha_log__": np.log([rng.gamma(p.alpha_alpha) / p.alpha_beta]),
            }
            starts.append(np.concatenate([draw[n] for n in names]))
        best = None
        with _MAP_LOCK:  # the compiled model's data are shared state
            f = cm.logp_and_grad(Xs, ys)
            for z0 in starts:
                res = optimize.minimize(
                    f, z0, jac=True, method="L-BFGS-B", bounds=cm.search_bounds()
                )
                if np.isfinite(res.fun) and (best is None or res.fun < best.fun):
                    best = res
        if best is None:
            raise RuntimeError(f"component {self.name!r}: MAP optimisation failed from all starts")
        values = dict(zip(names, np.split(np.exp(best.x), np.cumsum(cm.sizes())[:-1]), strict=True))
        hyper = HyperDraws(
            ls=values["ls_log__"][None, :],
            eta=values["eta_log__"],
            sigma=values["sigma_log__"],
            alpha=values.get("alpha_log__"),
        )
        return hyper, {"logp": -float(best.fun), "converged": bool(best.success)}

    def _fit_nuts(self, Xs, ys, draws, tune, chains, rng, init=None):
        import nutpie

        from pp_decomp.components.model import compiled_model

        cm = compiled_model(self.kernel, self.input_dim, self.priors)
        model = cm.nutpie_model.with_data(X=Xs, y=ys)
        kwargs = {}
        if init is not None:
            kwargs["init_mean"] = self._unconstrained_mean(init, cm.value_names)
        return nutpie.sample(
            model,
            **kwargs,
            draws=draws,
            tune=tune,
            chains=chains,
            cores=min(chains, 2),
            seed=int_seed(rng),
            progress_bar=False,
        )

    # -------------------------------------------------------------- prediction
    @property
    def posterior(self) -> GPPosterior:
        """The batched posterior on the model's scale (after :meth:`fit` or :meth:`condition`)."""
        if self._posterior is None:
            raise RuntimeError(f"component {self.name!r} is not fitted; call fit() first")
        return self._posterior

    def _Xnew(self, Xnew):
        return self.scale_X(check_X(Xnew, "Xnew", input_dim=self.input_dim))

    def predict_per_draw(self, Xnew, pred_noise: bool = False):
        """Per-draw means and variances at ``Xnew`` in original units: (S, m), (S, m)."""
        mean, var = self.posterior.mean_var_per_draw(self._Xnew(Xnew))
        if pred_noise:
            var = var + (self.draws.sigma**2)[:, None]
        return self.y_mean + self.y_std * mean, self.y_std**2 * var

    def predict(self, Xnew, pred_noise: bool = False) -> tuple[np.ndarray, np.ndarray]:
        """Mixture posterior mean and variance at ``Xnew`` (m, d) in original units.

        Returns
        -------
        mean, var : (m,) arrays; ``var = E_s σ_s² + Var_s μ_s`` (plus noise if ``pred_noise``).
        """
        mean_s, var_s = self.predict_per_draw(Xnew, pred_noise)
        return mean_s.mean(0), var_s.mean(0) + mean_s.var(0)

    def sample(
        self,
        Xnew,
        n_samples: int,
        seed: SeedLike = None,
        joint: bool = False,
        pred_noise: bool = False,
    ) -> np.ndarray:
        """Posterior samples at ``Xnew`` in original units: (n_samples, m).

        Samples span the hyperparameter posterior (a draw index is picked per sample).
        """
        check_positive_int(n_samples, "n_samples")
        z = self.posterior.sample(
            self._Xnew(Xnew), n_samples, as_generator(seed), joint, pred_noise
        )
        return self.y_mean + self.y_std * z

    def prior_cov(self, X1, X2) -> np.ndarray:
        """Prior covariance per draw in original units: (S, n1, n2)."""
        X1 = self.scale_X(check_X(X1, "X1", input_dim=self.input_dim, min_rows=0))
        X2 = self.scale_X(check_X(X2, "X2", input_dim=self.input_dim, min_rows=0))
        return self.y_std**2 * self.posterior.prior_cov(X1, X2)

    @property
    def prior_var(self) -> np.ndarray:
        """Prior variance ``k(x, x) = s_y² η²`` per draw in original units (stationary): (S,)."""
        return self.y_std**2 * self.draws.eta**2

    @property
    def noise_var(self) -> np.ndarray:
        """Observation-noise variance per draw in original units, jitter included: (S,)."""
        return self.y_std**2 * (self.draws.sigma**2 + JITTER)

    def summary(self):
        """ArviZ summary table of the last NUTS/MAP fit."""
        if self.idata is None:
            raise RuntimeError(
                f"component {self.name!r} has no InferenceData (not fitted by fit())"
            )
        names = ["ls", "eta", "sigma"] + (["alpha"] if self.kernel == "rq" else [])
        kind = "all" if self.diagnostics.inference == "nuts" else "stats"
        return az.summary(self.idata, var_names=names, kind=kind)

    def __repr__(self) -> str:
        fitted = "unfitted" if self._posterior is None else f"S={self.draws.n_draws}"
        return f"ComponentGP({self.name!r}, kernel={self.kernel!r}, d={self.input_dim}, {fitted})"


def unit_scale(X: np.ndarray, bounds: np.ndarray | None) -> np.ndarray:
    """``(X - lower) / (upper - lower)`` for ``bounds = (lower, upper)``; ``X`` if ``None``."""
    X = np.asarray(X, dtype=float)
    if bounds is None:
        return X
    return (X - bounds[0]) / (bounds[1] - bounds[0])


def to_model_scale(
    X: np.ndarray, y: np.ndarray, bounds, *, standardize: bool = True, mean: float = 0.0
) -> tuple[np.ndarray, np.ndarray, float, float]:
    """Validated data on a GP model's scale: ``(X̃, ỹ, ȳ, s_y)``.

    ``X̃`` is :func:`unit_scale` of ``X``; ``ỹ = (y - ȳ) / s_y`` with ``ȳ, s_y``
    from :func:`output_standardization`, or ``ȳ = mean, s_y = 1`` without
    standardisation.
    """
    if standardize:
        y_mean, y_std = output_standardization(y)
    else:
        y_mean, y_std = float(mean), 1.0
    return unit_scale(X, bounds), (y - y_mean) / y_std, y_mean, y_std


def output_standardization(y: np.ndarray) -> tuple[float, float]:
    """Mean and scale that standardise ``y``; scale 1 when ``y`` is constant."""
    mean, sd = float(np.mean(y)), float(np.std(y))
    return mean, (sd if sd > 1e-12 * max(1.0, abs(mean)) else 1.0)


def _map_idata(hyper: HyperDraws, info: dict):
    post = {"ls": hyper.ls[None], "eta": hyper.eta[None], "sigma": hyper.sigma[None]}
    if hyper.alpha is not None:
        post["alpha"] = hyper.alpha[None]
    idata = az.from_dict(posterior=post)
    idata.posterior.attrs.update(inference="map", **{k: str(v) for k, v in info.items()})
    return idata
