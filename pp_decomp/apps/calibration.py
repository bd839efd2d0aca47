"""Calibration of upper confidence bounds: empirical against nominal coverage."""

from __future__ import annotations

import numpy as np
import xarray as xr
from scipy.stats import norm

from pp_decomp import Optimizer
from pp_decomp.apps.coverage_diagnosis import (
    BANDS,
    SIDES,
    central_interval,
    distance_bands,
    misses_of,
)
from pp_decomp.composition.core import ucb_level
from pp_decomp.loop.records import criticism_record
from pp_decomp.loop.setup import RunSetup
from pp_decomp.loop.state import LoopState
from pp_decomp.loop.step_bound import objective_samples, ucb_bound
from pp_decomp.validate import as_float_array, check_finite, check_positive_int, check_probabilities


def ucb_coverage(mean, sd, truth, levels=(0.5, 0.68, 0.8, 0.9, 0.95, 0.99)) -> xr.Dataset:
    """How often the upper bound ``mean + Φ⁻¹(q) sd`` covers the truth, per nominal level ``q``.

    Parameters
    ----------
    mean, sd, truth : arrays of one shape
        Posterior means and standard deviations of the objective and its true
        values at the same points (any number of points, steps and seeds, flattened).
    levels : sequence of float in (0, 1)

    Returns
    -------
    xarray.Dataset over ``level`` with ``empirical`` (fraction of points with
    ``truth <= mean + Φ⁻¹(q) sd``), ``nominal`` and ``stderr``
    (``sqrt(q (1 - q) / n)``, the binomial standard error if calibrated).
    """
    mean = check_finite(np.ravel(as_float_array(mean, "mean")), "mean")
    sd = check_finite(np.ravel(as_float_array(sd, "sd")), "sd")
    truth = check_finite(np.ravel(as_float_array(truth, "truth")), "truth")
    if not (mean.shape == sd.shape == truth.shape):
        raise ValueError(
            f"mean, sd and truth must have one shape; got {mean.shape}, {sd.shape}, {truth.shape}"
        )
    if np.any(sd < 0):
        raise ValueError(f"sd must be >= 0; got min {sd.min()!r}")
    q = check_probabilities(levels, "levels")
    z = norm.ppf(q)
    covered = truth[None, :] <= mean[None, :] + z[:, None] * sd[None, :]
    n = len(truth)
    return xr.Dataset(
        {
            "empirical": ("level", covered.mean(1)),
            "nominal": ("level", q),
            "stderr": ("level", np.sqrt(q * (1 - q) / n)),
        },
        coords={"level": q},
        attrs={"n_points": n},
    )


LEVELS = (0.5, 0.68, 0.8, 0.9, 0.95, 0.99)


def sample_coverage(samples: np.ndarray, truth: np.ndarray, levels=LEVELS) -> np.ndarray:
    """Coverage of ``truth (m,)`` by posterior samples ``(n, m)``, per level: (L, 2).

    Column 0: the central interval between the ``(1 - q)/2`` and ``(1 + q)/2``
    sample quantiles; column 1: the upper bound at the ``q`` quantile (what a
    UCB at level ``q`` claims). Each entry is the fraction of the ``m`` points covered.
    """
    return _coverage(samples, truth, levels, *central_interval(samples, levels))


def _coverage(samples, truth, levels, lo, hi) -> np.ndarray:
    up = np.quantile(samples, np.asarray(levels, dtype=float), axis=0)
    central = ((lo <= truth) & (truth <= hi)).mean(axis=1)
    return np.stack([central, (truth <= up).mean(axis=1)], axis=1)


def _scored(samples, truth, levels, band) -> tuple:
    """:func:`sample_coverage` and :func:`~pp_decomp.apps.coverage_diagnosis.interval_misses`
    of one column, its central quantiles taken once."""
    lo, hi = central_interval(samples, levels)
    return _coverage(samples, truth, levels, lo, hi), *misses_of(lo, hi, truth, band)


