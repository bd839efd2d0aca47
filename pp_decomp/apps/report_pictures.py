"""A run in pictures a reader understands without the docs, and a short report.

:func:`run_pictures` draws, from a run's :class:`RunView` (``Optimizer.report_view()``):

* ``component.png``: one component's posterior over the inputs (mean and 90%
  credible band over the hyperparameter posterior), its observations and, where
  the problem knows it, the truth;
* ``objective.png``: the objective's posterior through ``g`` the same way, the
  strategy's upper bound, and the next input it would evaluate;
* ``hyperparameters.png``: that component's hyperparameter posterior (ArviZ's
  ``plot_dist`` of :meth:`~pp_decomp.Optimizer.posterior`);
* ``diagnostics.png``: per step, each GP's effective sample size and Pareto
  ``k̂`` of the draws in use, and its leave-one-out coverage of its observations;
* ``network.png``, for a function network's strategy: the graph with each node's
  fit (:mod:`pp_decomp.apps.network_picture`).

Over a domain of one input the posteriors are drawn along it; over more, along
the first input through the best input observed, the others held there.
:func:`write_report` lists the pictures in ``report.md``, one line each, and
:func:`report_of` does both for an optimiser (``Optimizer.report``). The module
reads no file and builds no optimiser: :mod:`pp_decomp.apps.run_report` opens a run's file.

Without the run's problem (a run made in Python, reported from its file alone)
:func:`file_pictures` draws what the results hold: ``run.png`` (the objective,
the best so far and the regret where stored), ``choices.png`` (the inputs and
components per evaluation) and ``diagnostics.png``; :func:`file_notes` names the
pictures skipped.

Example
-------
>>> import pp_decomp as ppd, tempfile
>>> from pp_decomp.models import get_problem
>>> opt = ppd.Optimizer(get_problem("synthetic", seed=0), seed=0)
>>> _ = opt.run(8)
>>> out = tempfile.mkdtemp()
>>> sorted(run_pictures(opt.report_view(), out))
['component.png', 'diagnostics.png', 'hyperparameters.png', 'objective.png']
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import xarray as xr

from pp_decomp.apps.figures import FIGURES
from pp_decomp.apps.network_picture import plot_network
from pp_decomp.apps.plots import plot_run
from pp_decomp.components.diagnostics import CONVERGENCE
from pp_decomp.problem import Problem
from pp_decomp.space import CandidateSet

BAND = (0.05, 0.5, 0.95)
NEEDS_PROBLEM = ("component.png", "objective.png", "hyperparameters.png")
NO_PROBLEM = "no problem given: pass --problem mod:factory for the posterior pictures"


@dataclass(frozen=True)
class RunView:
    """What the report's pictures read of a run (``Optimizer.report_view()``).

    ``strategy``, its ``surrogate`` kind and the ``inference`` method name the run;
    ``X (n, d)``, ``Y (n, J)``: the observations; ``pending (k, d)``: the inputs
    asked and not told; ``models()``: the last choice's GPs by name;
    ``results()``, ``predict(X, ...)``, ``posterior(name)``: as the optimiser's;
    ``outcome_transform``: the run's (a logged GP's fit is drawn in the system's units).
    """

    problem: Problem
    strategy: str
    surrogate: str
    inference: str
    X: np.ndarray
    Y: np.ndarray
    pending: np.ndarray
    models: Callable[[], dict]
    results: Callable[[], xr.Dataset]
    predict: Callable[..., xr.Dataset]
    posterior: Callable[..., xr.DataTree]
    outcome_transform: str | tuple = "none"

    @property
    def n(self) -> int:
        """Evaluations told."""
        return len(self.X)

    def signed_objective(self) -> np.ndarray:
        """Observed ``sign · g(y; x)`` at every evaluation: (n,)."""
        return self.problem.signed_objective(self.Y, self.X)


def title(run: RunView) -> str:
    """``problem: strategy (inference), n evaluations``."""
    return f"{run.problem.name}: {run.strategy} ({run.inference}), {run.n} evaluations"


def sweep(run: RunView, n: int = 200) -> tuple[np.ndarray, str]:
    """Inputs ``(m, d)`` to draw a posterior along, and what the x axis is."""
    dom, names = run.problem.domain, run.problem.input_names
    if isinstance(dom, CandidateSet):
        X = dom.X[np.argsort(dom.X[:, 0], kind="stable")]
        return X, names[0] if dom.dim == 1 else f"{names[0]} (candidates, sorted)"
    lo, hi = dom.bounds
    best = run.X[np.argmax(run.signed_objective())]
    X = np.repeat(best[None], n, axis=0)
    X[:, 0] = np.linspace(lo[0], hi[0], n)
    if dom.dim == 1:
        return X, names[0]
    return X, f"{names[0]} (the other inputs at the best observed)"


def run_pictures(run: RunView, out, component: str | None = None) -> dict[str, str]:
    """Draw the module's four pictures of the ``run`` into folder ``out``; returns
    ``file name -> one line on what it shows``."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    X, axis = sweep(run)
    pending = run.pending
    # predict fits the models where this session has none yet (a resumed run)
    post = run.predict(X, quantiles=BAND, n_samples=400)
    # the first component's GP, or the strategy's own (composed, additive) where it fits no other
    first = run.problem.component_names[0]
    name = component or (first if first in run.models() else next(iter(run.models())))
    lines = {}
    if "component_mean" in post:
        plot_component(run, post, name, axis, out / "component.png")
        lines["component.png"] = (
            f"component {name}: posterior mean and 90% band over {axis}, observations, truth"
        )
    plot_objective(run, post, axis, pending, out / "objective.png")
    lines["objective.png"] = (
        f"objective g(f): posterior over {axis}, the strategy's bound and the next input"
    )
    plot_hyperparameters(run, name, out / "hyperparameters.png")
    lines["hyperparameters.png"] = f"hyperparameter posterior of {name} (ArviZ plot_dist)"
    plot_diagnostics(run.results(), out / "diagnostics.png", title(run))
    lines["diagnostics.png"] = "per step: ESS and Pareto k̂ of each GP's draws, its LOO coverage"
    if run.surrogate == "network":
        plot_network(run, out / "network.png")
        lines["network.png"] = "the network, each node's observed outputs against its GP's fit"
    return lines


