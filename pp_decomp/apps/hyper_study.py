"""Hyperparameter-uncertainty studies: when integrating over the GPs' hyperparameters
changes the decision, and what the change is worth.

For one problem, strategy and budget, per seed:

* **Paired runs** of the strategy under each inference in ``inferences``:
  ``"fixed"`` (known kernels: the problem's true ones where it has them, else MAP
  kernels fitted once on ``fixed_design`` noisy evaluations of a space-filling
  design), ``"map"`` and ``"nuts"`` (full Bayes). The evaluations' noise follows
  each run's own keys, as in :meth:`~pp_decomp.Optimizer.run`, so runs that choose
  alike see alike.
* **Counterfactuals along the full-Bayes run.** At every model-based step ``t``, a
  fresh optimiser under each other inference is told the same ``t - 1`` results
  with the same seed, so it draws the step's random numbers, and chooses
  ``x_t^a``: what that inference would do from this history. For each inference
  ``a`` (full Bayes included) the study records

  - the distance ``‖x_t^a − x_t‖ / √d`` on the unit-scaled box from full
    Bayes's choice, and whether they disagree: another candidate of a finite
    domain, or farther than :data:`AGREE` on a box;
  - ``α_a(x_t^a)`` and ``α_a(x_t)``, ``α_nuts(x_t^a)``: what each acquisition
    gives its own choice and the other's;
  - the instantaneous regret ``f* − f(x_t^a)`` of the noise-free truth;
  - the coverage of the bound ``a`` uses (:func:`~pp_decomp.loop.step_bound.ucb_bound`)
    over ``n_points`` scoring inputs, beside ``Φ(√β_t)``: the nominal level of
    the Gaussian bounds (``d-gpucb``'s, GP-UCB's, per draw), which the Lipschitz
    and ``-min`` bounds are built to exceed; for EI and PI, which use no bound,
    the Gaussian bound of the posterior samples;

  and, under full Bayes, the width of every hyperparameter of every GP:
  the standard deviation of its log over the draws in use, weighted by their
  weights (:func:`weighted_log_sd`).

MAP's counterfactual is a fresh fit from the step's history (several starts);
the MAP run itself refits from the last mode (``warm_start``), so the two may
differ where the likelihood has several modes.

The study evaluates the problem itself (``problem.evaluate``, no error policy): an
evaluation that raises or returns a non-finite output stops it, since a failure
recorded in one run and not in its pair would leave them different histories to
compare. The seeds finished before stay in ``seed_dir``.

Example
-------
>>> import pp_decomp as ppd
>>> from pp_decomp.models import get_problem
>>> ds = ppd.hyper_study(lambda s: get_problem("synthetic", seed=s, n_components=2),
...                      seeds=[0], iterations=6, n_init=4, inferences=("map", "nuts"),
...                      n_points=8, n_samples=32)
>>> ds["inference"].values.tolist(), ds["step"].values.tolist()
(['map', 'nuts'], [5, 6])
"""

from __future__ import annotations

import json
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import xarray as xr

from pp_decomp import Optimizer
from pp_decomp.apps.calibration import _checked_seeds_levels, _instances
from pp_decomp.components.gp.known import KnownKernels
from pp_decomp.components.posterior.draws import HyperDraws
from pp_decomp.composition.core import ucb_level
from pp_decomp.loop.ask import build_context
from pp_decomp.loop.posterior import model_posterior
from pp_decomp.loop.records import ACQ_STREAM
from pp_decomp.loop.setup import RunSetup
from pp_decomp.loop.state import LoopState
from pp_decomp.loop.step_bound import objective_samples, ucb_bound
from pp_decomp.space import CandidateSet
from pp_decomp.strategies import get_strategy
from pp_decomp.validate import check_positive_int

INFERENCES = ("fixed", "map", "nuts")
AGREE = 0.01  # choices farther apart than this (unit box, per √d) disagree
STEP_STREAM = 13  # the random numbers the study's scoring draws at each step


