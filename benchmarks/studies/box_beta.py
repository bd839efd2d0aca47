"""Exploration schedules on a box: where the chosen inputs land and what they earn.

Usage: python benchmarks/studies/box_beta.py [--problem environmental]
       [--strategies gp-ucb,d-gpucb-mc] [--schedules continuous,kandasamy] [--seeds 5]
       [--iterations 50] [--init 5] [--workers 2] [--out FILE.json]

Runs each strategy with each schedule on the same seeds (MAP hyperparameters,
the problem instance seeded like the run) and prints, per strategy and schedule:

* the share of chosen coordinates after the initial design that lie on a face
  of the box (within 1e-3 of the extent of a bound), a symptom of a bound so
  wide that the maximiser runs to the faces;
* the mean ``β_t`` over the run;
* the final simple and cumulative regret (mean ± standard error over seeds) and
  each schedule's paired difference with the first one.

Schedules: ``continuous`` is :class:`~pp_decomp.acquisition.BetaContinuous`
(Srinivas Thm 2 scaled by 1/5, the default before 2026-11), ``kandasamy`` is
``0.2 D log 2t`` (the default on a box since), ``constant:B`` a fixed ``β = B``.
"""

from __future__ import annotations

import argparse
import json
import os

for _v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

from concurrent.futures import ProcessPoolExecutor  # noqa: E402

import numpy as np  # noqa: E402

FACE = 1e-3  # relative distance to a bound that counts as on the face


def schedule(name: str, dim: int):
    from pp_decomp.acquisition import BetaConstant, BetaContinuous, BetaKandasamy

    if name == "continuous":
        return BetaContinuous(dim)
    if name == "kandasamy":
        return BetaKandasamy(dim)
    if name.startswith("constant:"):
        return BetaConstant(float(name.split(":", 1)[1]))
    raise ValueError(f"--schedules: unknown schedule {name!r}")


def one_run(args: tuple[str, str, str, int, int, int]) -> dict:
    problem_name, strategy, sched, seed, iterations, n_init = args
    import warnings

    from pp_decomp import Optimizer
    from pp_decomp.models import get_problem

    warnings.simplefilter("ignore")
    problem = get_problem(problem_name, seed=seed)
    beta = schedule(sched, problem.dim)
    ds = Optimizer(problem, strategy, beta=beta, n_init=n_init, seed=seed).run(iterations)
    lo, hi = problem.domain.lower, problem.domain.upper
    X = ds["x"].values[n_init:]
    rel = np.minimum(X - lo, hi - X) / (hi - lo)
    return {
        "strategy": strategy,
        "schedule": sched,
        "seed": seed,
        "on_face": float((rel <= FACE).mean()),
        "beta_mean": float(np.nanmean(ds["beta"].values[n_init:])),
        "simple_regret": float(ds["simple_regret"][-1]),
        "cumulative_regret": float(ds["cumulative_regret"][-1]),
    }


def mean_se(a) -> str:
    a = np.asarray(a, dtype=float)
    se = a.std(ddof=1) / np.sqrt(len(a)) if len(a) > 1 else np.nan
    return f"{a.mean():.4g} ± {se:.2g}"


def report(runs: list[dict], schedules: list[str]) -> None:
    for strategy in dict.fromkeys(r["strategy"] for r in runs):
        by = {
            s: {r["seed"]: r for r in runs if r["strategy"] == strategy and r["schedule"] == s}
            for s in schedules
        }
        base = by[schedules[0]]
        for s in schedules:
            rs = list(by[s].values())
            line = (
                f"{strategy:12s} {s:14s} on a face {mean_se([r['on_face'] for r in rs])}, "
                f"mean beta {mean_se([r['beta_mean'] for r in rs])}, "
                f"simple regret {mean_se([r['simple_regret'] for r in rs])}, "
                f"cumulative {mean_se([r['cumulative_regret'] for r in rs])}"
            )
            if s != schedules[0]:
                seeds = sorted(set(by[s]) & set(base))
                for key in ("simple_regret", "cumulative_regret"):
                    d = [by[s][k][key] - base[k][key] for k in seeds]
                    line += f"; paired {key.split('_')[0]} vs {schedules[0]} {mean_se(d)}"
            print(line, flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--problem", default="environmental")
    ap.add_argument("--strategies", default="gp-ucb,d-gpucb-mc")
    ap.add_argument("--schedules", default="continuous,kandasamy")
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--iterations", type=int, default=50)
    ap.add_argument("--init", type=int, default=5)
    ap.add_argument("--workers", type=int, default=2, help="runs in parallel processes (1: here)")
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    strategies = args.strategies.split(",")
    schedules = args.schedules.split(",")
    for s in schedules:
        schedule(s, 1)  # a bad name fails before any run
    tasks = [
        (args.problem, st, sc, seed, args.iterations, args.init)
        for st in strategies
        for sc in schedules
        for seed in range(args.seeds)
    ]
    if args.workers > 1:
        with ProcessPoolExecutor(args.workers) as pool:
            runs = list(pool.map(one_run, tasks))
    else:  # in this process
        runs = [one_run(t) for t in tasks]
    report(runs, schedules)
    if args.out:
        with open(args.out, "w") as fh:
            json.dump({"args": vars(args), "runs": runs}, fh, indent=1)


if __name__ == "__main__":
    main()