def plot_component(run: RunView, post: xr.Dataset, name: str, axis: str, path) -> None:
    """One component's posterior band along ``post``'s inputs, its observations and truth."""
    plt = FIGURES
    fig, ax = plt.subplots(figsize=(7, 4.2), constrained_layout=True)
    X = post["X"].values
    x = X[:, 0]
    q = post["component_quantile"].sel(component=name).values
    ax.fill_between(x, q[0], q[2], color="C0", alpha=0.25, label="90% credible band")
    ax.plot(x, post["component_mean"].sel(component=name), color="C0", label="posterior mean")
    j = list(run.problem.component_names).index(name)
    if run.problem.components is not None:
        truth = np.asarray(run.problem.components(X), dtype=float)[:, j]
        ax.plot(x, truth, "k--", lw=1, label="truth")
    _observations(ax, run, X, run.Y[:, j], "observations")
    units = run.problem.units["components"][j] or "its own units"
    ax.set(xlabel=axis, ylabel=f"{name} ({units})")
    ax.set_title(f"{title(run)}\ncomponent {name}", fontsize=10)
    ax.legend(fontsize=8)
    fig.savefig(path, dpi=110)
    plt.close(fig)


def slice_closeness(X: np.ndarray, at: np.ndarray, lo, hi) -> np.ndarray:
    """How close each row of ``X (n, d)`` lies to the slice the pictures draw (the
    first input free, the others at ``at``): ``exp(-(r / 0.25)²)`` of the distance
    ``r`` in the other inputs scaled to the box, 1 on the slice: (n,).

    >>> slice_closeness(np.array([[0.2, 0.5], [0.9, 1.0]]), np.array([0.0, 0.5]), [0, 0], [1, 1])
    array([1.        , 0.01831564])
    """
    width = np.asarray(hi, dtype=float)[1:] - np.asarray(lo, dtype=float)[1:]
    r = np.linalg.norm((X[:, 1:] - at[1:]) / np.where(width > 0, width, 1.0), axis=1)
    return np.exp(-((r / 0.25) ** 2))


