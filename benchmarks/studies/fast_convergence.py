"""Convergence of the fast path's fits over several runs: NUTS refits meeting the
thresholds after repair, and fits by importance sampling from the prior.

Usage: python benchmarks/studies/fast_convergence.py [--problem synthetic|flu] [--seeds 3]
       [--steps 100] [--settings "repairs=4"]

Runs D-GPUCB with ``inference="nuts"`` (the fast path) on the problem instance
and run seed 0..seeds-1, with :class:`pp_decomp.loop.FastSettings` overridden by
``--settings`` (``key=value`` pairs, comma-separated). Prints each run's wall
time and regret, then the NUTS refits' share converged on the first run and
after repair, the importance fits, and every refit still failing.
"""

from __future__ import annotations

import argparse
import ast
import os

for _v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

import time  # noqa: E402
import warnings  # noqa: E402

import numpy as np  # noqa: E402


def _settings(text: str) -> dict:
    pairs = [p.split("=", 1) for p in text.split(",") if p.strip()]
    return {k.strip(): ast.literal_eval(v.strip()) for k, v in pairs}


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--problem", choices=("synthetic", "flu"), default="synthetic")
    p.add_argument("--seeds", type=int, default=3)
    p.add_argument("--steps", type=int, default=100)
    p.add_argument("--settings", default="", help='FastSettings overrides, e.g. "repairs=4"')
    a = p.parse_args(argv)
    from pp_decomp.loop import FastSettings, Optimizer
    from pp_decomp.models import get_problem

    fast = FastSettings(**_settings(a.settings))
    n = ok = first = importance = 0
    failing = []
    for seed in range(a.seeds):
        problem = get_problem(a.problem, seed=seed)
        start = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            opt = Optimizer(problem, "d-gpucb", inference="nuts", seed=seed, fast_settings=fast)
            ds = opt.run(a.steps)
        refit, rhat = ds["refit"].values, ds["rhat_max"].values
        nuts = refit & np.isfinite(rhat)
        conv, rep = ds["converged"].values, ds["repairs"].values
        n, ok = n + int(nuts.sum()), ok + int(conv[nuts].sum())
        first += int((conv & (rep == 0))[nuts].sum())
        importance += int((refit & ~np.isfinite(rhat)).sum())
        for t, j in zip(*np.nonzero(nuts & ~conv), strict=True):
            failing.append(f"seed {seed} step {t} component {j}: r-hat {rhat[t, j]:.3f}")
        print(
            f"seed {seed}: {time.perf_counter() - start:.1f} s, "
            f"regret {float(ds['cumulative_regret'][-1]):.2f}",
            flush=True,
        )
    # shares of the NUTS refits ("-" where a short run made none)
    pct = [f"{100 * k / n:.1f}%" if n else "-" for k in (first, ok)]
    print(
        f"{n} NUTS refits: {pct[0]} converged first, "
        f"{pct[1]} after repair; {importance} fits by importance sampling"
    )
    for line in failing:
        print("  still failing:", line)


if __name__ == "__main__":
    main()
