"""A run's history as a self-describing xarray Dataset; regret; package versions.

The Dataset follows the CF conventions' attributes: every variable has a
``long_name``, ``units`` and ``description``; counts are integers; the run's
settings are one JSON attribute; the loop's resume state lives apart, in the
file's ``checkpoint`` group (:mod:`pp_decomp.loop.checkpoint`).
"""

from __future__ import annotations

import json
from functools import lru_cache
from importlib.metadata import PackageNotFoundError, version

import numpy as np
import xarray as xr

_VERSIONED = (
    "pp-decomp",
    "pymc",
    "pytensor",
    "arviz",
    "arviz-base",
    "arviz-stats",
    "nutpie",
    "numba",
    "numpy",
    "scipy",
    "xarray",
)
_UNIT_X = "1 (unit-scaled input, (x - lower) / (upper - lower))"
_STD_Y = "1 (standardised output, (y - mean) / sd)"
_SIGNED = (
    "of the signed objective h = sign·f that the loop maximises (sign = -1 when the "
    "problem minimises, so larger is better in either case)"
)

# name: (long_name, units, description); units "problem" means the objective's own
ATTRS = {
    "x": ("input", "problem", "the input evaluated at each iteration"),
    "y": ("observed component", "problem", "the system's J outputs y_j = f_j(x) + noise"),
    "objective": ("observed objective", "problem", "g(y; x) of the observed components"),
    "phase": (
        "phase",
        "",
        "init: space-filling design; acquisition: chosen by the strategy; "
        "user: told without asking",
    ),
    "acq_value": ("acquisition value", "problem", f"the maximised acquisition, {_SIGNED}"),
    "beta": ("exploration weight β_t", "1", "the UCB schedule's β_t at this step"),
    "ask_seconds": ("ask time", "s", "wall time of ask(): model update and acquisition"),
    "fit_seconds": ("fit time", "s", "wall time of the model update within ask()"),
    "refit": ("refitted", "", "whether the GP's hyperparameters were (re)inferred at this step"),
    "ls_mean": (
        "lengthscale (mean over draws)",
        _UNIT_X,
        "posterior mean of each ARD lengthscale at a refit; NaN elsewhere",
    ),
    "eta_mean": (
        "amplitude (mean over draws)",
        _STD_Y,
        "posterior mean of η at a refit; NaN elsewhere",
    ),
    "sigma_mean": (
        "noise sd (mean over draws)",
        _STD_Y,
        "posterior mean of σ at a refit; NaN elsewhere",
    ),
    "rhat_max": (
        "largest r-hat",
        "1",
        "rank-normalised split r-hat, worst hyperparameter of a refit that uses its NUTS "
        "chains as they ran (NaN for weighted draws)",
    ),
    "ess_bulk_min": (
        "smallest bulk ESS",
        "1",
        "bulk effective sample size, worst hyperparameter (weighted draws: the weights' ESS)",
    ),
    "ess_tail_min": ("smallest tail ESS", "1", "tail effective sample size, worst hyperparameter"),
    "divergences": (
        "divergent transitions",
        "1",
        "divergent NUTS transitions of a refit (0 where none ran)",
    ),
    "repairs": (
        "NUTS repairs",
        "1",
        "reruns of a refit that failed the convergence thresholds (0 where none ran)",
    ),
    "converged": (
        "refit converged",
        "",
        "whether the draws the refit's predictions use (fit_draws) met the thresholds of "
        "pp_decomp.components.diagnostics.CONVERGENCE: chains r-hat ≤ 1.01, bulk and tail "
        "ESS ≥ 400, "
        "no divergence; weighted draws Pareto k ≤ 0.7 and importance ESS ≥ 400 (prior "
        "importance: ≥ the draws kept); MAP fits count as converged; False where none ran",
    ),
    "reweighted": (
        "refit chains reweighted",
        "",
        "whether a NUTS refit's chains disagreed and were weighed by importance sampling",
    ),
    "fit_draws": (
        "draws the refit uses",
        "",
        "map, chains, reweighted chains, prior, posterior or laplace importance, or kept "
        "(a refit on many points failed its checks: the previous draws, reweighted, "
        "stay in use while NUTS repairs): what the diagnostics beside it describe "
        "('' where no refit ran)",
    ),
    "fit_pareto_k": (
        "Pareto k of a refit's importance weights",
        "1",
        "where a refit's draws are weighted (reweighted chains, importance); NaN elsewhere",
    ),
    "fit_ess_needed": (
        "ESS the refit's draws must reach",
        "1",
        "the threshold fit_draws is judged by: 400 for chains and weighted draws, the draws "
        "kept for prior importance; NaN for MAP (no sample)",
    ),
    "refit_seconds": ("refit time", "s", "wall time of the refit (structure learning included)"),
    "ess": (
        "ESS of reweighted draws",
        "1",
        "fast path: effective sample size of the importance-reweighted hyperparameter draws in use",
    ),
    "pareto_k": (
        "Pareto k of the importance weights",
        "1",
        "fast path: Pareto k-hat of the reweighted draws' importance weights (-inf before "
        "any reweighting); above the threshold of FastSettings a refit starts",
    ),
    "elpd_loo": (
        "PSIS-LOO elpd",
        "log density",
        "Σ_i log p(y_i | y_-i) of the GP's own observations under the posterior the "
        "step used, in the component's units (pp_decomp.components.criticism)",
    ),
    "loo_k_max": (
        "largest PSIS-LOO Pareto k",
        "1",
        "worst observation's Pareto k of the leave-one-out importance weights "
        "(NaN for MAP, whose LOO is exact; above 0.7 its LOO is unreliable)",
    ),
    "loo_pit_distance": (
        "LOO-PIT distance",
        "1",
        "max |ECDF(u) - u| of the LOO-PIT values (0: calibrated; about 1.36/sqrt(n) is "
        "the 5% Kolmogorov-Smirnov critical value for independent values)",
    ),
    "loo_pit_p": (
        "LOO-PIT uniformity p-value",
        "1",
        "arviz-stats' uniformity test of the LOO-PIT values (small: miscalibrated)",
    ),
    "loo_coverage": (
        "LOO coverage at 95%",
        "1",
        "share of the GP's observations inside their central 95% leave-one-out interval",
    ),
    "hyper_posterior": (
        "hyperparameter posterior",
        "model scale",
        "each refit's hyperparameter posterior over its draws (mean, sd, 5% and 95% "
        "quantiles) on the model's scale: lengthscales on unit-scaled inputs, amplitudes "
        "and noise in standardised output units; NaN where no refit ran",
    ),
    "structure": (
        "additive structure",
        "",
        "the learnt groups of input dimensions (JSON) where relearnt",
    ),
    "true_objective": ("true objective", "problem", "noise-free f(x) at the evaluated input"),
    "regret": ("instantaneous regret", "problem", "f* - f(x_t) (f(x_t) - f* when minimising)"),
    "cumulative_regret": ("cumulative regret", "problem", "R_T = Σ_{t≤T} regret_t"),
    "simple_regret": ("simple regret", "problem", "min_{t≤T} regret_t"),
}
_REFIT_FLOAT = (
    "eta_mean",
    "sigma_mean",
    "rhat_max",
    "ess_bulk_min",
    "ess_tail_min",
    "fit_pareto_k",
    "fit_ess_needed",
)