def _observations(ax, run: RunView, X: np.ndarray, values: np.ndarray, label: str) -> None:
    """The observations on the picture's axis: over more than one input projected
    onto the first, each as opaque as it is close to the slice drawn."""
    if run.problem.dim == 1:
        ax.plot(run.X[:, 0], values, "o", color="C3", ms=4, label=label)
        return
    if isinstance(run.problem.domain, CandidateSet):  # the picture runs over every candidate
        alpha = np.ones(len(run.X))
    else:
        lo, hi = run.problem.domain.bounds
        alpha = np.clip(slice_closeness(run.X, X[0], lo, hi), 0.12, 1.0)
    colors = np.zeros((len(alpha), 4))
    colors[:] = (0.84, 0.15, 0.16, 1.0)  # C3
    colors[:, 3] = alpha
    ax.scatter(
        run.X[:, 0], values, s=16, c=colors, label=f"{label} (faded by distance from the slice)"
    )


def plot_objective(run: RunView, post: xr.Dataset, axis: str, pending: np.ndarray, path) -> None:
    """The objective's posterior band, the strategy's bound and the next input."""
    plt = FIGURES
    fig, ax = plt.subplots(figsize=(7, 4.2), constrained_layout=True)
    X = post["X"].values
    x, q = X[:, 0], post["objective_quantile"].values
    ax.fill_between(x, q[0], q[2], color="C2", alpha=0.25, label="90% credible band")
    ax.plot(x, post["objective_mean"], color="C2", label="posterior mean of g(f)")
    ax.plot(x, run.problem.sign * post["bound"], color="C1", lw=1, label="strategy's bound")
    if run.problem.components is not None:
        truth = run.problem.compose(np.asarray(run.problem.components(X), dtype=float), X)
        ax.plot(x, truth, "k--", lw=1, label="truth")
    _observations(ax, run, X, run.problem.compose(run.Y, run.X), "observed g(y)")
    for i, xp in enumerate(pending[:, 0]):
        ax.axvline(xp, color="C1", ls=":", label="next input" if i == 0 else None)
    if not len(pending):
        ax.plot([], [], " ", label="no input pending: ask() for the next")
    units = run.problem.units["objective"] or "its own units"
    goal = "maximised" if run.problem.maximize else "minimised"
    ax.set(xlabel=axis, ylabel=f"objective, {goal} ({units})")
    ax.set_title(f"{title(run)}\nthe objective through g", fontsize=10)
    ax.legend(fontsize=8)
    fig.savefig(path, dpi=110)
    plt.close(fig)


def plot_hyperparameters(run: RunView, name: str, path) -> None:
    """ArviZ's ``plot_dist`` of GP ``name``'s posterior (:meth:`Optimizer.posterior`)."""
    import arviz_plots

    plt = FIGURES
    tree = run.posterior(name)
    # the model's own parameters, in its order: the sampler's unconstrained copies
    # (``ls_log__``, ...) would show each positive one twice
    names = dict.fromkeys(str(v).removesuffix("_log__") for v in tree["posterior"].data_vars)
    shown = [v for v in names if v in tree["posterior"].data_vars]
    pc = arviz_plots.plot_dist(tree, var_names=shown, backend="matplotlib")
    fig = pc.viz["figure"].item()
    from matplotlib.ticker import MaxNLocator  # matplotlib only where a picture is drawn

    for ax in fig.axes:  # a narrow posterior's long tick labels run into each other
        ax.xaxis.set_major_locator(MaxNLocator(nbins=3))
        ax.tick_params(axis="x", labelsize=7, labelrotation=25)
    heading = f"{title(run)}: {name}'s hyperparameters ({tree.attrs.get('fit_draws', '')})"
    fig.suptitle(heading, y=1.12)
    fig.savefig(path, dpi=110, bbox_inches="tight")
    plt.close(fig)


