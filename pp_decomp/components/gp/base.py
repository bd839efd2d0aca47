"""``MarginalGP``: what every fittable GP model of pp_decomp shares.

A PyMC marginal GP on the model scale (inputs unit-scaled by ``bounds``,
outputs standardised), its hyperparameters inferred by MAP (multi-start
L-BFGS-B) or NUTS (nutpie on the structure's shared compiled model), or given
(:meth:`MarginalGP.condition`), and a batched numpy posterior over the draws
that predicts and samples in the original units. Subclasses
(:class:`~pp_decomp.ComponentGP`, :class:`~pp_decomp.additive.AdditiveGP`) say
what their model, draws and posterior are.
"""

from __future__ import annotations

import copy
import time

import numpy as np

from pp_decomp.choices import FITTED_INFERENCE
from pp_decomp.components.criticism import marginal_loo_data
from pp_decomp.components.diagnostics import FitDiagnostics, warn_if_bad
from pp_decomp.components.gp.priors import as_priors
from pp_decomp.components.gp.scaling import gradients_in_units, to_model_scale, unit_scale
from pp_decomp.components.inference.compiled import MapSearch
from pp_decomp.components.inference.nuts import (
    REWEIGHTED,
    NutsSettings,
    fit_until_converged,
    reweighted_summary,
    run_nutpie,
)
from pp_decomp.components.posterior.batched import (
    DrawPosterior,
    mixture_moments,
    mixture_quantiles,
)
from pp_decomp.components.posterior.draws import Draws
from pp_decomp.components.posterior.tree import from_draws
from pp_decomp.validate import (
    SeedLike,
    as_generator,
    check_bounds,
    check_choice,
    check_positive_int,
    check_probabilities,
    check_X,
    check_y,
)


def _nuts_settings(draws, tune, chains, target_accept, repairs, low_rank_mass_matrix):
    """The :class:`NutsSettings` of a fit; an argument left ``None`` takes the default."""
    given = dict(
        draws=draws,
        tune=tune,
        chains=chains,
        target_accept=target_accept,
        repairs=repairs,
        low_rank_mass_matrix=low_rank_mass_matrix,
    )
    return NutsSettings(**{k: v for k, v in given.items() if v is not None})