def hyper_study(
    problem,
    strategy: str | None = None,
    *,
    seeds=range(5),
    iterations: int = 30,
    n_init: int = 5,
    inferences=INFERENCES,
    n_points: int = 128,
    n_samples: int = 256,
    fixed_design: int = 200,
    seed_dir=None,
    **optimizer_kw,
) -> xr.Dataset:
    """The study described in :mod:`pp_decomp.apps.hyper_study`.

    Parameters
    ----------
    problem : Problem, or callable ``seed -> Problem``
        It needs ``components`` (the truth) and ``optimum`` (the regret).
    strategy, optimizer_kw :
        As :class:`~pp_decomp.Optimizer` (not ``inference``, ``known_kernels``,
        ``seed``, ``n_init``: the study sets them). The strategy needs an
        acquisition function (not Thompson sampling or random).
    seeds, iterations, n_init :
        One instance and one paired set of runs of ``iterations`` evaluations per seed.
    inferences : subset of {"fixed", "map", "nuts"}
        The paired runs; it must hold ``"nuts"``, along whose run the others'
        counterfactual choices are made.
    n_points, n_samples : int
        Scoring inputs per seed (fixed along the run) and posterior samples per
        input for the bound's coverage.
    fixed_design : int
        Evaluations that fit the fixed kernels where the problem has no true ones.
    seed_dir : path, optional
        Each finished seed is written there (``seed{s}.nc``), and a seed already
        there from a study with the same settings is read instead of run: a killed
        study, run again, resumes losing at most the seed in progress (another
        study's seed there is refused by name).

    Returns
    -------
    xarray.Dataset over ``seed``, ``step`` (the evaluation about to be made),
    ``inference``, ``iteration``, ``dim``, ``component``, ``gp`` (the GPs full Bayes
    chose with), ``parameter``: ``choice``
    (``x_t^a``), ``distance``,
    ``disagree``, ``acq_own`` (``α_a(x^a)``), ``acq_at_nuts_choice`` (``α_a(x)``),
    ``nuts_acq_at_choice`` (``α_nuts(x^a)``), ``choice_regret``, ``bound_coverage``,
    ``bound_nominal``, ``hyper_sd`` and the paired runs' ``x``, ``y``, ``regret``,
    ``simple_regret`` and ``cumulative_regret``.
    """
    sizes = (n_points, n_samples, fixed_design)
    args = _checked_args(problem, strategy, seeds, iterations, n_init, inferences, optimizer_kw)
    seeds, make, first, plan = _plan(*args, iterations, n_init, sizes, optimizer_kw)
    attrs = {"problem": first.name, "strategy": plan.strategy, "n_points": plan.n_points}
    attrs.update(n_init=plan.n_init, agree=AGREE, **{k: str(v) for k, v in optimizer_kw.items()})
    attrs["settings"] = plan.describe(first.name)
    done = [_seed_result(make, s, plan, attrs, seed_dir) for s in seeds]
    return xr.concat(done, "seed", join="outer", combine_attrs="override")


def _seed_result(make, seed: int, plan: Plan, attrs: dict, seed_dir) -> xr.Dataset:
    """One seed's records: read from ``seed_dir`` where an earlier study with the same
    settings finished it, else run (and written there)."""
    path = None if seed_dir is None else Path(seed_dir) / f"seed{seed}.nc"
    if path is not None and path.exists():
        ds = xr.load_dataset(path)
        if ds.attrs.get("settings") != attrs["settings"]:
            raise ValueError(
                f"seed_dir {seed_dir}: {path.name} holds a study with other settings "
                f"({ds.attrs.get('settings')}) than this one ({attrs['settings']}); give "
                "another seed_dir or remove it"
            )
        return ds
    ds = _as_dataset(
        [_study_seed(make(seed), seed, plan)], [seed], plan.inferences, plan.iterations, attrs
    )
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        ds.to_netcdf(tmp)
        tmp.replace(path)  # a killed study leaves no half-written seed behind
    return ds


