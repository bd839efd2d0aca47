"""A run's posterior of every component and of the objective at given inputs.

With the models the last choice used (``Optimizer.models``; in a session that has
made no choice yet, a resumed run, the run's models fitted afresh on every
observation, which leaves the run's choices unchanged) and over their
hyperparameter posterior (the draws, each a Gaussian process):

* components ``f_j(x)``: the mixture over draws ``(1/S) Σ_s N(μ_{s,j}(x), σ²_{s,j}(x))``,
  in the system's units (``exp`` of the modelled ``log y_j`` under the log transform);
* the objective ``f(x) = g(f_1(x), ..., f_J(x); x)``: for a linear ``g`` (and no
  outcome transform) the mixture ``(1/S) Σ_s N(m_s(x), v_s(x))`` of
  ``m_s = Σ_j g_j(x) μ_{s,j}`` and ``v_s = Σ_{jk} g_j g_k C_jk σ_{s,j} σ_{s,k}``
  (``C``: the copula's or the coregionalised model's correlation, else ``I``);
  otherwise Monte Carlo: the component draws, jointly across components as the
  strategy draws them, pushed through ``g``. A composed strategy's one GP of the
  objective is its posterior directly.

Means, standard deviations and quantiles are exact for the mixtures (the
quantiles by bisection on the mixture's distribution function) and sample
statistics for Monte Carlo; ``bound`` is the upper bound of ``sign · f`` the
strategy maximises (:func:`pp_decomp.loop.step_bound.ucb_bound`, at the last
choice's ``β``).

Example
-------
>>> import pp_decomp as ppd
>>> from pp_decomp.models import get_problem
>>> opt = ppd.Optimizer(get_problem("synthetic", seed=0), seed=0)
>>> _ = opt.run(8)
>>> ds = opt.predict(opt.problem.domain.X[:3], n_samples=200)
>>> ds["objective_quantile"].dims, ds.attrs["objective_method"]
(('quantile', 'point'), 'analytic')
"""

from __future__ import annotations

import numpy as np
import xarray as xr

from pp_decomp.acquisition.surrogate import decomposed_surrogate, warped
from pp_decomp.components.posterior.batched import mixture_moments, mixture_quantiles
from pp_decomp.loop.records import VIEW_STREAM, FitNotes
from pp_decomp.loop.settings import RunSettings
from pp_decomp.loop.setup import RunSetup
from pp_decomp.loop.state import LoopState
from pp_decomp.loop.step_bound import objective_samples, ucb_bound
from pp_decomp.loop.updaters import loop_data
from pp_decomp.loop.updaters.factory import make_updater
from pp_decomp.problem import is_identity
from pp_decomp.validate import (
    SeedLike,
    as_generator,
    check_positive_int,
    check_probabilities,
    check_X,
)


def predict(
    setup: RunSetup,
    state: LoopState,
    models: dict,
    X,
    *,
    n_samples: int = 1000,
    quantiles=(0.05, 0.5, 0.95),
    seed: SeedLike = 0,
) -> xr.Dataset:
    """The posterior at ``X (m, d)`` as an xarray Dataset (see the module docstring).

    Variables: ``component_draws (sample, point, component)``,
    ``objective_draws (sample, point)``, ``component_mean``/``_sd``
    ``(point, component)``, ``component_quantile (quantile, point, component)``,
    ``objective_mean``/``_sd (point)``, ``objective_quantile (quantile, point)``,
    ``bound (point)``; a composed strategy has no component variables. Attributes
    say which summaries are ``"analytic"`` or ``"monte carlo"``. ``models``: the
    GPs by name of the last choice (:func:`fit_afresh` where there is none).
    """
    problem, strategy = setup.problem, setup.strategy
    X = check_X(X, "X", input_dim=problem.dim)
    n_samples = check_positive_int(n_samples, "n_samples", minimum=2)
    q = check_probabilities(quantiles, "quantiles")
    if "composed" not in models and "additive" in models:
        raise ValueError(f"predict does not cover the additive strategies ({strategy.name})")
    rng = as_generator(seed)
    sign = problem.sign
    if "composed" in models and strategy.surrogate == "composed":
        mean_h, var_h = models["composed"].predict_per_draw(X)  # of h = sign · f
        ds = _mixture(sign * mean_h, var_h, q)
        h = _mixture_draws(mean_h, var_h, n_samples, rng)
        ds["objective_draws"] = (("sample", "point"), sign * h)
    elif strategy.surrogate == "network":
        ds, h = _network(setup, models, X, q, n_samples, rng, state.n)
    else:
        ds, h = _decomposed(setup, models, X, q, n_samples, rng)
    beta = _last_beta(state, setup.settings)
    ds["bound"] = ("point", ucb_bound(setup, state, models, state.n + 1, X, h, beta, rng))
    ds["X"] = (("point", "input"), X)
    ds = ds.assign_coords(quantile=q, input=list(problem.input_names))
    units = problem.units
    for var in ("objective_draws", "objective_mean", "objective_sd", "objective_quantile"):
        ds[var].attrs["units"] = units["objective"] or "the problem's own (not declared)"
    s = setup.settings
    ds.attrs.update(strategy=s.strategy, inference=s.inference.method, n=state.n)
    return ds