class MarginalGP:
    """Skeleton of a GP with a hyperparameter posterior (see the module docstring).

    Subclasses define ``draws_type``, :meth:`hyper_names`, :meth:`_compiled`,
    :meth:`_map_problem`, :meth:`_check_draws` and :meth:`_make_posterior`.
    """

    draws_type: type[Draws] = Draws
    label = "GP"  # how messages name the model

    def __init__(self, input_dim, *, priors, bounds, standardize, name, max_draws):
        if input_dim is None and bounds is not None:
            input_dim = np.shape(bounds)[-1]
        # None: taken from the data at the first fit (or from the problem, in a loop)
        self.input_dim = None if input_dim is None else check_positive_int(input_dim, "input_dim")
        self.priors = as_priors(priors)
        self.bounds = None if bounds is None else check_bounds(bounds, self.input_dim)
        self.standardize = bool(standardize)
        self.name = str(name)
        self.max_draws = check_positive_int(max_draws, "max_draws")
        self.idata = self.draws = None
        self.diagnostics: FitDiagnostics | None = None
        self._posterior: DrawPosterior | None = None

    def scale_X(self, X: np.ndarray) -> np.ndarray:
        """Inputs on the model's unit scale."""
        return unit_scale(X, self.bounds)

    def _set_data(self, X, y, min_rows: int = 2, mean: float = 0.0):
        X = check_X(X, "X", input_dim=self.input_dim, min_rows=min_rows)
        if self.input_dim is None:
            self.input_dim = X.shape[1]
        y = self._transformed(check_y(y, "y", n=X.shape[0]))
        self.X_train, self.y_train = X, y
        Xs, ys, self.y_mean, self.y_std = to_model_scale(
            X, y, self.bounds, standardize=self.standardize, mean=mean
        )
        return Xs, ys

    def _transformed(self, y: np.ndarray) -> np.ndarray:
        """``y`` as the model regresses it (the identity; see ``ComponentGP``'s ``transform``)."""
        return y

    def fit(
        self,
        X,
        y,
        inference: str = "map",
        *,
        draws: int | None = None,
        tune: int | None = None,
        chains: int | None = None,
        target_accept: float | None = None,
        repairs: int | None = None,
        low_rank_mass_matrix: bool | None = None,
        restarts: int = 3,
        seed: SeedLike = None,
        init: Draws | None = None,
        warn: bool = True,
    ):
        """Infer the hyperparameters from ``(X, y)`` and condition the GP on them.

        Parameters
        ----------
        X : (n, d) array, n >= 2
        y : (n,) array
        inference : {"map", "nuts"}
            ``"map"``: posterior mode by L-BFGS-B from ``restarts`` starts.
            ``"nuts"``: full posterior by nutpie on the structure's shared compiled
            model, checked and repaired until it converges
            (:mod:`pp_decomp.components.inference.nuts`).
        draws, tune, chains, target_accept, repairs, low_rank_mass_matrix :
            NUTS settings (defaults :class:`~pp_decomp.components.inference.nuts.NutsSettings`).
        seed : int or Generator
        init : draws, optional
            Warm start, typically the previous fit's draws: their mean in the
            unconstrained space is NUTS's initial point, or MAP's first start.
        warn : bool
            Warn when the NUTS fit still fails its checks after the repairs
            (off where the caller reports it, e.g. a background refit).
        """
        check_choice(inference, "inference", FITTED_INFERENCE)
        nuts = _nuts_settings(draws, tune, chains, target_accept, repairs, low_rank_mass_matrix)
        if inference == "map":
            start = time.perf_counter()
            search = self.prepare_map(X, y, restarts=restarts, seed=seed, init=init)
            return self.adopt_map(search, search.best(), time.perf_counter() - start)
        check_positive_int(restarts, "restarts")
        Xs, ys = self._set_data(X, y)
        rng = as_generator(seed)
        self.idata, self.diagnostics = fit_until_converged(self, Xs, ys, nuts, rng, init)
        group = REWEIGHTED if self.diagnostics.reweighted else "posterior"
        post = self.idata[group].to_dataset()
        hyper = self._posterior_draws(post)
        if warn:
            warn_if_bad(self.diagnostics, self.name)
        return self._adopt(Xs, ys, hyper)

    def _posterior_draws(self, posterior) -> Draws:  # its (chain, draw) stacked
        return self.draws_type.from_posterior(posterior, self.hyper_names())

    def prepare_map(
        self, X, y, *, restarts: int = 3, seed: SeedLike = None, init: Draws | None = None
    ) -> MapSearch:
        """A MAP fit up to its search, the starts drawn from ``seed``: ``fit(X, y,
        "map")`` is this, ``MapSearch.best`` and :meth:`adopt_map`; several models'
        searches may run at once (:func:`~pp_decomp.components.inference.compiled.map_searches`)."""
        check_positive_int(restarts, "restarts")
        Xs, ys = self._set_data(X, y)
        f, starts, bounds, to_draws = self._map_problem(Xs, ys, restarts, as_generator(seed), init)
        return MapSearch(f, starts, bounds, f"{self.label} {self.name!r}", to_draws, (Xs, ys))

    def adopt_map(self, search: MapSearch, best, seconds: float):
        """The model fitted at ``best``, scipy's result of ``search`` (its
        :meth:`prepare_map`), which took ``seconds``."""
        info = {"logp": -float(best.fun), "converged": bool(best.success)}
        self.idata, self._map_result = None, (search.to_draws(best.x), info)  # tree when asked
        self.diagnostics = FitDiagnostics("map", 1, seconds=seconds)
        return self._adopt(*search.data, self._map_result[0])

    def _adopt(self, Xs, ys, hyper: Draws):
        self.draws = self._completed(hyper.thin(self.max_draws))
        self._posterior = self._make_posterior(Xs, ys, self.draws)
        return self

    def condition(self, X, y, draws: Draws, mean: float = 0.0):
        """Condition on ``(X, y)`` with given hyperparameter draws (no inference).

        ``draws`` are on the model's scale (unit-scaled inputs, standardised
        outputs, or the original units when ``bounds=None, standardize=False``).
        Without standardisation ``X`` may have no rows (the prior) or one, and
        ``mean`` is the GP's constant prior mean (ignored when standardising).
        """
        if not isinstance(draws, self.draws_type):
            raise TypeError(
                f"draws must be a {self.draws_type.__name__}; got {type(draws).__name__}"
            )
        self._check_draws(draws)
        # without standardisation nothing is estimated from the data: the prior
        # (no rows) and one observation are valid posteriors
        Xs, ys = self._set_data(X, y, min_rows=2 if self.standardize else 0, mean=mean)
        self.draws = draws
        self.idata = None
        self.diagnostics = FitDiagnostics("fixed", draws.n_draws)
        self._posterior = self._make_posterior(Xs, ys, draws)
        return self

    def _completed(self, draws: Draws) -> Draws:
        """A fit's draws as the posterior takes them (a PyMC model adds its noise sd)."""
        return draws

    def _unconstrained(self, init: Draws, cm) -> np.ndarray:
        """``init``'s draws in the unconstrained (log) space, one flat row per draw: (S, k)."""
        return cm.flatten_rows({f"{n}_log__": np.log(getattr(init, n)) for n in self.hyper_names()})

    def _sample(self, Xs, ys, s: NutsSettings, seed: int, starts=None):
        """One nutpie run of the structure's shared compiled model on ``(Xs, ys)``
        (:func:`~pp_decomp.components.inference.nuts.run_nutpie`)."""
        model = self._compiled().nutpie_model.with_data(**self._nutpie_data(Xs, ys))
        return run_nutpie(model, s, seed, starts)

    def _nutpie_data(self, Xs, ys) -> dict:
        return {"X": Xs, "y": ys}

    @property
    def n_draws(self) -> int:
        """Hyperparameter draws the predictions mix (after fitting)."""
        return self.posterior.n_draws

    @property
    def posterior(self) -> DrawPosterior:
        """The batched posterior on the model's scale (after :meth:`fit` or :meth:`condition`)."""
        if self._posterior is None:
            raise RuntimeError(f"{self.label} {self.name!r} is not fitted; call fit() first")
        return self._posterior

    def loo_data(self):
        """:func:`~pp_decomp.components.criticism.marginal_loo_data` of the fit, or ``None``."""
        return marginal_loo_data(self)

    def _Xnew(self, Xnew):
        return self.scale_X(check_X(Xnew, "Xnew", input_dim=self.input_dim))

    @property
    def noise_var(self) -> np.ndarray:
        """Observation-noise variance per draw in original units, jitter included: (S,)."""
        return self.y_std**2 * self.posterior.noise_var

    def predict_per_draw(self, Xnew, pred_noise: bool = False):
        """Per-draw means and variances at ``Xnew`` in original units: (S, m), (S, m)."""
        mean, var = self.posterior.per_draw(self._Xnew(Xnew))
        if pred_noise:  # the likelihood's noise, jitter included
            var = var + self.posterior.noise_var[:, None]
        return self.y_mean + self.y_std * mean, self.y_std**2 * var

    def predict_per_draw_grad(self, Xnew) -> tuple[np.ndarray, ...]:
        """:meth:`predict_per_draw` (latent ``f``) and its gradients in ``Xnew (m, d)``:
        (S, m), (S, m), (S, m, d), (S, m, d) (:mod:`~pp_decomp.components.posterior.gradient`)."""
        moments = self.posterior.per_draw_grad(self._Xnew(Xnew))
        return gradients_in_units(moments, self.y_mean, self.y_std, self.bounds)

    def joint_predict_per_draw(self, Xnew, idx=None) -> tuple[np.ndarray, np.ndarray]:
        """Per-draw joint means (S', m) and covariances (S', m, m) of ``f`` at ``Xnew``,
        in original units, for the draws ``idx`` (default all)."""
        mean, cov = self.posterior.joint_per_draw(self._Xnew(Xnew), idx)
        return self.y_mean + self.y_std * mean, self.y_std**2 * cov

    def predict(self, Xnew, pred_noise: bool = False) -> tuple[np.ndarray, np.ndarray]:
        """Mixture posterior mean and variance at ``Xnew (m, d)`` in original units: (m,)
        each, ``var = E_s σ_s² + Var_s μ_s`` (plus the noise with ``pred_noise``)."""
        return mixture_moments(*self.predict_per_draw(Xnew, pred_noise))

    def quantiles(self, Xnew, q, pred_noise: bool = False) -> np.ndarray:
        """The ``q``-quantiles of the mixture ``(1/S) Σ_s N(μ_s, σ_s²)`` at ``Xnew (m, d)``
        in original units: ``(len(q), m)``, exact to 1e-10 of its range (bisection)."""
        mean, var = self.predict_per_draw(Xnew, pred_noise)
        return mixture_quantiles(mean, np.sqrt(var), check_probabilities(q, "q"))

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
        z = self.posterior.sample(
            self._Xnew(Xnew), n_samples, as_generator(seed), joint, pred_noise
        )
        return self.y_mean + self.y_std * z

    @property
    def idata(self):
        """The last fit's posterior as ArviZ takes it (:mod:`pp_decomp.components.posterior.tree`;
        MAP: one draw), or None."""
        if self._idata is None and self._map_result is not None:
            self._idata = _map_idata(*self._map_result, self.hyper_names())
        return self._idata

    @idata.setter
    def idata(self, value) -> None:
        self._idata, self._map_result = value, None

    def summary(self):
        """ArviZ summary table of the last NUTS/MAP fit (:func:`posterior_summary`)."""
        return posterior_summary(self)


