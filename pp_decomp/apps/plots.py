"""Plots a user can read without the docs: one run, or strategies compared over seeds."""

from __future__ import annotations

import numpy as np
import xarray as xr

from pp_decomp.apps.figures import FIGURES


def _best_so_far(values: np.ndarray, maximize: bool) -> np.ndarray:
    return (np.maximum if maximize else np.minimum).accumulate(values)


def plot_run(ds: xr.Dataset, path) -> None:
    """Objective (with best so far, the optimum and the initial design marked), regret,
    each GP's LOO coverage (its criticism, where recorded) and time per step of one
    run, saved to ``path``."""
    plt = FIGURES
    has_regret, has_loo = "regret" in ds, "loo_coverage" in ds
    panels = 2 + has_regret + has_loo
    fig, axes = plt.subplots(1, panels, figsize=(5 * panels, 4.2), constrained_layout=True)
    it = ds["iteration"].values
    n_init = int((ds["phase"].values == "init").sum())
    maximize = bool(ds.attrs.get("maximize", 1))
    for ax in axes:
        if n_init:
            ax.axvspan(0.5, n_init + 0.5, color="0.9", label="initial design")
        ax.set_xlabel("evaluation")
    ax = axes[0]
    units = ds["objective"].attrs.get("units", "")
    ax.plot(it, ds["objective"], ".", color="C0", label="observed objective g(y)")
    if "true_objective" in ds:
        ax.plot(it, ds["true_objective"], "x", color="C0", alpha=0.5, label="true f(x)")
    best = _best_so_far(ds["objective"].values, maximize)
    ax.plot(it, best, "-", color="C1", label="best observed so far")
    if "optimum" in ds.attrs:
        ax.axhline(ds.attrs["optimum"], ls="--", color="k", lw=1, label="optimum f*")
    ax.set_ylabel(f"objective ({'maximised' if maximize else 'minimised'}; {units})")
    ax.legend(fontsize=8)
    if has_regret:
        ax = axes[1]
        ax.plot(it, ds["cumulative_regret"] / it, label="average regret R_t / t")
        ax.plot(it, ds["simple_regret"], label="simple regret (best so far)")
        ax.set_yscale("symlog", linthresh=1e-3)
        ax.set_ylabel("regret (0 is the optimum)")
        ax.legend(fontsize=8)
    if has_loo:
        _plot_loo_coverage(axes[-2], ds)
    ax = axes[-1]
    ax.plot(it, ds["ask_seconds"], label="ask (model update + acquisition)")
    ax.plot(it, ds["fit_seconds"], label="model update")
    ax.set_ylabel("seconds per step")
    ax.legend(fontsize=8)
    fig.suptitle(f"{ds.attrs['problem']} / {ds.attrs['strategy']} (seed {ds.attrs['seed']})")
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _plot_loo_coverage(ax, ds: xr.Dataset) -> None:
    """Each GP's share of observations inside its 95% leave-one-out interval per step."""
    cov = ds["loo_coverage"]
    gp_dim = cov.dims[1]
    for name in cov[gp_dim].values:
        ax.plot(ds["iteration"], cov.sel({gp_dim: name}), ".-", ms=3, lw=0.8, label=str(name))
    ax.axhline(0.95, ls="--", color="k", lw=1, label="nominal 0.95")
    ax.set_ylim(-0.02, 1.02)
    ax.set_ylabel("LOO coverage of own observations (95% interval)")
    ax.legend(fontsize=7, ncol=2)


def plot_comparison(runs: dict, path, title: str | None = None) -> None:
    """Mean cumulative and average regret (with the standard error over seeds) per strategy.

    ``runs`` maps ``(strategy, seed)`` to a run's Dataset; ``title`` heads the figure.
    """
    plt = FIGURES
    fig, axes = plt.subplots(1, 2, figsize=(11, 4), constrained_layout=True)
    for strategy in sorted({s for s, _ in runs}):
        cum = np.stack(
            [ds["cumulative_regret"].values for (s, _), ds in runs.items() if s == strategy]
        )
        it = np.arange(1, cum.shape[1] + 1)
        for ax, arr in ((axes[0], cum), (axes[1], cum / it)):
            m = arr.mean(0)
            se = arr.std(0, ddof=1) / np.sqrt(len(arr)) if len(arr) > 1 else 0 * m
            ax.plot(it, m, label=f"{strategy} (mean of {len(arr)})")
            ax.fill_between(it, m - se, m + se, alpha=0.2)
    axes[0].set_ylabel("cumulative regret (mean ± SE)")
    axes[1].set_ylabel("average regret R_t / t (mean ± SE)")
    for ax in axes:
        ax.set_xlabel("evaluation")
        ax.legend()
    if title:
        fig.suptitle(title)
    fig.savefig(path, dpi=110)
    plt.close(fig)


def plot_reliability(rel: xr.Dataset, path) -> None:
    """Reliability diagram of :func:`pp_decomp.apps.calibration.reliability`: empirical
    against nominal coverage of the objective (central intervals and upper
    bounds) and of each component (central intervals), with bars of two standard errors, and each
    component's LOO coverage of its own observations at 0.95 (crosses): what the
    run could tell of its calibration without the truth."""
    plt = FIGURES
    fig, ax = plt.subplots(figsize=(5.5, 5))
    q = rel["nominal"].values
    ax.plot([q.min(), 1], [q.min(), 1], color="0.6", lw=1, ls="--", label="calibrated")
    for bound, style in (("central", "-o"), ("upper", "-s")):
        y = rel["objective_coverage"].sel(bound=bound).values
        se = rel["objective_se"].sel(bound=bound).values
        ax.errorbar(q, y, yerr=2 * se, fmt=style, capsize=3, label=f"objective, {bound}")
    comp = rel["component_coverage"].sel(bound="central")
    for j, name in enumerate(comp["component"].values):
        color = f"C{(j + 2) % 10}"
        ax.plot(
            q,
            comp.sel(component=name).values,
            lw=0.8,
            alpha=0.6,
            color=color,
            label=f"{name}, central",
        )
        loo = float(rel["loo_coverage"].sel(component=name)) if "loo_coverage" in rel else np.nan
        if np.isfinite(loo):  # what the run saw of itself: its own observations left out
            ax.plot([0.95], [loo], "x", color=color, ms=7)
    if "loo_coverage" in rel and np.isfinite(rel["loo_coverage"]).any():
        ax.plot([], [], "x", color="0.3", label="LOO coverage of own observations (0.95)")
    ax.plot(
        [float(rel["ucb_used_nominal"])],
        [float(rel["ucb_used"])],
        "k*",
        ms=12,
        label="bound used (mean + √β sd)",
    )
    ax.set(xlabel="nominal coverage", ylabel="empirical coverage of the truth")
    ax.set_title(f"{rel.attrs.get('problem', '')} / {rel.attrs.get('strategy', '')}")
    ax.legend(fontsize=7, loc="lower right")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