@dataclass(frozen=True)
class Plan:
    """The study's checked settings, shared by every seed."""

    strategy: str
    iterations: int
    n_init: int
    inferences: tuple[str, ...]
    n_points: int
    n_samples: int
    fixed_design: int
    kw: dict

    def describe(self, problem: str) -> str:
        """The settings a finished seed must share to be reused, as one string."""
        fields = dict(problem=problem, strategy=self.strategy, iterations=self.iterations)
        fields.update(n_init=self.n_init, inferences=list(self.inferences))
        fields.update(n_points=self.n_points, n_samples=self.n_samples)
        fields.update(fixed_design=self.fixed_design, kw=sorted(map(str, self.kw.items())))
        return json.dumps(fields)


def _plan(seeds, make, first, strategy, inferences, iterations, n_init, sizes, kw) -> tuple:
    n_points, n_samples, fixed_design = sizes
    plan = Plan(
        strategy,
        int(iterations),
        int(n_init),
        inferences,
        check_positive_int(n_points, "n_points"),
        check_positive_int(n_samples, "n_samples"),
        check_positive_int(fixed_design, "fixed_design", minimum=2),
        kw,
    )
    return seeds, make, first, plan


def _checked_args(problem, strategy, seeds, iterations, n_init, inferences, kw) -> tuple:
    """Every argument checked before any fit: the seeds, ``seed -> Problem`` and the
    first instance, the strategy's name and the inferences (full Bayes last)."""
    iterations = check_positive_int(iterations, "iterations")
    n_init = check_positive_int(n_init, "n_init", minimum=2)
    if iterations <= n_init:
        raise ValueError(
            f"iterations={iterations} must exceed n_init={n_init}: the study compares "
            "model-based choices, made after the initial design"
        )
    inferences = _checked_inferences(inferences)
    for key in ("inference", "known_kernels", "seed", "n_init", "checkpoint"):
        if key in kw:
            raise ValueError(f"{key}= is set by the study per run; got {kw[key]!r}")
    seeds, _ = _checked_seeds_levels(seeds, [0.5])
    make, first = _instances(problem, seeds[0])
    if first.optimum is None:
        raise ValueError(f"problem {first.name!r} has no known optimum: the study needs regret")
    return seeds, make, first, _checked_strategy(strategy, first, inferences, kw), inferences


def _checked_inferences(inferences) -> tuple[str, ...]:
    names = tuple(str(i).lower() for i in np.atleast_1d(inferences))
    bad = [i for i in names if i not in INFERENCES]
    if bad or "nuts" not in names or len(set(names)) != len(names):
        raise ValueError(
            f"inferences must be distinct names from {list(INFERENCES)} holding 'nuts' "
            f"(the run the others are compared along); got {list(names)}"
        )
    return tuple(i for i in INFERENCES if i in names)  # nuts last: the reference


def _checked_strategy(strategy, problem, inferences, kw) -> str:
    """The strategy's name, every run's settings checked before any fit (the fixed
    kernels' on stand-ins where they are still to be fitted): the strategy must
    rank inputs by an acquisition and keep no state between choices."""
    for a in inferences:
        known = _stand_in_kernels(problem, kw) if a == "fixed" else None
        probe = Optimizer(problem, strategy, **_arm_kw(a, known, kw))
    name = probe.settings.strategy
    s = get_strategy(name)
    if s.build is None:
        raise ValueError(
            f"strategy {name!r} chooses without an acquisition function, so no choice "
            "can be scored under another inference's; use a UCB, EI or PI strategy"
        )
    if s.after_choice is not None:
        raise ValueError(
            f"strategy {name!r} carries a state from choice to choice (GP-MI's γ̂) that a "
            "history of results does not restore, so its counterfactual choices would "
            "not be the ones it makes; use a UCB, EI or PI strategy"
        )
    return name