def believing(gp: MarginalGP, Xnew) -> MarginalGP:
    """A copy of the fitted ``gp`` that has also observed, under each hyperparameter
    draw, its own posterior mean at ``Xnew (k, d)`` (original units): every draw's mean
    is unchanged, its variance reduced by what ``Xnew`` would tell
    (:meth:`~pp_decomp.components.posterior.batched.GPPosterior.believing`; GP-BUCB's
    hallucinated pending inputs). ``gp`` itself is unchanged.

    >>> import numpy as np
    >>> from pp_decomp import ComponentGP
    >>> X = np.linspace(0, 1, 6)[:, None]
    >>> gp = ComponentGP(bounds=[[0.0], [1.0]]).fit(X, np.sin(6 * X[:, 0]), seed=0)
    >>> b = believing(gp, [[0.55]])
    >>> bool(b.predict([[0.5]])[1][0] < gp.predict([[0.5]])[1][0])
    True
    """
    believed = copy.copy(gp)
    believed._posterior = gp.posterior.believing(gp._Xnew(Xnew))
    return believed


def posterior_summary(gp):
    """ArviZ summary table of ``gp``'s last NUTS/MAP fit.

    Where NUTS's chains were weighed by importance sampling
    (``diagnostics.reweighted``) the table is of the draws in use, the
    resample: its ``ess_bulk`` and ``ess_tail`` are the importance weights'
    ESS, ``mcse_mean`` is ``sd / sqrt(ESS)`` and ``r_hat`` is NaN (the
    resample has no chains; the chains' own are in ``idata["posterior"]``).
    """
    import arviz_stats

    if gp.idata is None:
        raise RuntimeError(f"{gp.label} {gp.name!r} has no posterior (not fitted by fit())")
    d = gp.diagnostics
    if d.reweighted:
        return reweighted_summary(gp.idata, gp.hyper_names(), d.ess_bulk_min)
    kind = "all" if d.inference == "nuts" else "stats"
    return arviz_stats.summary(gp.idata, var_names=gp.hyper_names(), kind=kind)


def _map_idata(hyper: Draws, info: dict, names):
    posterior = {n: getattr(hyper, n)[None] for n in names}
    return from_draws(posterior, inference="map", **{k: str(v) for k, v in info.items()})