def plot_diagnostics(ds: xr.Dataset, path, heading: str) -> None:
    """Per step and GP: ESS of the draws in use (bulk) against the threshold of
    their kind (``fit_ess_needed``: 400, or the draws kept for prior importance),
    Pareto ``k̂``, and LOO coverage with the band a calibrated GP shows on that
    many observations (0.95 plus or minus 2 binomial standard errors)."""
    plt = FIGURES
    fig, axes = plt.subplots(1, 3, figsize=(14, 4), constrained_layout=True)
    it = ds["iteration"].values
    for ax, var, label in (
        (axes[0], "ess_bulk_min", "bulk ESS of the fit's draws (smallest)"),
        (axes[1], "fit_pareto_k", "Pareto k̂ of the fit's weights"),
        (axes[2], "loo_coverage", "LOO coverage of own observations (95%)"),
    ):
        ax.set(xlabel="evaluation", ylabel=label)
        if var not in ds or not np.isfinite(ds[var].values).any():
            ax.text(0.5, 0.5, _EMPTY[var], ha="center", va="center", transform=ax.transAxes)
            continue
        gp_dim = ds[var].dims[1]  # 'model'; 'component' in files written before it was one
        for gp in ds[gp_dim].values:
            ax.plot(it, ds[var].sel({gp_dim: gp}), ".", ms=4, label=str(gp))
        ax.legend(fontsize=7, ncol=2)
    if "ess_bulk_min" in ds and np.isfinite(ds["ess_bulk_min"].values).any():
        _ess_thresholds(axes[0], ds)
        axes[0].set_yscale("log")
    axes[1].axhline(0.7, ls="--", color="k", lw=1)
    n = it.astype(float)
    band = 2 * np.sqrt(0.95 * 0.05 / n)
    axes[2].fill_between(it, 0.95 - band, np.minimum(0.95 + band, 1), color="0.85", zorder=0)
    axes[2].axhline(0.95, ls="--", color="k", lw=1)
    fig.suptitle(
        f"{heading}: diagnostics (dashed: the thresholds of the draws in use; "
        "grey: a calibrated GP's LOO coverage ± 2 SE on that many observations)",
        fontsize=9,
    )
    fig.savefig(path, dpi=110)
    plt.close(fig)


_EMPTY = {
    "ess_bulk_min": "no sample to count:\nMAP fits are one point",
    "fit_pareto_k": "no weighted draws:\nk̂ applies to importance weights",
    "loo_coverage": "no criticism recorded yet",
}


def _ess_thresholds(ax, ds: xr.Dataset) -> None:
    """A dashed line per ESS threshold in use, labelled with the draw kinds judged by it."""
    need = ds["fit_ess_needed"].values if "fit_ess_needed" in ds else None
    kinds = ds["fit_draws"].values if "fit_draws" in ds else None
    if need is None or kinds is None or not np.isfinite(need).any():
        # a file written before each fit recorded its threshold
        ax.axhline(CONVERGENCE.ess_min, ls="--", color="k", lw=1)
        return
    for value in np.unique(need[np.isfinite(need)]):
        which = sorted({str(k) for k in kinds[need == value] if k})
        ax.axhline(value, ls="--", color="k", lw=1)
        ax.annotate(
            f"{value:.0f}: {', '.join(which)}",
            (0.01, value),
            xycoords=("axes fraction", "data"),
            fontsize=7,
            va="bottom",
        )


def fit_kinds(ds: xr.Dataset) -> str:
    """What the run's fits were, by the kind of draws each used (``fit_draws``),
    with each kind's share: ``"fits: 40% chains (4), 60% posterior importance (6)"``;
    ``""`` where no fit was recorded."""
    if "fit_draws" not in ds:
        return ""
    kinds = [str(k) for k in np.ravel(ds["fit_draws"].values) if k]
    if not kinds:
        return ""
    names, counts = np.unique(kinds, return_counts=True)
    order = np.argsort(-counts, kind="stable")
    parts = [f"{100 * counts[i] / len(kinds):.0f}% {names[i]} ({counts[i]})" for i in order]
    return f"fits of {len(kinds)} in all: " + ", ".join(parts)


def paired_difference(a, b, name_a: str, name_b: str, what: str = "final cumulative regret") -> str:
    """``a - b`` over paired runs (one value each per seed) as a line with its
    standard error, and whether it is within noise (within 2 SE of zero):

    >>> paired_difference([3.0, 5.0, 4.0], [4.0, 5.5, 6.0], "x", "y").split(": ")[-1]
    'x lower'
    >>> paired_difference([3.0, 5.0, 4.0], [4.0, 4.5, 3.0], "x", "y").split(": ")[-1]
    'within noise (|difference| < 2 SE)'
    """
    d = np.asarray(a, dtype=float) - np.asarray(b, dtype=float)
    head = f"{name_a} - {name_b}, {what}: {d.mean():.3g}"
    if len(d) < 2:
        return f"{head} (one seed: no standard error)"
    se = float(d.std(ddof=1) / np.sqrt(len(d)))
    verdict = (
        "within noise (|difference| < 2 SE)"
        if abs(d.mean()) < 2 * se
        else f"{name_a if d.mean() < 0 else name_b} lower"
    )
    return f"{head} ± {se:.2g} (SE over {len(d)} paired seeds): {verdict}"