def _stand_in_kernels(problem, kw: dict) -> KnownKernels:
    """The problem's true kernels, else unit kernels that only let the fixed run's
    settings be checked before its kernels are fitted."""
    if problem.known_kernels is not None:
        return problem.known_kernels
    unit = HyperDraws(ls=np.full((1, problem.dim), 0.5), eta=[1.0], sigma=[0.1])
    J = problem.n_components
    return KnownKernels(_kernel_name(kw), (unit,) * J, composed=unit)


def _kernel_name(kw: dict) -> str:
    kernel = kw.get("kernel", "matern32")
    return kernel if isinstance(kernel, str) else "matern32"


def _fixed_kernels(problem, seed: int, n: int, kw: dict) -> KnownKernels:
    """The problem's true kernels, else MAP kernels fitted on ``n`` noisy evaluations
    (:meth:`~pp_decomp.KnownKernels.fit`: the run's kernel family where it is a
    shorthand, else Matérn 3/2, under the default priors)."""
    if problem.known_kernels is not None:
        return problem.known_kernels
    rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(STEP_STREAM, 1)))
    X = problem.domain.sample(n, seed=rng)
    Y = problem.evaluate(X, seed=rng)
    composed = problem.compose(Y, X)
    return KnownKernels.fit(
        X, Y, problem.domain.bounds, composed_y=composed, kernel=_kernel_name(kw), seed=seed
    )


def _arm_kw(inference: str, known, kw: dict) -> dict:
    return {**kw, "inference": inference, **({"known_kernels": known} if known else {})}


def _study_seed(problem, seed: int, plan: Plan) -> dict:
    """One seed: the full-Bayes run with the counterfactuals at each model-based step,
    then the other inferences' paired runs."""
    strategy, n_init, kw = plan.strategy, plan.n_init, plan.kw
    fixed = "fixed" in plan.inferences
    known = _fixed_kernels(problem, seed, plan.fixed_design, kw) if fixed else None
    arms = {i: _arm_kw(i, known if i == "fixed" else None, kw) for i in plan.inferences}
    rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(STEP_STREAM,)))
    X_score = problem.domain.sample(plan.n_points, seed=rng)
    h_score = problem.signed_objective(np.asarray(problem.components(X_score), float), X_score)
    main = Optimizer(problem, strategy, seed=seed, n_init=n_init, **arms["nuts"])
    others = [a for a in plan.inferences if a != "nuts"]
    steps = {}
    while main.n < plan.iterations:
        x = main.ask()
        if main.pending.items[0][1]["phase"] == "acquisition":
            shadows = {
                a: counterfactual(problem, strategy, main.X, main.Y, seed, n_init, **arms[a])
                for a in others
            }
            choices = {
                a: Choice(o.pending.X[0], o.setup, o.state, o.models)
                for a, o in {**shadows, "nuts": main}.items()
            }
            steps[main.n + 1] = _score_step(choices, X_score, h_score, plan.n_samples, seed)
        main.tell(x, problem.evaluate(x[None], seed=main.state.noise_rng(x))[0])
    results = {"nuts": main.results()}
    for a in others:
        paired = Optimizer(problem, strategy, seed=seed, n_init=n_init, **arms[a])
        paired.run(plan.iterations)
        results[a] = paired.results()
    return {"steps": steps, "results": results}


def counterfactual(problem, strategy, X, Y, seed: int, n_init: int, **kw) -> Optimizer:
    """A fresh optimiser told the results ``X (n, d)``, ``Y (n, J)`` that has asked its
    next input: the choice its settings ``kw`` make from that history at step
    ``n + 1``, with the random numbers of that step under ``seed`` (the input is
    ``opt.pending.X[0]``, its GPs ``opt.models``)."""
    opt = Optimizer(problem, strategy, seed=seed, n_init=n_init, **kw)
    with warnings.catch_warnings():  # repeated inputs were warned of in the run itself
        warnings.simplefilter("ignore", UserWarning)
        for x, y in zip(X, Y, strict=True):
            opt.tell(x, y)
    opt.ask()
    return opt