def package_versions() -> dict[str, str]:
    """Versions of the packages a result depends on."""
    return dict(_package_versions())


@lru_cache(maxsize=1)
def _package_versions() -> tuple[tuple[str, str], ...]:
    # read once per process: every checkpoint write asks (30 ms each time)
    out = {}
    for name in _VERSIONED:
        try:
            out[name] = version(name)
        except PackageNotFoundError:
            out[name] = "not installed"
    return tuple(out.items())


def build_dataset(problem, X, Y, records, settings) -> xr.Dataset:
    """History of a run as a Dataset over ``iteration`` (1..n).

    Variables: ``x(iteration, dim)``, ``y(iteration, component)``, ``objective``,
    ``phase``, ``acq_value``, ``beta``, ``ask_seconds``, ``fit_seconds``; per GP
    and refit (dim ``model`` under every strategy: a component's GP is labelled by
    the component's name, the GP of the composed objective ``composed``, an
    additive GP ``additive``; ``ds.fit_draws.sel(model="f0")``) ``refit``,
    ``ls_mean(…, dim)``, ``eta_mean``, ``sigma_mean``, ``rhat_max``,
    ``ess_bulk_min``, ``ess_tail_min``, ``divergences``, ``repairs``, ``converged``,
    ``reweighted``, ``fit_pareto_k``, ``refit_seconds``; on the fast path ``ess``;
    per GP and model-based step its criticism (:data:`CRITICISM`: ``elpd_loo``,
    ``loo_k_max``, ``loo_pit_distance``, ``loo_pit_p``, ``loo_coverage``); per refit
    ``hyper_posterior(…, parameter, statistic)``, each hyperparameter's mean, sd and
    5% and 95% quantiles;
    for the additive strategies ``structure``; where the problem's optimum is known
    ``true_objective``, ``regret``, ``cumulative_regret``, ``simple_regret``.
    :data:`ATTRS` describes each.
    """
    n, d = X.shape
    ds = xr.Dataset(
        {
            "x": (("iteration", "dim"), X),
            "y": (("iteration", "component"), Y),
            "objective": ("iteration", problem.compose(Y, X) if n else np.empty(0)),
            "phase": ("iteration", np.array([r["phase"] for r in records], dtype=str)),
            **{k: ("iteration", _field(records, k)) for k in ("acq_value", "beta")},
            **{k: ("iteration", _field(records, k)) for k in ("ask_seconds", "fit_seconds")},
        },
        coords={
            "iteration": np.arange(1, n + 1),
            "dim": np.arange(d),
            "component": list(problem.component_names),
        },
    )
    ds = _add_refits(ds, records, list(problem.component_names))
    ds = _add_criticism(ds, records, list(problem.component_names))
    ds = _add_posterior(ds, records, list(problem.component_names))
    if any("structure" in r for r in records):
        ds["structure"] = ("iteration", np.array([r.get("structure", "") for r in records]))
    if problem.optimum is not None and n:
        ds["true_objective"] = ("iteration", problem.objective(X))
        ds = add_regret(ds, problem.optimum, problem.maximize)
    return describe(ds, problem, settings)


