"""A run's history as an xarray Dataset; regret; netCDF I/O."""

from __future__ import annotations

import json
from importlib.metadata import PackageNotFoundError, version

import numpy as np
import xarray as xr

_VERSIONED = ("pp-decomp", "pymc", "pytensor", "arviz", "nutpie", "numpy", "scipy", "xarray")
_REFIT_FIELDS = ("eta_mean", "sigma_mean", "rhat_max", "ess_bulk_min", "divergences", "fit_seconds")


def package_versions() -> dict[str, str]:
    """Versions of the packages a result depends on."""
    out = {}
    for name in _VERSIONED:
        try:
            out[name] = version(name)
        except PackageNotFoundError:
            out[name] = "not installed"
    return out


def build_dataset(problem, X, Y, records, settings) -> xr.Dataset:
    """History of a run.

    Variables (dims): ``x(iteration, dim)``, ``y(iteration, component)``,
    ``objective(iteration)`` (``g`` of the observed components), ``phase``,
    ``acq_value``, ``beta``, ``ask_seconds``, ``fit_seconds``; per refit and
    model (NaN where no refit happened) ``ls_mean(iteration, model, dim)``,
    ``eta_mean``, ``sigma_mean``, ``rhat_max``, ``ess_bulk_min``, ``divergences``;
    on the fast path ``ess(iteration, model)``, the effective sample size of the
    reweighted hyperparameter draws used at each step; for the additive
    strategies ``structure(iteration)``, the learnt groups as JSON where relearnt;
    where the problem's optimum is known, ``true_objective`` (noise-free),
    ``regret``, ``cumulative_regret`` and ``simple_regret``.
    """
    n, d = X.shape
    it = np.arange(1, n + 1)
    names = sorted({m for r in records for m in r.get("refit", {})}, key=str)
    ds = xr.Dataset(
        {
            "x": (("iteration", "dim"), X),
            "y": (("iteration", "component"), Y),
            "objective": ("iteration", problem.compose(Y, X) if n else np.empty(0)),
            "phase": ("iteration", np.array([r["phase"] for r in records], dtype=str)),
            "acq_value": ("iteration", np.array([r["acq_value"] for r in records], dtype=float)),
            "beta": ("iteration", np.array([r["beta"] for r in records], dtype=float)),
            "ask_seconds": ("iteration", np.array([r["ask_seconds"] for r in records], float)),
            "fit_seconds": ("iteration", np.array([r["fit_seconds"] for r in records], float)),
        },
        coords={"iteration": it, "dim": np.arange(d), "component": list(problem.component_names)},
    )
    if names:
        ls = np.full((n, len(names), d), np.nan)
        fields = {f: np.full((n, len(names)), np.nan) for f in _REFIT_FIELDS}
        for i, r in enumerate(records):
            for k, name in enumerate(names):
                summ = r.get("refit", {}).get(name)
                if summ is None:
                    continue
                ls[i, k] = summ["ls_mean"]
                for f in _REFIT_FIELDS:
                    fields[f][i, k] = summ[f]
        ds = ds.assign_coords(model=names)
        ds["ls_mean"] = (("iteration", "model", "dim"), ls)
        for f, arr in fields.items():
            ds[f"refit_{f}" if f == "fit_seconds" else f] = (("iteration", "model"), arr)
    ess_names = sorted({m for r in records for m in r.get("ess", {})}, key=str)
    if ess_names:
        ess = np.full((n, len(ess_names)), np.nan)
        for i, r in enumerate(records):
            for k, name in enumerate(ess_names):
                ess[i, k] = r.get("ess", {}).get(name, np.nan)
        ds = ds.assign_coords(model=ess_names)
        ds["ess"] = (("iteration", "model"), ess)
    if any("structure" in r for r in records):
        # the additive strategies' groups (JSON), at the steps that relearnt them
        ds["structure"] = ("iteration", np.array([r.get("structure", "") for r in records]))
    if problem.optimum is not None and n:
        true = problem.objective(X)
        ds["true_objective"] = ("iteration", true)
        ds = add_regret(ds, problem.optimum, problem.maximize)
    ds.attrs.update(
        problem=problem.name,
        strategy=settings["strategy"],
        seed=settings["seed"],
        maximize=int(problem.maximize),
        settings=json.dumps(settings),
        versions=json.dumps(package_versions()),
    )
    if problem.optimum is not None:
        ds.attrs["optimum"] = float(problem.optimum)
    return ds


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


def plot_run(ds: xr.Dataset, path) -> None:
    """Objective, regret and acquisition diagnostics of one run, saved to ``path``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    has_regret = "regret" in ds
    fig, axes = plt.subplots(1, 3 if has_regret else 2, figsize=(14, 4), constrained_layout=True)
    it = ds["iteration"].values
    ax = axes[0]
    ax.plot(it, ds["objective"], ".", label="observed g(y)")
    if "true_objective" in ds:
        ax.plot(it, ds["true_objective"], "-", alpha=0.6, label="true f(x)")
    ax.set_xlabel("iteration")
    ax.set_ylabel("objective")
    ax.legend()
    if has_regret:
        ax = axes[1]
        ax.plot(it, ds["cumulative_regret"] / it, label="average regret R_t / t")
        ax.plot(it, ds["simple_regret"], label="simple regret")
        ax.set_yscale("symlog", linthresh=1e-3)
        ax.set_xlabel("iteration")
        ax.legend()
    ax = axes[-1]
    ax.plot(it, ds["ask_seconds"], label="ask seconds")
    ax.set_xlabel("iteration")
    ax.legend()
    fig.suptitle(f"{ds.attrs['problem']} / {ds.attrs['strategy']} (seed {ds.attrs['seed']})")
    fig.savefig(path, dpi=110)
    plt.close(fig)


def plot_comparison(runs: dict, path) -> None:
    """Mean cumulative regret (± standard error over seeds) per strategy.

    ``runs`` maps ``(strategy, seed)`` to a run's Dataset.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(11, 4), constrained_layout=True)
    strategies = sorted({s for s, _ in runs})
    for strategy in strategies:
        cum = np.stack(
            [ds["cumulative_regret"].values for (s, _), ds in runs.items() if s == strategy]
        )
        it = np.arange(1, cum.shape[1] + 1)
        for ax, arr in ((axes[0], cum), (axes[1], cum / it)):
            m = arr.mean(0)
            se = arr.std(0, ddof=1) / np.sqrt(len(arr)) if len(arr) > 1 else 0 * m
            ax.plot(it, m, label=strategy)
            ax.fill_between(it, m - se, m + se, alpha=0.2)
    axes[0].set_ylabel("cumulative regret")
    axes[1].set_ylabel("average regret R_t / t")
    for ax in axes:
        ax.set_xlabel("iteration")
        ax.legend()
    fig.savefig(path, dpi=110)
    plt.close(fig)
