"""Per-step cost of decomposed strategies against ``gp-ucb`` (MAP), in one process.

Usage: python benchmarks/speed/mc_step_cost.py [--problem perceived-temperature]
       [--iterations 30] [--reps 3]
       [--strategies gp-ucb,d-gpucb-mc,d-gpucb-box-min,d-gpucb-mc-min] [--warm-start]

Runs of the strategies alternate (forward, then backward), ``--reps`` times
after a warm-up run, each on the same instance and seed. Prints the median
over acquisition steps of the ask time and its parts (fit, the rest), averaged
over the repetitions, and the ratios to gp-ucb (the first strategy).
"""

from __future__ import annotations

import argparse
import os

for _v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

import numpy as np  # noqa: E402


def one_run(
    problem, strategy: str, iterations: int, warm_start: bool = False
) -> tuple[np.ndarray, np.ndarray]:
    from pp_decomp import Optimizer

    ds = Optimizer(problem, strategy, inference="map", seed=0, warm_start=warm_start).run(
        iterations
    )
    step = ds["phase"].values == "acquisition"
    ask, fit = ds["ask_seconds"].values[step], ds["fit_seconds"].values[step]
    return np.array([np.median(ask), np.median(fit), np.median(ask - fit)]), ds["x"].values


def main(argv=None) -> None:
    from pp_decomp.models import get_problem

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--problem", default="perceived-temperature")
    p.add_argument("--iterations", type=int, default=30)
    p.add_argument("--reps", type=int, default=3)
    p.add_argument("--strategies", default="gp-ucb,d-gpucb-mc,d-gpucb-box-min,d-gpucb-mc-min")
    p.add_argument("--warm-start", action="store_true", help="MAP refits from the last mode")
    args = p.parse_args(argv)
    problem = get_problem(args.problem, seed=0)
    one_run(problem, "gp-ucb", 8)  # warm-up: first fits, imports
    names = args.strategies.split(",")
    times = {k: [] for k in names}
    for r in range(args.reps):
        for name in names[:: 1 if r % 2 == 0 else -1]:
            times[name].append(one_run(problem, name, args.iterations, args.warm_start)[0])
    base = np.mean(times[names[0]], axis=0)[0]
    warm = ", warm-started" if args.warm_start else ""
    print(f"{args.problem}, {args.iterations} evaluations, {args.reps} repetitions, MAP{warm}")
    for name, rows in times.items():
        ask, fit, rest = 1e3 * np.mean(rows, axis=0)
        print(
            f"{name:<22} ask {ask:6.1f} ms (fit {fit:5.1f}, acquisition {rest:5.1f})  "
            f"x {names[0]} {ask / 1e3 / base:5.2f}"
        )


if __name__ == "__main__":
    main()