def _field(records, key) -> np.ndarray:
    return np.array([r[key] for r in records], dtype=float)


def _gp_order(names, components) -> list:
    """The GPs' labels on the ``model`` dimension: the components' own GPs in the
    problem's order, then any other (``composed``, ``additive``) as they came."""
    return [c for c in components if c in names] + [m for m in names if m not in components]


def _add_refits(ds: xr.Dataset, records, components) -> xr.Dataset:
    """Per-GP refit summaries and fast-path ESS, NaN (0, False) where no refit ran."""
    n, d = ds.sizes["iteration"], ds.sizes["dim"]
    names = list(dict.fromkeys(m for r in records for m in r.get("refit", {})))
    ess_names = list(dict.fromkeys(m for r in records for m in r.get("ess", {})))
    names += [m for m in ess_names if m not in names]
    if not names:
        return ds
    names = _gp_order(names, components)
    ds = ds.assign_coords(model=names)
    shape = (n, len(names))
    per_step = ("ess", "pareto_k")
    arrays = {f: np.full(shape, np.nan) for f in (*_REFIT_FLOAT, "refit_seconds", *per_step)}
    arrays["ls_mean"] = np.full(shape + (d,), np.nan)
    refit, div = np.zeros(shape, bool), np.zeros(shape, np.int64)
    repairs, converged = np.zeros(shape, np.int64), np.zeros(shape, bool)
    reweighted, draws_used = np.zeros(shape, bool), np.full(shape, "", dtype=object)
    for i, r in enumerate(records):
        for k, name in enumerate(names):
            for f in per_step:
                arrays[f][i, k] = r.get(f, {}).get(name, np.nan)
            summ = r.get("refit", {}).get(name)
            if summ is None:
                continue
            refit[i, k], div[i, k] = True, int(summ["divergences"])
            repairs[i, k] = summ.get("repairs", 0)
            converged[i, k] = summ.get("converged", True)
            reweighted[i, k] = summ.get("reweighted", False)
            draws_used[i, k] = summ.get("fit_draws", "")
            arrays["ls_mean"][i, k] = summ["ls_mean"]
            arrays["refit_seconds"][i, k] = summ["fit_seconds"]
            for f in _REFIT_FLOAT:
                arrays[f][i, k] = summ.get(f, np.nan)
    dims = ("iteration", "model")
    ds["refit"], ds["divergences"] = (dims, refit), (dims, div)
    ds["repairs"], ds["converged"] = (dims, repairs), (dims, converged)
    ds["reweighted"], ds["fit_draws"] = (dims, reweighted), (dims, draws_used.astype(str))
    ds["ls_mean"] = ((*dims, "dim"), arrays.pop("ls_mean"))
    fast = {f: arrays.pop(f) for f in per_step}
    for f, a in arrays.items():
        ds[f] = (dims, a)
    if ess_names:
        for f, a in fast.items():
            ds[f] = (dims, a)
    return ds