def fit_afresh(setup: RunSetup, state: LoopState, what: str) -> dict:
    """The run's models fitted on every observation by a fresh updater of the run's
    kind, on a stream of its own (for a session that has made no choice yet: a
    resumed run): the run's state and choices are untouched. ``what`` names the
    caller in the error raised before the initial design is in."""
    s = setup.settings
    updater = make_updater(s, setup.strategy, setup.model_problem)
    if updater is None or state.n < max(2, s.n_init):
        raise ValueError(
            f"{what} needs a model fitted on the initial design; this run has {state.n} "
            f"evaluation(s) (n_init={s.n_init}) and strategy {s.strategy!r}"
        )
    rng = state.rng(state.n, VIEW_STREAM)
    return updater.update(loop_data(setup, state), state.n + 1, rng, FitNotes())


def _decomposed(
    setup: RunSetup, models: dict, X, q, n_samples, rng
) -> tuple[xr.Dataset, np.ndarray]:
    """Component and objective variables of a decomposed strategy, and the signed
    objective's draws ``h (n, m)``."""
    problem, copula = setup.model_problem, setup.settings.model.copula
    transform = setup.settings.model.outcome_transform
    names = problem.component_names
    h, comps = objective_samples(setup, models, X, n_samples, rng)
    models = [models[n] for n in names]
    ds = xr.Dataset(coords={"component": list(names)})
    ds["component_draws"] = (("sample", "point", "component"), comps)
    if is_identity(transform):
        exact = [_exact(m, X, q) for m in models]
        mean, var, quant = (np.stack([e[k] for e in exact], -1) for k in range(3))
        sd = np.sqrt(var)
        ds.attrs["component_method"] = "analytic"
    else:
        mean, sd, quant = comps.mean(0), comps.std(0), np.quantile(comps, q, axis=0)
        ds.attrs["component_method"] = "monte carlo"
    ds["component_mean"] = (("point", "component"), mean)
    ds["component_sd"] = (("point", "component"), sd)
    ds["component_quantile"] = (("quantile", "point", "component"), quant)
    if problem.linear is not None:
        surrogate = decomposed_surrogate(models, problem, copula=copula)
        mean_h, var_h = surrogate.linear_per_draw(X)  # of h = sign · f
        obj = _mixture(problem.sign * mean_h, var_h, q)
        obj["objective_draws"] = (("sample", "point"), problem.sign * h)
    else:
        obj = _sampled(problem.sign * h, q)
    return ds.merge(obj, combine_attrs="no_conflicts"), h


def _exact(gp, X, q) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A component's mixture mean and variance (m,) and quantiles (k, m) at ``X``: a
    warped GP's by its own quadrature and exact quantiles."""
    if warped(gp):
        return *gp.predict(X), gp.quantiles(X, q)
    mu, v = gp.predict_per_draw(X)
    return *mixture_moments(mu, v), mixture_quantiles(mu, np.sqrt(v), q)


def _network(
    setup: RunSetup, models: dict, X, q, n_samples, rng, shared: int
) -> tuple[xr.Dataset, np.ndarray]:
    """Node and objective variables of a network strategy, by sampling through the
    network (:class:`~pp_decomp.network.NetworkSurrogate`): each node's draws carry its
    parents' uncertainty; a copula on the ``shared`` evaluations (the run's ``n``).
    Returns them and the signed objective's draws ``h (n, m)``."""
    names = setup.model_problem.component_names
    h, F = objective_samples(setup, models, X, n_samples, rng, shared)
    ds = xr.Dataset(coords={"component": list(names)})
    ds["component_draws"] = (("sample", "point", "component"), F)
    ds["component_mean"] = (("point", "component"), F.mean(0))
    ds["component_sd"] = (("point", "component"), F.std(0))
    ds["component_quantile"] = (("quantile", "point", "component"), np.quantile(F, q, axis=0))
    ds.attrs["component_method"] = "monte carlo"
    f = setup.model_problem.sign * h
    return ds.merge(_sampled(f, q), combine_attrs="no_conflicts"), h


def _mixture(mean_s: np.ndarray, var_s: np.ndarray, q) -> xr.Dataset:
    """The objective's summaries from per-draw means and variances ``(S, m)`` of ``f``:
    the exact equal-weight mixture's mean, sd and quantiles."""
    mean, var = mixture_moments(mean_s, var_s)
    return xr.Dataset(
        {
            "objective_mean": ("point", mean),
            "objective_sd": ("point", np.sqrt(var)),
            "objective_quantile": (
                ("quantile", "point"),
                mixture_quantiles(mean_s, np.sqrt(var_s), q),
            ),
        },
        attrs={"objective_method": "analytic"},
    )


def _mixture_draws(mean_s: np.ndarray, var_s: np.ndarray, n: int, rng) -> np.ndarray:
    """``n`` draws ``(n, m)`` of the equal-weight mixture, a draw index per sample."""
    s = rng.integers(0, mean_s.shape[0], n)
    return mean_s[s] + np.sqrt(var_s[s]) * rng.standard_normal((n, mean_s.shape[1]))


def _sampled(draws: np.ndarray, q) -> xr.Dataset:
    """The objective's variables from its draws ``(n, m)``."""
    return xr.Dataset(
        {
            "objective_draws": (("sample", "point"), draws),
            "objective_mean": ("point", draws.mean(0)),
            "objective_sd": ("point", draws.std(0)),
            "objective_quantile": (("quantile", "point"), np.quantile(draws, q, axis=0)),
        },
        attrs={"objective_method": "monte carlo"},
    )


def _last_beta(state: LoopState, settings: RunSettings) -> float:
    """``β`` of the last model-based choice (pending or told), else of the next step."""
    records = [*state.records, *(rec for _, rec in state.pending.items)]
    chosen = [r for r in records if r.get("phase") == "acquisition" and np.isfinite(r["beta"])]
    if not chosen:
        return float(settings.acquisition.beta(state.n + 1))
    return float(max(chosen, key=lambda r: r.get("key", 0))["beta"])
