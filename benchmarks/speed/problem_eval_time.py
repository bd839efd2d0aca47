"""Size and evaluation time of every registered problem.

Usage: python benchmarks/speed/problem_eval_time.py [--problems NAME,NAME]

Prints, per problem (every registered one, or those ``--problems`` names): input
dimension, components J, domain, the time to build the problem (data loading,
optimum lookup/search) and the median wall time of one evaluation of the system
at a random feasible input (5 repeats).
"""

from __future__ import annotations

import argparse
import os

for _v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

import time  # noqa: E402

import numpy as np  # noqa: E402


def main(argv=None):
    from pp_decomp.models import PROBLEMS, get_problem

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--problems", default=None, help="comma-separated names (default: all)")
    a = ap.parse_args(argv)
    names = a.problems.split(",") if a.problems else list(PROBLEMS)
    print(f"{'problem':<27}{'d':>4}{'J':>5}  {'domain':<34}{'build s':>9}{'eval ms':>10}")
    for name in names:
        start = time.perf_counter()
        p = get_problem(name, seed=0)
        build = time.perf_counter() - start
        X = p.domain.sample(5, seed=1)
        times = []
        for x in X:
            t0 = time.perf_counter()
            p.evaluate(x[None], seed=0)
            times.append(time.perf_counter() - t0)
        print(
            f"{name:<27}{p.dim:>4}{p.n_components:>5}  {p.domain!r:<34}{build:>9.2f}"
            f"{1e3 * np.median(times):>10.2f}"
        )


if __name__ == "__main__":
    main()