STATISTICS = ("mean", "sd", "q05", "q95")  # of hyper_posterior, in this order
CRITICISM = ("elpd_loo", "loo_k_max", "loo_pit_distance", "loo_pit_p", "loo_coverage")


def _add_criticism(ds: xr.Dataset, records, components) -> xr.Dataset:
    """Each GP's criticism at each model-based step (:data:`CRITICISM`), NaN elsewhere."""
    names = list(dict.fromkeys(m for r in records for m in r.get("criticism", {})))
    if not names:
        return ds
    if "model" in ds.coords:  # the refits' GPs first, any other after (NaN there)
        names = list(ds["model"].values) + [m for m in names if m not in ds["model"]]
        ds = ds.reindex(model=names)
    else:
        ds = ds.assign_coords(model=_gp_order(names, components))
        names = list(ds["model"].values)
    out = {f: np.full((ds.sizes["iteration"], len(names)), np.nan) for f in CRITICISM}
    for i, r in enumerate(records):
        for k, name in enumerate(names):
            crit = r.get("criticism", {}).get(name, {})
            for f in CRITICISM:
                out[f][i, k] = crit.get(f, np.nan)
    for f, a in out.items():
        ds[f] = (("iteration", "model"), a)
    return ds


def _add_posterior(ds: xr.Dataset, records, components) -> xr.Dataset:
    """``hyper_posterior(iteration, GP, parameter, statistic)``: each refit's
    hyperparameter posterior summary (:func:`~pp_decomp.loop.records.posterior_summary`)."""
    fits = [
        (i, n, f["posterior"])
        for i, r in enumerate(records)
        for n, f in r.get("refit", {}).items()
        if "posterior" in f
    ]
    if not fits:
        return ds
    gp_dim = ds["refit"].dims[1]
    params = list(dict.fromkeys(p for _, _, post in fits for p in post))
    names = list(ds[gp_dim].values)
    out = np.full((ds.sizes["iteration"], len(names), len(params), len(STATISTICS)), np.nan)
    for i, name, post in fits:
        for k, p in enumerate(params):
            if p in post and name in names:
                out[i, names.index(name), k] = post[p]
    ds["hyper_posterior"] = (("iteration", gp_dim, "parameter", "statistic"), out)
    return ds.assign_coords(parameter=params, statistic=list(STATISTICS))


def criticism_summary(ds: xr.Dataset) -> str:
    """One line per GP: its criticism at the run's last model-based step (LOO
    coverage at 95%, LOO-PIT distance and p-value, largest Pareto ``k̂``,
    ``elpd_loo``); empty where the run recorded none."""
    if "loo_coverage" not in ds:
        return ""
    gp_dim = ds["loo_coverage"].dims[1]
    lines = []
    for name in ds[gp_dim].values:
        c = ds[list(CRITICISM)].sel({gp_dim: name}).dropna("iteration", how="all")
        if not c.sizes["iteration"]:
            continue
        last = c.isel(iteration=-1)
        k = float(last["loo_k_max"])
        lines.append(
            f"  {name}: LOO coverage {float(last['loo_coverage']):.2f} (95% nominal), "
            f"LOO-PIT distance {float(last['loo_pit_distance']):.2f} "
            f"(p {float(last['loo_pit_p']):.2f}), k̂ max "
            f"{'n/a (MAP)' if np.isnan(k) else f'{k:.2f}'}, elpd_loo {float(last['elpd_loo']):.4g}"
        )
    return "\n".join(lines)


