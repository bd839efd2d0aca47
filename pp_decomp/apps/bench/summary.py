"""A benchmark's report: the markdown table of final regrets and paired comparisons."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import xarray as xr

from pp_decomp.apps.bench.plots import plot_bench


def write_report(ds: xr.Dataset, out) -> None:
    """``summary.md`` and ``regret.png`` of a combined benchmark, in folder ``out``.

    The baseline and compared strategies are the benchmark's own (its settings).
    """

    settings = json.loads(ds.attrs.get("settings", "{}"))
    table = summary_table(ds, settings.get("baseline", "gp-ucb"), settings.get("compared"))
    (Path(out) / "summary.md").write_text(table)
    plot_bench(ds, Path(out) / "regret.png")


def summarize(out) -> str:
    """Rewrite the report of the benchmark folder ``out`` from its ``bench.nc``; the table."""
    path = Path(out) / "bench.nc"
    if not path.exists():
        raise ValueError(f"no bench.nc in {str(out)!r}: run pp-decomp bench --out there first")
    ds = xr.load_dataset(path)
    write_report(ds, out)
    return (Path(out) / "summary.md").read_text()


def _mean_se(a: np.ndarray) -> tuple[float, float, int]:
    a = a[np.isfinite(a)]
    if len(a) == 0:
        return float("nan"), float("nan"), 0
    se = a.std(ddof=1) / np.sqrt(len(a)) if len(a) > 1 else float("nan")
    return float(a.mean()), float(se), len(a)


def _paired_change(base: np.ndarray, other: np.ndarray) -> str:
    """``other`` against ``base`` over paired trials: relative change (the paired
    difference and its standard error); the difference alone where ``base``'s mean
    is 0 (both at the optimum, say), which has no relative change."""
    ok = np.isfinite(base) & np.isfinite(other)
    if ok.sum() < 2:
        return ""
    diff = other[ok] - base[ok]
    paired = f"{diff.mean():+.3g} ± {diff.std(ddof=1) / np.sqrt(ok.sum()):.2g}"
    if base[ok].mean() == 0:
        return paired
    return f"{100 * (other[ok].mean() / base[ok].mean() - 1):+.1f}% ({paired})"


def _step_seconds(ds: xr.Dataset, problem: str, n_init: int) -> dict[str, float]:
    """Mean ``ask`` seconds per model-based step, by strategy (NaN without timings)."""
    if "ask_seconds" not in ds:
        return {str(s): float("nan") for s in ds["strategy"].values}
    a = ds["ask_seconds"].sel(problem=problem).isel(iteration=slice(n_init, None))
    out = {}
    for s in ds["strategy"].values:
        v = a.sel(strategy=s).values
        out[str(s)] = float(np.nanmean(v)) if np.isfinite(v).any() else float("nan")
    return out


def summary_table(ds: xr.Dataset, baseline: str = "gp-ucb", compared=None) -> str:
    """Markdown: final cumulative and simple regret (mean and standard error) and the change of each
    ``compared`` strategy (default: the decomposed ``d-*`` ones) against ``baseline``
    in both, with the paired difference over trials and its standard error.

    With an initial design (``n_init`` in the settings) a column compares the
    regret accrued after it: the design is shared by every strategy of a trial, so
    its regret is the same for all and dilutes the relative change of the whole run.
    The last column is the wall time of a model-based step (``ask``, its fits
    included), mean over the steps after the design and over trials, and its ratio
    to ``baseline``'s where ``baseline`` was timed.
    """

    label = baseline
    n_init = int(json.loads(ds.attrs.get("settings", "{}")).get("n_init", 0))
    after = f" | change after the {n_init} initial evaluations" if n_init else ""
    steps = {str(p): _step_seconds(ds, p, n_init) for p in ds["problem"].values}
    timed = any(np.isfinite(t.get(baseline, np.nan)) for t in steps.values())
    lines = [
        "| problem | strategy | trials | final cumulative regret | final simple regret "
        f"| cumulative regret change vs {label} (paired difference and its standard error){after} "
        f"| simple regret change vs {label} (paired difference and its standard error) "
        f"| seconds per step{f' (× {label})' if timed else ''} |",
        "| --- | --- | --- | --- | --- | --- |" + (" --- |" if n_init else "") + " --- | --- |",
    ]
    strategies = list(ds["strategy"].values)
    if compared is None:
        compared = [s for s in strategies if s.startswith("d-")]
    for p in ds["problem"].values:
        cum = ds["cumulative_regret"].sel(problem=p)
        final = cum.isel(iteration=-1)
        later = final - cum.isel(iteration=n_init - 1) if n_init else None
        simple = ds["simple_regret"].sel(problem=p).isel(iteration=-1)
        step = steps[str(p)]
        for s in strategies:
            m, se, k = _mean_se(final.sel(strategy=s).values)
            if k == 0:
                continue
            sm, sse, _ = _mean_se(simple.sel(strategy=s).values)
            rel = rel_after = rel_simple = ""
            if baseline in strategies and s != baseline and s in compared:
                rel = _paired_change(
                    final.sel(strategy=baseline).values, final.sel(strategy=s).values
                )
                rel_simple = _paired_change(
                    simple.sel(strategy=baseline).values, simple.sel(strategy=s).values
                )
                if n_init:
                    rel_after = _paired_change(
                        later.sel(strategy=baseline).values, later.sel(strategy=s).values
                    )
            row = f"| {p} | {s} | {k} | {m:.4g} ± {se:.2g} | {sm:.4g} ± {sse:.2g} | {rel} |"
            cost = f"{step[s]:.3g}" if np.isfinite(step[s]) else ""
            if cost and s != baseline and np.isfinite(step.get(baseline, np.nan)):
                cost += f" (× {step[s] / step[baseline]:.2g})"
            lines.append(row + (f" {rel_after} |" if n_init else "") + f" {rel_simple} | {cost} |")
    return "\n".join(lines) + "\n"
