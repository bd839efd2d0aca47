"""The tables and pictures of a hyperparameter-uncertainty study
(:func:`~pp_decomp.apps.hyper_study.hyper_study`).

Every figure is a mean over seeds with its standard error ``sd / √n_seeds``;
differences are paired by seed (the same instance and initial design).
"""

from __future__ import annotations

import numpy as np
import xarray as xr

from pp_decomp.apps.figures import FIGURES


def mean_se(per_seed: np.ndarray) -> tuple[float, float]:
    """Mean and standard error over seeds of ``per_seed (n,)``, NaNs dropped (SE NaN for one)."""
    v = np.asarray(per_seed, dtype=float)
    v = v[np.isfinite(v)]
    if not len(v):
        return np.nan, np.nan
    se = v.std(ddof=1) / np.sqrt(len(v)) if len(v) > 1 else np.nan
    return float(v.mean()), float(se)


def format_mean_se(per_seed) -> str:
    """The mean and its standard error, rounded to the error's second significant digit (three
    significant digits of the mean where there is no spread)."""
    m, se = mean_se(per_seed)
    if not np.isfinite(se) or se == 0:
        return f"{m:.3g}"
    decimals = max(0, 1 - int(np.floor(np.log10(se))))
    if decimals > 5:
        return f"{m:.2e} ± {se:.1e}"
    return f"{m:.{decimals}f} ± {se:.{decimals}f}"


def _bands(steps: np.ndarray, n: int = 3) -> list[np.ndarray]:
    return [b for b in np.array_split(steps, min(n, len(steps))) if len(b)]


def step_table(ds: xr.Dataset) -> str:
    """Per band of steps: disagreement with full Bayes, the other's choice's extra
    regret, each bound's coverage against its nominal level, and full Bayes's
    hyperparameter width (the mean over its GPs and their parameters)."""
    others = [str(a) for a in ds["inference"].values if a != "nuts"]
    head = ["steps"] + [f"disagree {a}" for a in others]
    head += [f"extra regret {a}" for a in others]
    head += [f"bound cover {a}" for a in ds["inference"].values] + ["nominal", "log-sd (nuts)"]
    lines = ["| " + " | ".join(head) + " |", "|" + " --- |" * len(head)]
    nuts_regret = ds["choice_regret"].sel(inference="nuts")
    for band in _bands(ds["step"].values):
        sub = ds.sel(step=band)
        cells = [f"{band[0]}-{band[-1]}"]
        cells += [format_mean_se(sub["disagree"].sel(inference=a).mean("step")) for a in others]
        extra = sub["choice_regret"] - nuts_regret.sel(step=band)
        cells += [format_mean_se(extra.sel(inference=a).mean("step")) for a in others]
        cells += [
            format_mean_se(sub["bound_coverage"].sel(inference=a).mean("step"))
            for a in ds.inference
        ]
        cells.append(f"{float(sub['bound_nominal'].mean()):.3f}")
        cells.append(format_mean_se(sub["hyper_sd"].mean(("step", "gp", "parameter"))))
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def regret_table(ds: xr.Dataset) -> str:
    """Per inference: simple regret at the last evaluation and cumulative regret,
    each with its paired difference from full Bayes (negative: below full Bayes)."""
    T = int(ds["iteration"].values[-1])
    head = ["inference", f"simple regret at T={T}", "minus nuts", "cumulative regret", "minus nuts"]
    lines = ["| " + " | ".join(head) + " |", "|" + " --- |" * len(head)]
    last = ds.sel(iteration=T)
    for a in ds["inference"].values:
        cells = [str(a)]
        for v in ("simple_regret", "cumulative_regret"):
            cells.append(format_mean_se(last[v].sel(inference=a)))
            diff = last[v].sel(inference=a) - last[v].sel(inference="nuts")
            cells.append("" if a == "nuts" else format_mean_se(diff))
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def acquisition_table(ds: xr.Dataset) -> str:
    """Where the choices disagree, what each acquisition loses by the other's choice:
    ``α_nuts(x) − α_nuts(x^a)`` and ``α_a(x^a) − α_a(x)`` (both ≥ 0 up to the
    maximiser's tolerance: each acquisition is rebuilt with its step's random
    numbers). Each seed's mean over its disagreeing steps, then their mean and SE over
    seeds; "disagreeing steps" counts (seed, step) pairs."""
    head = ["inference", "disagreeing steps", "nuts loses at a's choice", "a loses at nuts' choice"]
    lines = ["| " + " | ".join(head) + " |", "|" + " --- |" * len(head)]
    nuts_own = ds["acq_own"].sel(inference="nuts")
    for a in ds["inference"].values:
        if a == "nuts":
            continue
        sub = ds.sel(inference=a)
        mask = sub["disagree"] > 0
        loss_nuts = (nuts_own - sub["nuts_acq_at_choice"]).where(mask).mean("step")
        loss_a = (sub["acq_own"] - sub["acq_at_nuts_choice"]).where(mask).mean("step")
        n = int(mask.sum())
        lines.append(f"| {a} | {n} | {format_mean_se(loss_nuts)} | {format_mean_se(loss_a)} |")
    return "\n".join(lines)