def describe(ds: xr.Dataset, problem, settings: dict) -> xr.Dataset:
    """Attach :data:`ATTRS` to every variable and the run's settings to the Dataset.

    ``units`` "problem" stands for the problem's own units (``Problem(units=...)``,
    :mod:`pp_decomp.units`), and the inputs' names and per-item units are
    coordinates (``input_name``, ``input_units``, ``component_units``); text and
    boolean variables have no units.
    """
    own = _declared_units(problem)
    for name, (long_name, units, description) in ATTRS.items():
        if name not in ds:
            continue
        attrs = {"long_name": long_name, "description": description}
        if units == "problem":
            units = own[{"x": "x", "y": "y"}.get(name, "objective")]
        if ds[name].dtype.kind not in "USOb":
            attrs["units"] = units
        ds[name].attrs.update(attrs)
    ds["iteration"].attrs.update(long_name="evaluation number", units="1")
    ds = ds.assign_coords(
        input_name=("dim", list(problem.input_names)),
        input_units=("dim", [_or_undeclared(u) for u in problem.units["inputs"]]),
        component_units=("component", [_or_undeclared(u) for u in problem.units["components"]]),
    )
    ds["dim"].attrs.update(long_name="input dimension (named by input_name)")
    ds["input_name"].attrs.update(long_name="the input's name")
    ds["input_units"].attrs.update(long_name="the input's units")
    ds["component_units"].attrs.update(long_name="the component's units")
    ds["component"].attrs.update(long_name="observed component f_j")
    if "model" in ds.coords:
        ds["model"].attrs.update(
            long_name="GP: a component's name, 'composed' (a GP of g) or 'additive'"
        )
    if "parameter" in ds.coords:
        ds["parameter"].attrs.update(long_name="hyperparameter (element [i] of a vector)")
        ds["statistic"].attrs.update(long_name="posterior statistic over the fit's draws")
    ds.attrs.update(
        title=f"pp_decomp run: {settings['strategy']} on {problem.name}",
        problem=problem.name,
        strategy=settings["strategy"],
        seed=settings["seed"],
        maximize=int(problem.maximize),
        sign_convention=f"acq_value is {_SIGNED}",
        settings=json.dumps(settings),
        versions=json.dumps(package_versions()),
        Conventions="CF-1.10",
    )
    if problem.optimum is not None:
        ds.attrs["optimum"] = float(problem.optimum)
    return ds


UNDECLARED = "the problem's own (not declared)"


def _or_undeclared(unit: str | None) -> str:
    return UNDECLARED if unit is None else unit


def _declared_units(problem) -> dict:
    """The ``units`` attribute of ``x``, ``y`` and the objective-valued variables:
    the declared unit where all inputs (components) share one, else a pointer to
    the per-item coordinate."""

    def one(units, coord):
        first = units[0] if units else None
        if all(u == first for u in units):
            return _or_undeclared(first)
        return f"per item: see {coord}"

    u = problem.units
    return {
        "x": one(u["inputs"], "input_units"),
        "y": one(u["components"], "component_units"),
        "objective": _or_undeclared(u["objective"]),
    }


def add_regret(ds: xr.Dataset, optimum: float, maximize: bool = True) -> xr.Dataset:
    """Instantaneous, cumulative and simple regret of ``true_objective``.

    ``r_t = f* - f(x_t)`` (``f(x_t) - f*`` when minimising), ``R_T = Σ_{t<=T} r_t``,
    simple regret ``min_{t<=T} r_t``.
    """
    f = ds["true_objective"]
    r = (optimum - f) if maximize else (f - optimum)
    ds["regret"] = r
    ds["cumulative_regret"] = r.cumsum("iteration")
    ds["simple_regret"] = ("iteration", np.minimum.accumulate(r.values))
    return ds
