"""Average regret ``R_T / T`` at chosen steps, paired against a baseline, and runs stuck for good.

Usage: python benchmarks/reports/average_regret.py BENCH_DIR [--at 25,50,100] [--tail 50]
       [--baseline STRATEGY]

Contal et al. (2014) plot the mean average regret ``R_T / T`` over the steps
(their Figure 3). For each problem and strategy of a finished ``pp-decomp
bench`` folder this prints, as a markdown table, ``R_T / T`` at each step of
``--at`` (mean ± standard error over the trials; ``T`` counts every evaluation,
the initial design included), the paired difference ``strategy − baseline`` at
the last of them with its standard error and ``z``, and how many runs are
stuck: the same positive regret at every one of the last ``--tail`` steps (on
a function of continuous values, the same input), so that ``R_T`` grows
linearly from there. Only ``bench.nc`` is read (not the per-run files). The baseline is the
bench's own (its settings) unless ``--baseline`` names another strategy.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np


def mean_se(values: np.ndarray) -> tuple[float, float]:
    """Mean and standard error over the last axis' ``n`` values (``sd / sqrt(n)``)."""
    n = values.shape[-1]
    sd = values.std(-1, ddof=1) if n > 1 else np.nan
    return float(values.mean(-1)), float(sd / np.sqrt(n))


def stuck_runs(regret: np.ndarray, tail: int) -> int:
    """How many runs of ``regret (trials, T)`` keep one positive regret over the last ``tail``."""
    last = regret[:, -tail:]
    return int(np.sum(np.all(last == last[:, :1], axis=1) & (last[:, 0] > 0)))


def table(folder: Path, at: list[int], tail: int, baseline: str | None) -> str:
    """The report's markdown table for the bench in ``folder``."""
    import xarray as xr

    ds = xr.load_dataset(folder / "bench.nc")
    baseline = baseline or json.loads(ds.attrs["settings"]).get("baseline", "gp-ucb")
    steps = ds.sizes["iteration"]
    if max(at) > steps or min(at) < 1:
        raise SystemExit(f"--at must lie in 1..{steps} (the bench's evaluations); got {at}")
    head = " | ".join(f"R_T/T at T={t}" for t in at)
    lines = [
        f"| problem | strategy | trials | {head} | vs {baseline} at T={at[-1]} (paired) "
        f"| stuck over the last {tail} steps |",
        "| --- " * (5 + len(at)) + "|",
    ]
    for problem in map(str, ds["problem"].values):
        avg = ds["cumulative_regret"].sel(problem=problem) / ds["iteration"]
        for strategy in map(str, ds["strategy"].values):
            runs = avg.sel(strategy=strategy).dropna("trial", how="all")
            cells = ["{:.4g} ± {:.2g}".format(*mean_se(runs.sel(iteration=t).values)) for t in at]
            paired = ""
            if strategy != baseline and baseline in ds["strategy"].values:
                d = (runs - avg.sel(strategy=baseline)).sel(iteration=at[-1]).dropna("trial")
                m, se = mean_se(d.values)
                paired = f"{m:+.4g} ± {se:.2g} (z = {m / se:+.1f})"
            regret = ds["regret"].sel(problem=problem, strategy=strategy)
            regret = regret.dropna("trial", how="all").values
            stuck = f"{stuck_runs(regret, tail)} of {len(regret)}"
            lines.append(
                f"| {problem} | {strategy} | {runs.sizes['trial']} | {' | '.join(cells)} "
                f"| {paired} | {stuck} |"
            )
    return "\n".join(lines)


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("folder", type=Path)
    p.add_argument("--at", default="25,50,100", help="steps T, comma-separated")
    p.add_argument("--tail", type=int, default=50)
    p.add_argument("--baseline", default=None)
    a = p.parse_args(argv)
    try:
        at = sorted(int(t) for t in a.at.split(","))
    except ValueError:
        raise SystemExit(f"--at must be whole numbers separated by commas; got {a.at!r}") from None
    if a.tail < 2:
        raise SystemExit(f"--tail must be at least 2; got {a.tail}")
    print(table(a.folder, at, a.tail, a.baseline))


if __name__ == "__main__":
    main()