def step_coverage(
    setup: RunSetup,
    state: LoopState,
    models: dict,
    t: int,
    X: np.ndarray,
    levels=LEVELS,
    n_samples: int = 512,
    seed=0,
) -> dict:
    """Coverage of the truth at ``X (m, d)`` by the posterior a run's choice at step
    ``t`` used (``models``, its GPs by name; ``setup``, ``state``: the run's): per component
    and for the signed objective ``h = sign · g`` (components sampled pointwise,
    jointly across components where they are correlated or under the copula,
    pushed through ``g``), plus the
    coverage of the UCB bound (:func:`~pp_decomp.loop.step_bound.ucb_bound`) and its
    nominal level ``Φ(√β_t)``, and where the central intervals miss
    (:mod:`~pp_decomp.apps.coverage_diagnosis`: by side and by distance to the
    data)."""
    problem = setup.model_problem  # the components as modelled: under the outcome transform
    s = setup.settings
    rng = np.random.default_rng(seed)
    names = problem.component_names
    F_true = np.asarray(setup.problem.components(X), dtype=float)
    h_true = setup.problem.signed_objective(F_true, X)
    J, L = len(names), len(levels)
    comp = np.full((J, L, 2), np.nan)
    miss, by_band = np.full((J, L, len(SIDES)), np.nan), np.full((J, L, len(BANDS)), np.nan)
    band = distance_bands(X, state.X, setup.problem.domain.widths)
    h, draws = objective_samples(setup, models, X, n_samples, rng, state.n)
    if draws is not None:  # a composed strategy's one GP of h has no component posteriors
        for j in range(J):
            comp[j], miss[j], by_band[j] = _scored(draws[..., j], F_true[:, j], levels, band)
    beta = float(s.acquisition.beta(t))
    bound = ucb_bound(setup, state, models, t, X, h, beta, rng)
    h_cover, h_miss, h_band = _scored(h, h_true, levels, band)
    return {
        "component": comp,
        "component_miss": miss,
        "component_by_distance": by_band,
        "objective": h_cover,
        "objective_miss": h_miss,
        "objective_by_distance": h_band,
        "ucb_used": float(np.mean(h_true <= bound)),
        "ucb_used_nominal": ucb_level(beta),
    }


def calibration_run(
    problem,
    strategy: str | None = None,
    *,
    seeds=range(10),
    iterations: int = 30,
    every: int = 5,
    n_points: int = 256,
    levels=LEVELS,
    n_samples: int = 512,
    **optimizer_kw,
) -> xr.Dataset:
    """Calibration of a strategy's posterior over runs: coverage of the true
    components and objective by the posterior intervals, and by the bound used.

    Parameters
    ----------
    problem : Problem, or callable ``seed -> Problem``
        A callable gives each seed its own instance (``lambda s: get_problem("flu", seed=s)``).
        The problem needs ``components`` (the system as a function): the truth.
    strategy, optimizer_kw :
        As :class:`~pp_decomp.Optimizer` (``inference=``, ``n_init=`` ...); the
        decomposed strategies report every component, the composed ones the objective.
    seeds, iterations, every :
        One run of ``iterations`` evaluations per seed; every ``every``-th
        model-based step is scored, with the GPs that step's choice used.
    n_points, levels, n_samples :
        Scored at ``n_points`` inputs of the domain (fixed per seed), at nominal
        ``levels``, from ``n_samples`` posterior samples per input.

    Returns
    -------
    xarray.Dataset over ``seed``, ``step`` (the evaluation about to be made), ``level``,
    ``component``, ``bound`` (``central`` interval or ``upper`` bound): ``objective_coverage``,
    ``component_coverage``, ``ucb_used`` (coverage by :func:`ucb_bound`), ``ucb_used_nominal``
    (``Φ(√β_t)``), ``loo_coverage``, ``loo_pit_distance`` (:mod:`pp_decomp.components.criticism`);
    ``*_miss`` over ``side`` and ``*_by_distance`` over ``distance``: where the
    central intervals miss (:mod:`~pp_decomp.apps.coverage_diagnosis`).
    """
    iterations = check_positive_int(iterations, "iterations")
    every = check_positive_int(every, "every")
    n_points = check_positive_int(n_points, "n_points")
    seeds, q = _checked_seeds_levels(seeds, levels)
    make, first = _instances(problem, seeds[0])
    runs = [
        _calibration_seed(
            make(s), strategy, s, iterations, every, n_points, q, n_samples, optimizer_kw, Optimizer
        )
        for s in seeds
    ]
    steps = sorted(set().union(*(r.keys() for r in runs)))
    if not steps:
        raise ValueError(
            f"no model-based step was scored: iterations={iterations} must exceed the "
            "initial design"
        )
    attrs = {"problem": first.name, "strategy": strategy or "", "n_points": n_points}
    attrs.update(n_samples=n_samples, **{k: str(v) for k, v in optimizer_kw.items()})
    return _as_dataset(runs, seeds, steps, q, list(first.component_names), attrs)


def _instances(problem, seed: int):
    """``seed -> Problem`` and the first seed's instance, which must have ``components``."""
    make = problem if callable(problem) and not hasattr(problem, "domain") else (lambda s: problem)
    first = make(seed)
    if first.components is None:
        raise ValueError(
            "problem has no components function: calibration needs the system's true outputs"
        )
    return make, first


def _checked_seeds_levels(seeds, levels) -> tuple[list[int], np.ndarray]:
    seeds = [int(s) for s in seeds]
    if not seeds:
        raise ValueError("seeds must name at least one seed; got none")
    q = check_probabilities(levels, "levels")
    return seeds, q


