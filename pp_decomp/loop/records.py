"""What the loop records: each step's record, the summary of a refit, and the
hyperparameter draws every model-based choice used (:class:`DrawLog`).

The draw log
------------
A run's results hold each refit's posterior summary (``hyper_posterior``); the
draws behind it are kept here, so a finished run can be re-analysed without
refitting. For each GP, :class:`DrawLog` keeps

* every distinct set of draws (a *fit*: a MAP fit's one draw, a NUTS fit's
  kept draws, an importance resample), stored once however many steps use it;
* at every step that chose with a model, which fit it used and the draws'
  normalised log weights (the full-Bayes fast path reweights its draws by every
  observation since their fit; equal weights otherwise).

In a checkpoint or saved results file the log is the group ``draws``, one Dataset
over the GPs (``gp``) that chose (NaN or -1 past each GP's own sizes):

* ``value (gp, fit, draw, hyperparameter)``: each fit's draws on the model's scale,
  one column per hyperparameter element, named as in ``hyper_posterior``
  (``ls[0]``, ``eta``, ``sigma``, ...); ``n_draws (gp, fit)`` of them;
* ``log_weight (gp, step, draw)`` and ``fit_used (gp, step)``: which fit each step
  used and its draws' weights; ``step_key (gp, step)`` is the step's random-stream
  key and ``step_iteration (gp, step)`` its ``iteration`` in the results (from 1;
  -1 while the input is pending or if it failed).

:func:`step_posterior` turns one step's draws into an ArviZ DataTree.

Example
-------
>>> import pp_decomp as ppd
>>> from pp_decomp.models import get_problem
>>> opt = ppd.Optimizer(get_problem("synthetic", seed=0), seed=0)
>>> _ = opt.run(7)
>>> ds = opt.draw_log.to_dataset(opt.records)
>>> ds["step_iteration"].sel(gp="f0").values.tolist(), ds.sizes["draw"]
([6, 7], 1)
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field, fields

import numpy as np
import xarray as xr
from scipy.special import logsumexp

from pp_decomp.components.criticism import criticise_data, loo_data_of
from pp_decomp.components.posterior.tree import draws_dataset, from_draws
from pp_decomp.problem import forward
from pp_decomp.validate import as_float_array, check_X, check_Y

# the spawn-key streams of one step's random numbers
INIT_STREAM, FIT_STREAM, ACQ_STREAM, NOISE_STREAM = 0, 1, 2, 3
# fits made to show a posterior (predict, posterior) outside the loop's steps
VIEW_STREAM = 4
# which node a partial evaluation takes (pp_decomp.loop.nodes)
NODE_STREAM = 5


@dataclass
class FitNotes:
    """What an updater notes about one step's fit (the ``notes`` of ``Updater.update``).

    ``refit``: each GP (re)fitted at the step, by name, its :func:`fit_summary`;
    ``ess``, ``pareto_k``: by GP, the effective sample size and Pareto ``k̂`` of
    reweighted draws in use (the fast path; ``None`` elsewhere); ``structure``:
    an additive GP's groups as JSON.
    """

    refit: dict = field(default_factory=dict)
    ess: dict | None = None
    pareto_k: dict | None = None
    structure: str | None = None


@dataclass(frozen=True)
class StepRecord:
    """The record of one step, written once when the step's input is chosen (or told
    unasked, ``phase="user"``): its ``phase`` (``init``, ``acquisition``, ``user``),
    ``key`` (its random streams'), ``beta`` and the maximised ``acq_value``, the
    wall times ``fit_seconds`` (the model update) and ``ask_seconds`` (all of
    ``ask``), GP-MI's ``gamma_next``, the fit's ``notes`` and each GP's ``criticism``.

    Runs keep it as :meth:`as_dict` (their checkpoints and ``Optimizer.records``).

    >>> StepRecord("user", gamma_next=0.0).as_dict()["phase"]
    'user'
    """

    phase: str
    key: int | None = None
    beta: float = np.nan
    acq_value: float = np.nan
    fit_seconds: float = 0.0
    ask_seconds: float = 0.0
    gamma_next: float = 0.0
    notes: FitNotes = field(default_factory=FitNotes)
    criticism: dict | None = None

    def as_dict(self) -> dict:
        """The record as runs store it: these fields by name, the notes' flattened
        (``refit``; ``structure``, ``ess``, ``pareto_k`` where noted), ``criticism``
        and ``key`` where there are."""
        out = {
            "phase": self.phase,
            "beta": self.beta,
            "acq_value": self.acq_value,
            "fit_seconds": self.fit_seconds,
            "ask_seconds": self.ask_seconds,
            "gamma_next": self.gamma_next,
            "refit": self.notes.refit,
        }
        for name in ("structure", "ess", "pareto_k"):
            if getattr(self.notes, name) is not None:
                out[name] = getattr(self.notes, name)
        if self.criticism is not None:
            out["criticism"] = self.criticism
        if self.key is not None:
            out["key"] = self.key
        return out


def fit_summary(gp, seconds: float | None = None, diagnostics=None) -> dict:
    """Hyperparameter means and diagnostics of a refit (``seconds`` defaults to the fit's;
    ``diagnostics`` to ``gp``'s: a refit that failed its checks gives its own).

    A kernel expression's ``ls_mean`` and ``eta_mean`` are NaN (its hyperparameters
    are not one ``ℓ`` and one ``η``), and so are a PyMC model's unless it has an
    ``ls`` per input and a scalar ``eta``; every model's hyperparameters, by name, are
    summarised in ``posterior`` (:func:`posterior_summary`).
    """
    d = gp.draws
    ls, eta = getattr(d, "ls", None), getattr(d, "eta", None)
    # a user's PyMC model may name its own variables ls and eta: one per input, or not
    if ls is not None and np.shape(ls)[1:] == (gp.input_dim,) and np.ndim(eta) == 1:
        means = {"ls_mean": ls.mean(0), "eta_mean": float(eta.mean())}
    else:
        means = {"ls_mean": np.full(gp.input_dim, np.nan), "eta_mean": np.nan}
    return {
        **means,
        "sigma_mean": float(d.sigma.mean()),
        "posterior": posterior_summary(d),
        **diagnostics_summary(diagnostics or gp.diagnostics, seconds),
    }


def posterior_summary(draws) -> dict:
    """Each hyperparameter's posterior over the fit's draws, ``name -> [mean, sd,
    5% and 95% quantiles]`` (:data:`~pp_decomp.results.STATISTICS`), on the model's scale; a vector
    hyperparameter (ARD lengthscales) gives one entry per element, ``ls[0]``, ..."""
    out = {}
    for name in draws.NDIM:
        value = getattr(draws, name, None)
        if value is None:
            continue
        value = np.asarray(value, dtype=float)
        columns = value.reshape(len(value), -1)
        vector = value.ndim > 1
        # all columns at once: 110 ARD lengthscales of 23 GPs cost 0.5 s a step one by one
        stats = np.vstack(
            [columns.mean(0), columns.std(0), *np.quantile(columns, [0.05, 0.95], axis=0)]
        ).T.tolist()
        for i, row in enumerate(stats):
            out[f"{name}[{i}]" if vector else name] = row
    return out


def diagnostics_summary(d, seconds: float | None = None) -> dict:
    """A refit's :class:`~pp_decomp.components.diagnostics.FitDiagnostics` as record fields,
    each about the draws the fit's predictions use (``fit_draws``): weighted draws
    have no r-hat (NaN; their chains' is in the fit's ``idata``), and ``converged``
    is :meth:`~pp_decomp.components.diagnostics.FitDiagnostics.problems` finding none."""
    return {
        "rhat_max": np.nan if d.weighted else d.rhat_max,
        "ess_bulk_min": d.ess_bulk_min,
        "ess_tail_min": d.ess_tail_min,
        "divergences": d.divergences,
        "repairs": d.attempts - 1,
        "converged": bool(d.converged) and not d.problems(),
        "reweighted": bool(d.reweighted),
        "fit_pareto_k": d.pareto_k,
        "fit_draws": d.draws_used,
        "fit_ess_needed": d.ess_needed(),
        "fit_seconds": d.seconds if seconds is None else seconds,
    }


def criticism_record(models: dict, transform, names, refit=None) -> dict:
    """Each GP's :func:`~pp_decomp.components.criticism.criticise` summary by name, in the
    system's units (``transform``: the loop's outcome transform over the
    components ``names``); GPs that keep no factors are left out.

    ``refit``: the GPs (re)fitted at this step; the others are criticised only
    where that is exact and cheap (one draw, as MAP's), so that weighted draws
    pay for PSIS once per refit, not at every step. ``None``: every GP.
    """
    logged = transform if isinstance(transform, tuple | list) else (transform,) * len(names)
    log_of = dict(zip(names, (t == "log" for t in logged), strict=True))
    out = {}
    for name, model in models.items():
        data = loo_data_of(model)
        if data is None or (refit is not None and name not in refit and len(data.L_inv) > 1):
            continue
        out[name] = criticise_data(data, outcome_log=log_of.get(name, False)).record()
    return out


def jsonable(obj):
    """``obj`` with numpy arrays and scalars turned into lists and Python numbers, in
    dicts and lists at any depth."""
    if isinstance(obj, dict):
        return {k: jsonable(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [jsonable(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    if isinstance(obj, np.generic):
        return obj.item()
    return obj


def checked_observation(problem, x, y, transform: str = "none") -> tuple[np.ndarray, np.ndarray]:
    """``x (n, d)``, ``y (n, J)`` validated against ``problem`` (one observation: ``x
    (d,)``, ``y (J,)``), ``g(y; x)`` finite, ``y`` in the domain of the outcome
    ``transform``; an error names the first bad row, and nothing is recorded."""
    x = check_X(np.atleast_2d(as_float_array(x, "x")), "x", input_dim=problem.dim)
    y = np.atleast_2d(as_float_array(y, "y"))  # an error's positions are those of y as given
    bad = np.argwhere(~np.isfinite(y))
    if len(bad) and y.shape[-1] == problem.n_components:
        i, j = bad[0]
        raise ValueError(
            f"y must be finite; component {problem.component_names[j]!r} is {y[i, j]} at "
            f"index ({i}, {j}) ({len(bad)} non-finite value(s)); nothing was told"
        )
    y = check_Y(y, "y", n=len(x), n_components=problem.n_components)

    def where(i: int) -> str:
        return f"x={x[i].tolist()}" if len(x) == 1 else f"x[{i}]={x[i].tolist()}"

    outside = np.flatnonzero(~problem.domain.contains(x))
    if len(outside):
        raise ValueError(f"{where(outside[0])} is outside the problem's domain")
    for i in range(len(y)):
        try:  # refused before it is recorded: every later fit would fail on it
            forward(transform, y[i : i + 1], problem.component_names)
        except ValueError as err:
            raise ValueError(
                f"{err} at {where(i)}; it was not recorded (tell_failure(x, reason) "
                "records a failed evaluation)"
            ) from None
    h = problem.compose(y, x)
    bad = np.flatnonzero(~np.isfinite(h))
    if len(bad):
        i = bad[0]
        raise ValueError(
            f"g(y; x) is not finite ({h[i]}) at {where(i)} for y={y[i].tolist()}: "
            "tell it with tell_failure(x, reason) if the system failed there"
        )
    return x, y


def warn_if_repeated(X: np.ndarray, x: np.ndarray, replicate: bool) -> None:
    """Warn, naming it, where ``x`` was told before and was not asked again: a notebook
    cell run twice tells the same result twice. A replicate meant as one
    (``replicate=True``) is recorded silently; either way nothing is dropped."""
    if replicate or not len(X):
        return
    same = np.flatnonzero(np.all(X == x, axis=1))
    if len(same):
        warnings.warn(
            f"tell: x={x.tolist()} was told before (evaluation {int(same[0]) + 1}) and not "
            "asked again; it is recorded as a replicate. Pass replicate=True where one is "
            "meant (a cell run twice tells the same result twice)",
            UserWarning,
            stacklevel=3,
        )


class DrawLog:
    """The draws each model-based step used, per GP (see the module docstring)."""

    def __init__(self):
        self.fits: dict[str, list[dict[str, np.ndarray]]] = {}
        # per GP: (step key, index into its fits, normalised log weights)
        self.steps: dict[str, list[tuple[int, int, np.ndarray]]] = {}

    def add(self, key: int, models: dict) -> None:
        """Record the draws and weights ``models`` (the GPs by name) chose with at step ``key``."""
        for name, model in models.items():
            gp, logw = fitted_draws(model)
            if getattr(gp, "draws", None) is None:
                continue  # a GP on given hyperparameters draws none
            draws = draw_arrays(gp.draws)
            fits = self.fits.setdefault(name, [])
            if not fits or not _same(fits[-1], draws):
                fits.append(draws)
            logw = normalised_log_weights(logw, _size(draws))
            self.steps.setdefault(name, []).append((int(key), len(fits) - 1, logw))

    def to_dataset(self, records) -> xr.Dataset | None:
        """The log as one Dataset (the module docstring's layout), ``None`` while no
        step chose with a model; ``records``: the run's step records in results
        order, which give each step its ``iteration``."""
        if not self.steps:
            return None
        names = list(self.steps)
        columns = list(dict.fromkeys(c for n in names for f in self.fits[n] for c in _columns(f)))
        n_fits = max(len(self.fits[n]) for n in names)
        n_steps = max(len(self.steps[n]) for n in names)
        S = max(_size(f) for n in names for f in self.fits[n])
        value = np.full((len(names), n_fits, S, len(columns)), np.nan)
        n_draws = np.zeros((len(names), n_fits), dtype=np.int64)
        for g, n in enumerate(names):
            for i, f in enumerate(self.fits[n]):
                for c, col in _columns(f).items():
                    value[g, i, : len(col), columns.index(c)] = col
                n_draws[g, i] = _size(f)
        logw = np.full((len(names), n_steps, S), np.nan)
        step = np.full((3, len(names), n_steps), -1, dtype=np.int64)  # key, fit, iteration
        iteration = {r["key"]: i for i, r in enumerate(records, 1) if "key" in r}
        for g, n in enumerate(names):
            for k, (key, fit, w) in enumerate(self.steps[n]):
                logw[g, k, : len(w)] = w
                step[:, g, k] = key, fit, iteration.get(key, -1)
        gs = ("gp", "step")
        return xr.Dataset(
            {
                "value": (("gp", "fit", "draw", "hyperparameter"), value),
                "n_draws": (("gp", "fit"), n_draws),
                "log_weight": (("gp", "step", "draw"), logw),
                "fit_used": (gs, step[1]),
            },
            coords={
                "gp": names,
                "hyperparameter": columns,
                "step_key": (gs, step[0]),
                "step_iteration": (gs, step[2]),
            },
        )

    @classmethod
    def from_dataset(cls, ds: xr.Dataset | None) -> DrawLog:
        """The log stored as :meth:`to_dataset`'s Dataset (empty for ``None``)."""
        log = cls()
        if ds is None:
            return log
        for g, name in enumerate(ds["gp"].values.tolist()):
            n_draws = ds["n_draws"].values[g]
            log.fits[name] = [_arrays(ds, g, f) for f in range(ds.sizes["fit"]) if n_draws[f] > 0]
            keys, used = ds["step_key"].values[g], ds["fit_used"].values[g]
            logw = ds["log_weight"].values[g]
            log.steps[name] = [
                (int(keys[k]), int(used[k]), logw[k, : n_draws[used[k]]])
                for k in range(ds.sizes["step"])
                if used[k] >= 0
            ]
        return log


def step_posterior(ds: xr.Dataset, name: str, iteration: int) -> xr.DataTree:
    """GP ``name``'s draws at step ``iteration`` of a stored run as an ArviZ DataTree:
    ``posterior`` (one chain of the fit's draws) and ``draws_in_use`` (the same with
    their ``log_weight``). ``ds``: the ``draws`` group (:meth:`DrawLog.to_dataset`,
    or :func:`~pp_decomp.loop.checkpoint.read_draws`)."""
    names = ds["gp"].values.tolist()
    if name not in names:
        raise KeyError(f"name must be one of {sorted(names)}; got {name!r}")
    g = names.index(name)
    at = ds["step_iteration"].values[g]
    steps = np.flatnonzero(at == iteration)
    if not len(steps):
        chose = sorted(int(i) for i in at if i >= 0)
        raise ValueError(
            f"iteration must be a step at which {name!r} chose with a model (one of "
            f"{chose}); got {iteration}"
        )
    s = steps[-1]
    f = int(ds["fit_used"].values[g, s])
    draws = _arrays(ds, g, f)
    tree = from_draws({p: v[None] for p, v in draws.items()})
    n = int(ds["n_draws"].values[g, f])
    tree["draws_in_use"] = draws_in_use(draws, ds["log_weight"].values[g, s, :n])
    tree.attrs.update(iteration=int(iteration), gp=name)
    return tree


def normalised_log_weights(logw, S: int) -> np.ndarray:
    """``logw (S,)`` shifted so that the weights sum to one; equal weights for ``None``."""
    logw = np.zeros(S) if logw is None else np.asarray(logw, dtype=float)
    return logw - logsumexp(logw)


def draws_in_use(draws: dict[str, np.ndarray], logw: np.ndarray) -> xr.DataTree:
    """The ``draws_in_use`` group: each hyperparameter's draws ``(S, ...)`` as one
    chain, with their normalised ``log_weight (S,)``."""
    in_use = draws_dataset({k: v[None] for k, v in draws.items()})
    in_use["log_weight"] = (("chain", "draw"), np.asarray(logw, dtype=float)[None])
    return xr.DataTree(in_use)


def fitted_draws(model):
    """The fitted object that holds ``model``'s draws, idata and diagnostics, and the
    current log weights of its draws (``None``: equal)."""
    comp = getattr(model, "comp", None)
    if comp is not None:  # a full-Bayes fast-path view
        return comp.gp, comp.post.logw
    joint = getattr(model, "joint", None)
    return (joint if joint is not None else model), None


def draw_arrays(draws) -> dict[str, np.ndarray]:
    """Each hyperparameter's draws ``(S, ...)`` by name."""
    if hasattr(draws, "values") and isinstance(draws.values, dict):  # a kernel expression's
        return {k: np.asarray(v, dtype=float) for k, v in draws.values.items()}
    names = getattr(draws, "NDIM", None) or [f.name for f in fields(draws)]
    return {
        n: np.asarray(getattr(draws, n), dtype=float)
        for n in names
        if getattr(draws, n, None) is not None
    }


def _size(draws: dict[str, np.ndarray]) -> int:
    return len(next(iter(draws.values())))


def _columns(draws: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """One column per hyperparameter element, ``ls[0]``, ..., as in ``hyper_posterior``."""
    out = {}
    for name, v in draws.items():
        cols = v.reshape(len(v), -1)
        if v.ndim == 1:
            out[name] = cols[:, 0]
        else:
            out.update({f"{name}[{i}]": cols[:, i] for i in range(cols.shape[1])})
    return out


def _arrays(ds: xr.Dataset, g: int, f: int) -> dict[str, np.ndarray]:
    """Fit ``f`` of GP ``g``: each hyperparameter's draws ``(S,)`` or ``(S, k)`` by name."""
    n = int(ds["n_draws"].values[g, f])
    value = ds["value"].values[g, f, :n]
    out: dict[str, list] = {}
    for c, col in enumerate(ds["hyperparameter"].values.tolist()):
        if np.isnan(value[:, c]).all():
            continue  # another GP's hyperparameter
        out.setdefault(col.split("[")[0], []).append((col, value[:, c]))
    return {
        name: cols[0][1]
        if len(cols) == 1 and "[" not in cols[0][0]
        else np.stack([v for _, v in cols], axis=1)
        for name, cols in out.items()
    }


def _same(a: dict[str, np.ndarray], b: dict[str, np.ndarray]) -> bool:
    return a.keys() == b.keys() and all(
        a[k].shape == b[k].shape and np.array_equal(a[k], b[k]) for k in a
    )
