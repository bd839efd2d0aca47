"""Wall time of a full-Bayes run (the fast path) under two values of one
:class:`~pp_decomp.loop.FastSettings` field, the runs alternating in one process.

Usage: python benchmarks/speed/fast_settings_time.py --field ess_collapse --values 0,0.15
       [--cases synthetic,flu] [--reps 2] [--steps 100] [--strategy d-gpucb] [--out F.json]

Each case runs on problem instance 0 with run seed 0; a 12-step run on another
seed first compiles what the timed runs use. Prints, per case and value, every
run's seconds, cumulative regret and the number of (step, component) refits,
and the median time's ratio to the first value's.
"""

from __future__ import annotations

import argparse
import json
import os

for _v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

import time  # noqa: E402
import warnings  # noqa: E402

import numpy as np  # noqa: E402


def timed_run(problem, strategy: str, steps: int, fast_settings) -> dict:
    """One run's wall time, final cumulative regret and refit count."""
    from pp_decomp import Optimizer

    start = time.perf_counter()
    opt = Optimizer(problem, strategy, inference="nuts", seed=0, fast_settings=fast_settings)
    ds = opt.run(steps)
    return {
        "seconds": time.perf_counter() - start,
        "cumulative_regret": float(ds["cumulative_regret"].values[-1]),
        "refits": int(ds["refit"].values.sum()),
    }


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--field", required=True, help="a FastSettings field")
    p.add_argument("--values", required=True, help="two comma-separated numbers")
    p.add_argument("--cases", default="synthetic,flu")
    p.add_argument("--reps", type=int, default=2)
    p.add_argument("--steps", type=int, default=100)
    p.add_argument("--strategy", default="d-gpucb")
    p.add_argument("--out", default=None)
    a = p.parse_args()

    from pp_decomp import Optimizer
    from pp_decomp.loop import FastSettings
    from pp_decomp.models import get_problem

    values = [float(v) for v in a.values.split(",")]
    settings = [FastSettings(**{a.field: v}) for v in values]  # bad input fails here
    warnings.simplefilter("ignore")
    report = {}
    for case in a.cases.split(","):
        problem = get_problem(case, seed=0)
        Optimizer(problem, a.strategy, inference="nuts", seed=1).run(12)
        runs = {v: [] for v in values}
        for rep in range(a.reps):
            for v, fs in zip(values, settings, strict=True):
                r = timed_run(problem, a.strategy, a.steps, fs)
                runs[v].append(r)
                print(case, f"{a.field}={v}", rep, {k: round(x, 3) for k, x in r.items()})
        base = np.median([r["seconds"] for r in runs[values[0]]])
        for v in values:
            med = float(np.median([r["seconds"] for r in runs[v]]))
            print(f"{case} {a.field}={v}: median {med:.1f} s, {med / base:.2f}x {values[0]}'s")
        report[case] = {str(v): runs[v] for v in values}
    if a.out:
        with open(a.out, "w") as f:
            json.dump(report, f, indent=1)


if __name__ == "__main__":
    main()