def _as_dataset(runs: list[dict], seeds, steps, q, names, attrs) -> xr.Dataset:
    """The scored steps of every seed as one Dataset (NaN where a seed has no such step)."""

    def stack(key, shape):
        out = np.full((len(seeds), len(steps), *shape), np.nan)
        for i, r in enumerate(runs):
            for k, t in enumerate(steps):
                if t in r:
                    out[i, k] = r[t][key]
        return out

    J, L = len(names), len(q)
    return xr.Dataset(
        {
            "objective_coverage": (("seed", "step", "level", "bound"), stack("objective", (L, 2))),
            "component_coverage": (
                ("seed", "step", "component", "level", "bound"),
                stack("component", (J, L, 2)),
            ),
            "objective_miss": (("seed", "step", "level", "side"), stack("objective_miss", (L, 2))),
            "component_miss": (
                ("seed", "step", "component", "level", "side"),
                stack("component_miss", (J, L, 2)),
            ),
            "objective_by_distance": (
                ("seed", "step", "level", "distance"),
                stack("objective_by_distance", (L, len(BANDS))),
            ),
            "component_by_distance": (
                ("seed", "step", "component", "level", "distance"),
                stack("component_by_distance", (J, L, len(BANDS))),
            ),
            "loo_coverage": (("seed", "step", "component"), stack("loo_coverage", (J,))),
            "loo_pit_distance": (("seed", "step", "component"), stack("loo_pit_distance", (J,))),
            "ucb_used": (("seed", "step"), stack("ucb_used", ())),
            "ucb_used_nominal": (("seed", "step"), stack("ucb_used_nominal", ())),
        },
        coords={"seed": seeds, "step": steps, "level": q, "component": names},
        attrs=attrs,
    ).assign_coords(bound=["central", "upper"], side=list(SIDES), distance=list(BANDS))


def _calibration_seed(
    problem, strategy, seed, iterations, every, n_points, q, n_samples, kw, Optimizer
) -> dict:
    opt = Optimizer(problem, strategy, seed=seed, **kw)
    rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(11,)))
    X = problem.domain.sample(n_points, seed=rng)  # a candidate set's: distinct ones
    scored, modelled = {}, 0
    while opt.n < iterations:
        x = opt.ask()
        if opt.pending.items[0][1]["phase"] == "acquisition":
            if modelled % every == 0:
                t = opt.n + 1
                scored[t] = step_coverage(
                    opt.setup, opt.state, opt.models, t, X, q, n_samples, seed=rng
                )
                transform = opt.settings.model.outcome_transform
                scored[t].update(_loo(opt.models, transform, problem.component_names))
            modelled += 1
        opt.tell(x, problem.evaluate(x[None], seed=rng)[0])
    return scored


def _loo(models: dict, transform, names) -> dict:
    """LOO coverage and LOO-PIT distance per component of the GPs ``models`` a step
    used (NaN where a GP keeps no factors)."""
    crit = criticism_record(models, transform, names)
    return {
        f: np.array([crit.get(n, {}).get(f, np.nan) for n in names])
        for f in ("loo_coverage", "loo_pit_distance")
    }


def reliability(ds: xr.Dataset) -> xr.Dataset:
    """Mean coverage over seeds and scored steps per level (and component), with
    its standard error over those ``k`` runs × steps (``*_se``; the inputs of one
    step are correlated, so they are not counted as independent), and each
    component's mean LOO coverage and LOO-PIT distance (``NaN`` for a dataset
    made before they were recorded)."""
    k = int(np.isfinite(ds["ucb_used"]).sum())
    runs = ("seed", "step")
    out = xr.Dataset(
        {
            "objective_coverage": ds["objective_coverage"].mean(runs),
            "objective_se": ds["objective_coverage"].std(runs) / np.sqrt(max(k, 1)),
            "component_coverage": ds["component_coverage"].mean(runs),
            "component_se": ds["component_coverage"].std(runs) / np.sqrt(max(k, 1)),
            "nominal": ds["level"],
            "loo_coverage": _component_mean(ds, "loo_coverage"),
            "loo_pit_distance": _component_mean(ds, "loo_pit_distance"),
            "ucb_used": ds["ucb_used"].mean(),
            "ucb_used_nominal": ds["ucb_used_nominal"].mean(),
        }
    )
    return out.assign_attrs(ds.attrs, scored_steps=k)


def _component_mean(ds: xr.Dataset, name: str) -> xr.DataArray:
    """``ds[name]`` (seed, step, component) averaged over runs; NaN where absent."""
    if name in ds:
        return ds[name].mean(("seed", "step"))
    return xr.full_like(ds["component_coverage"].isel(level=0, bound=0), np.nan).mean(
        ("seed", "step")
    )