def study_tables(ds: xr.Dataset) -> str:
    """The three tables with their headings, in Markdown."""
    title = f"{ds.attrs.get('problem', '')}, {ds.attrs.get('strategy', '')}"
    return "\n\n".join(
        [
            f"## {title}: {ds.sizes['seed']} seeds × {ds.sizes['iteration']} evaluations",
            "### Along the full-Bayes run (per band of steps)",
            step_table(ds),
            "### Acquisition lost where the choices differ",
            acquisition_table(ds),
            "### Regret of the paired runs",
            regret_table(ds),
        ]
    )


def plot_study(ds: xr.Dataset, path) -> None:
    """Three panels saved to ``path``: disagreement with full Bayes and each bound's
    coverage against the step; full Bayes's hyperparameter widths per GP;
    the paired runs' simple regret (mean and standard-error bands)."""
    plt = FIGURES
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.2), constrained_layout=True)
    steps = ds["step"].values
    ax = axes[0]
    for k, a in enumerate(ds["inference"].values):
        if a != "nuts":
            rate = ds["disagree"].sel(inference=a).mean("seed")
            ax.plot(steps, rate, "-", color=f"C{k}", label=f"disagree: {a}")
        cover = ds["bound_coverage"].sel(inference=a).mean("seed")
        ax.plot(steps, cover, "--", color=f"C{k}", label=f"bound coverage: {a}")
    ax.plot(steps, ds["bound_nominal"].mean("seed"), ":", color="k", label="nominal Φ(√β_t)")
    ax.set(xlabel="step", ylim=(-0.02, 1.02), title="choices and bounds")
    ax.legend(fontsize=7)
    ax = axes[1]
    width = ds["hyper_sd"].mean(("seed", "parameter"))
    for gp in ds["gp"].values:
        ax.plot(steps, width.sel(gp=gp), lw=1)
    ax.set(xlabel="step", ylabel="sd of log hyperparameter", title="full-Bayes posterior width")
    ax = axes[2]
    it = ds["iteration"].values
    for k, a in enumerate(ds["inference"].values):
        r = ds["simple_regret"].sel(inference=a)
        m, se = r.mean("seed"), r.std("seed") / np.sqrt(max(r.sizes["seed"], 1))
        ax.plot(it, m, color=f"C{k}", label=str(a))
        ax.fill_between(it, m - se, m + se, color=f"C{k}", alpha=0.2)
    ax.set(xlabel="evaluation", ylabel="simple regret", title="paired runs")
    ax.set_yscale("symlog", linthresh=max(float(np.nanmax(ds["simple_regret"])) * 1e-3, 1e-12))
    ax.legend(fontsize=7)
    fig.suptitle(f"{ds.attrs.get('problem', '')}: {ds.attrs.get('strategy', '')}")
    fig.savefig(path, dpi=110)
    plt.close(fig)