def write_report(out, heading: str, pictures: dict[str, str], notes=()) -> Path:
    """``report.md`` in ``out``: the heading, ``notes`` (lines) and each picture with
    its one line."""
    out = Path(out)
    lines = [f"# {heading}", "", *notes, ""]
    for file, line in pictures.items():
        lines += [f"## {file}", "", line, "", f"![{file}]({file})", ""]
    path = out / "report.md"
    path.write_text("\n".join(lines), encoding="utf-8")
    return path


def file_title(ds: xr.Dataset) -> str:
    """:func:`title` of a run from its results alone (``ds``, a run's file)."""
    inference = json.loads(ds.attrs["settings"]).get("inference", "?")
    n = ds.sizes["iteration"]
    return f"{ds.attrs['problem']}: {ds.attrs['strategy']} ({inference}), {n} evaluations"


def file_pictures(ds: xr.Dataset, out) -> dict[str, str]:
    """The pictures a run's results ``ds`` give without its problem, drawn into folder
    ``out``: ``run.png`` (:func:`pp_decomp.apps.plots.plot_run`), ``choices.png``
    (:func:`plot_choices`) and ``diagnostics.png``; returns ``file name -> one line``."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    plot_run(ds, out / "run.png")
    plot_choices(ds, out / "choices.png", file_title(ds))
    plot_diagnostics(ds, out / "diagnostics.png", file_title(ds))
    best = "regret" if "regret" in ds else "best objective so far"
    return {
        "run.png": f"observed objective, {best}, LOO coverage and time per step",
        "choices.png": "per evaluation: the inputs chosen and the components observed",
        "diagnostics.png": "per step: ESS and Pareto k̂ of each GP's draws, its LOO coverage",
    }


def file_notes(ds: xr.Dataset) -> list[str]:
    """``report.md``'s lines on a run from its results alone: the best objective
    observed, the regret where the file stores it, and the pictures skipped."""
    maximize = bool(ds.attrs.get("maximize", 1))
    obj = ds["objective"].values
    i = int(np.argmax(obj) if maximize else np.argmin(obj))
    x = ", ".join(f"{v:.4g}" for v in ds["x"].values[i])
    lines = [f"- best objective observed: {obj[i]:.4g} at evaluation {i + 1} (x = {x})"]
    if "simple_regret" in ds:
        final = float(ds["simple_regret"][-1]), float(ds["cumulative_regret"][-1])
        lines.append(f"- simple regret {final[0]:.4g}, cumulative regret {final[1]:.4g}")
    if kinds := fit_kinds(ds):
        lines.append(f"- {kinds}")
    lines.append(f"- skipped {', '.join(NEEDS_PROBLEM)}: {NO_PROBLEM}")
    return lines


def plot_choices(ds: xr.Dataset, path, heading: str) -> None:
    """Per evaluation, each input chosen (left) and each component observed (right)."""
    plt = FIGURES
    fig, axes = plt.subplots(1, 2, figsize=(12, 4), constrained_layout=True)
    it = ds["iteration"].values
    for ax, var, label in ((axes[0], "x", "input chosen"), (axes[1], "y", "component observed")):
        values = ds[var]
        other = values.dims[1]
        names = ds["input_name"].values if var == "x" and "input_name" in ds else values[other]
        for k, name in enumerate(np.asarray(names)):
            ax.plot(it, values[:, k], ".-", ms=4, lw=0.8, label=str(name))
        ax.set(xlabel="evaluation", ylabel=label)
        ax.legend(fontsize=7, ncol=2)
    fig.suptitle(f"{heading}: the choices and what was observed")
    fig.savefig(path, dpi=110)
    plt.close(fig)


def report_of(run: RunView, out, notes=()) -> Path:
    """The pictures of :func:`run_pictures` of the ``run`` and ``report.md``
    (:func:`write_report`, with ``notes``) in folder ``out``; returns report.md's path.

    Example: ``report_of(opt.report_view(), "run-report", ["Run file: run.nc"])``.
    """
    results = run.results()
    kinds = fit_kinds(results)
    notes = [*notes, *([f"- {kinds}"] if kinds else [])]
    if run.surrogate == "additive":  # predict does not cover the additive GP
        skipped = f"- skipped {', '.join(NEEDS_PROBLEM)}: predict does not cover "
        skipped += run.strategy
        return write_report(out, title(run), file_pictures(results, out), [*notes, skipped])
    return write_report(out, title(run), run_pictures(run, out), notes)
