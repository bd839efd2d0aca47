"""What the loop records at each step, and the summary of a refit."""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import numpy as np

from pp_decomp.components.criticism import criticise_data, loo_data_of
from pp_decomp.composition.outcome import forward
from pp_decomp.validate import as_float_array, check_X, check_Y

# the spawn-key streams of one step's random numbers
INIT_STREAM, FIT_STREAM, ACQ_STREAM, NOISE_STREAM = 0, 1, 2, 3
# fits made to show a posterior (predict, posterior) outside the loop's steps
VIEW_STREAM = 4


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


def fit_summary(gp, seconds: float | None = None) -> dict:
    """Hyperparameter means and diagnostics of a refit (``seconds`` defaults to the fit's).

    A kernel expression's ``ls_mean`` and ``eta_mean`` are NaN (its hyperparameters
    are not one ``ℓ`` and one ``η``); every model's hyperparameters, by name, are
    summarised in ``posterior`` (:func:`posterior_summary`).
    """
    d = gp.draws
    if hasattr(d, "ls"):
        means = {"ls_mean": d.ls.mean(0), "eta_mean": float(d.eta.mean())}
    else:
        means = {"ls_mean": np.full(gp.input_dim, np.nan), "eta_mean": np.nan}
    return {
        **means,
        "sigma_mean": float(d.sigma.mean()),
        "posterior": posterior_summary(d),
        **diagnostics_summary(gp.diagnostics, seconds),
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
        for i in range(columns.shape[1]):
            v = columns[:, i]
            stats = [v.mean(), v.std(), *np.quantile(v, [0.05, 0.95])]
            out[f"{name}[{i}]" if vector else name] = [float(x) for x in stats]
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
    """``obj`` with numpy arrays and scalars turned into lists and Python numbers."""
    if isinstance(obj, dict):
        return {k: jsonable(v) for k, v in obj.items()}
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