@dataclass(frozen=True)
class Choice:
    """One inference's choice at a step, with the run's parts it was made from:
    ``x (d,)``, the run's setup and state (``x`` pending) and the GPs by name."""

    x: np.ndarray
    setup: RunSetup
    state: LoopState
    models: dict


def _score_step(choices: dict, X_score, h_score, n_samples: int, seed: int) -> dict:
    """The step's record (see the module docstring) for each inference's
    :class:`Choice` (``"nuts"``: the run's own); ``h_score (m,)``: the signed objective's
    truth at the scoring inputs ``X_score (m, d)``."""
    nuts = choices["nuts"]
    problem, t = nuts.setup.problem, nuts.state.n + 1
    rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(t, STEP_STREAM)))
    X = np.stack([c.x for c in choices.values()])
    h_true = problem.signed_objective(np.asarray(problem.components(X), dtype=float), X)
    acq = {a: _acquisition(c, t) for a, c in choices.items()}
    widths = problem.domain.widths
    beta = float(nuts.setup.settings.acquisition.beta(t))
    tol = 0.0 if isinstance(problem.domain, CandidateSet) else AGREE
    out = {}
    for k, (a, c) in enumerate(choices.items()):
        h, _ = objective_samples(c.setup, c.models, X_score, n_samples, rng, c.state.n)
        bound = ucb_bound(c.setup, c.state, c.models, t, X_score, h, beta, rng)
        dist = float(np.linalg.norm((c.x - nuts.x) / widths) / np.sqrt(len(c.x)))
        out[a] = {
            "choice": c.x,
            "distance": dist,
            "disagree": float(dist > tol),
            "acq_own": float(acq[a](c.x[None])[0]),
            "acq_at_nuts_choice": float(acq[a](nuts.x[None])[0]),
            "nuts_acq_at_choice": float(acq["nuts"](c.x[None])[0]),
            "choice_regret": problem.sign * float(problem.optimum) - float(h_true[k]),
            "bound_coverage": float(np.mean(h_score <= bound)),
        }
    out["bound_nominal"] = ucb_level(beta)
    out["hyper_sd"] = hyper_widths(nuts.models)
    return out


def _acquisition(c: Choice, t: int):
    """The acquisition ``X (m, d) -> (m,)`` the choice maximised: rebuilt from the same
    GPs with the step's own random numbers (Monte Carlo acquisitions fix their
    samples when built), its pending input not hallucinated (it is the choice)."""
    key = c.state.pending.items[0][1]["key"]
    rng = c.state.rng(key, ACQ_STREAM)
    ctx = build_context(c.setup, c.state, c.models, t, rng, hallucinate=False)
    return c.setup.strategy.build(ctx)


def weighted_log_sd(values: np.ndarray, log_weight: np.ndarray) -> float:
    """``sqrt(Σ w_s (log v_s − m)²)`` with ``m = Σ w_s log v_s`` and ``w ∝ exp(log_weight)``:
    the width of a positive hyperparameter over weighted draws ``values (S,)`` (0 for one
    draw: MAP)."""
    w = np.exp(log_weight - np.max(log_weight))
    w /= w.sum()
    z = np.log(values)
    m = float(np.sum(w * z))
    return float(np.sqrt(np.sum(w * (z - m) ** 2)))


