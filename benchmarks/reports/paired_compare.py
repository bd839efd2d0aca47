"""Paired comparison of two strategies run in two benchmark folders on the same trials.

Usage: python benchmarks/reports/paired_compare.py DIR_A STRATEGY_A DIR_B STRATEGY_B [--problem P]
       [--problem-b Q]

For a variant run in its own folder (e.g. with other ``--additive`` settings)
against a baseline of an earlier benchmark: the two ``bench.nc`` must share the
root seed, initial design size and number of evaluations, so trial ``k`` is the
same problem instance and initial design in both. Prints the final simple and
cumulative regret of each over the trials both hold, and ``B − A`` paired over
them (mean ± standard error). ``--problem-b`` names B's problem when it is
another form of A's on the same instances (e.g. ``perceived-temperature-july-rh-run``
against ``perceived-temperature-july-run``: the seed draws the same stations).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("dir_a")
    p.add_argument("strategy_a")
    p.add_argument("dir_b")
    p.add_argument("strategy_b")
    p.add_argument("--problem", default=None)
    p.add_argument("--problem-b", default=None)
    a = p.parse_args(argv)
    import xarray as xr

    ds = [xr.load_dataset(Path(d) / "bench.nc") for d in (a.dir_a, a.dir_b)]
    settings = [json.loads(d.attrs["settings"]) for d in ds]
    for key in ("root_seed", "n_init", "iterations"):
        if settings[0].get(key) != settings[1].get(key):
            raise SystemExit(f"the benchmarks differ in {key}: {[s.get(key) for s in settings]}")
    problem = a.problem or str(ds[0]["problem"].values[0])
    problem_b = a.problem_b or problem
    print(f"{a.strategy_b} on {problem_b} ({a.dir_b}) − {a.strategy_a} on {problem} ({a.dir_a})")
    for var in ("simple_regret", "cumulative_regret"):
        vals = [
            d[var].sel(problem=q, strategy=s).isel(iteration=-1).to_series().dropna()
            for d, s, q in ((ds[0], a.strategy_a, problem), (ds[1], a.strategy_b, problem_b))
        ]
        trials = sorted(set(vals[0].index) & set(vals[1].index))
        A, B = (np.array([v[t] for t in trials]) for v in vals)
        diff = B - A
        se = diff.std(ddof=1) / np.sqrt(len(diff)) if len(diff) > 1 else float("nan")
        print(
            f"  final {var} over {len(trials)} trials: A {A.mean():.4g} ± "
            f"{A.std(ddof=1) / np.sqrt(len(A)):.2g}, B {B.mean():.4g} ± "
            f"{B.std(ddof=1) / np.sqrt(len(B)):.2g}; B − A {diff.mean():+.4g} ± {se:.2g} "
            + (f"({diff.mean() / se:+.1f} SE)" if se > 0 else "(the same in every trial)")
        )


if __name__ == "__main__":
    main()