def hyper_widths(models: dict) -> dict:
    """``{gp: {parameter: width}}`` (:func:`weighted_log_sd`) over the draws in use of
    every GP in ``models`` (the components', and the GP of ``g`` where the strategy
    keeps one); vector parameters by element (``ls[0]``, ...). Parameters that are
    not positive (a correlation) have no log and are left out."""
    out = {}
    for name, model in models.items():
        ds = model_posterior(model)["draws_in_use"].to_dataset()
        lw = ds["log_weight"].values.ravel()
        widths = {}
        for var in ds.data_vars:
            v = ds[var].values.reshape(len(lw), -1)
            if var == "log_weight" or np.any(v <= 0):
                continue
            for i in range(v.shape[1]):
                key = var if ds[var].ndim == 2 else f"{var}[{i}]"
                widths[key] = weighted_log_sd(v[:, i], lw)
        out[name] = widths
    return out


def _as_dataset(runs: list[dict], seeds, inferences, iterations: int, attrs) -> xr.Dataset:
    steps = sorted(set().union(*(r["steps"].keys() for r in runs)))
    first = next(iter(runs[0]["steps"].values()))
    gps = list(first["hyper_sd"])
    params = sorted(set().union(*(set(w) for w in first["hyper_sd"].values())))
    comps = list(runs[0]["results"]["nuts"]["component"].values)
    S, T, A = len(seeds), len(steps), len(inferences)
    per = {k: np.full((S, T, A), np.nan) for k in STEP_VARIABLES}
    nominal = np.full((S, T), np.nan)
    sd = np.full((S, T, len(gps), len(params)), np.nan)
    for i, r in enumerate(runs):
        for k, t in enumerate(steps):
            rec = r["steps"].get(t)
            if rec is None:
                continue
            nominal[i, k] = rec["bound_nominal"]
            for a, inf in enumerate(inferences):
                for var in STEP_VARIABLES:
                    per[var][i, k, a] = rec[inf][var]
            for c, gp in enumerate(gps):
                for p, par in enumerate(params):
                    sd[i, k, c, p] = rec["hyper_sd"][gp].get(par, np.nan)
    d, J = len(first["nuts"]["choice"]), len(comps)
    choice = np.full((S, T, A, d), np.nan)
    curves = {v: np.full((S, A, iterations), np.nan) for v in REGRET_VARIABLES}
    xs, ys = np.full((S, A, iterations, d), np.nan), np.full((S, A, iterations, J), np.nan)
    for i, r in enumerate(runs):
        for k, t in enumerate(steps):
            for a, inf in enumerate(inferences):
                if t in r["steps"]:
                    choice[i, k, a] = r["steps"][t][inf]["choice"]
        for a, inf in enumerate(inferences):
            res = r["results"][inf]
            n = min(res.sizes["iteration"], iterations)
            for v in REGRET_VARIABLES:
                curves[v][i, a, :n] = res[v].values[:n]
            xs[i, a, :n], ys[i, a, :n] = res["x"].values[:n], res["y"].values[:n]
    dims = ("seed", "step", "inference")
    data = {v: (dims, per[v]) for v in STEP_VARIABLES}
    data["bound_nominal"] = (("seed", "step"), nominal)
    data["hyper_sd"] = (("seed", "step", "gp", "parameter"), sd)
    for v in REGRET_VARIABLES:
        data[v] = (("seed", "inference", "iteration"), curves[v])
    data["choice"] = (("seed", "step", "inference", "dim"), choice)
    data["x"] = (("seed", "inference", "iteration", "dim"), xs)
    data["y"] = (("seed", "inference", "iteration", "component"), ys)
    coords = {"seed": seeds, "step": steps, "inference": list(inferences)}
    coords.update(component=comps, gp=gps, parameter=params)
    coords["iteration"] = np.arange(1, iterations + 1)
    return xr.Dataset(data, coords=coords, attrs=attrs)


STEP_VARIABLES = (
    "distance",
    "disagree",
    "acq_own",
    "acq_at_nuts_choice",
    "nuts_acq_at_choice",
    "choice_regret",
    "bound_coverage",
)
REGRET_VARIABLES = ("regret", "simple_regret", "cumulative_regret")
