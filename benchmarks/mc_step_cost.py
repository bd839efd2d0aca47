"""Per-step cost of ``d-gpucb-mc`` against ``gp-ucb`` (MAP), and the Monte Carlo
bound in blocks against one block, in one process.

Usage: python benchmarks/mc_step_cost.py [--problem perceived-temperature]
       [--iterations 30] [--reps 3]

Runs alternate (gp-ucb; d-gpucb-mc with ``MC_BLOCK_BYTES`` at its default; the
same with one block of every input, the layout before blocks), ``--reps``
times after a warm-up run, each on the same instance and seed. Prints the
median over acquisition steps of the ask time and its parts (fit, the rest),
averaged over the repetitions, the ratios to gp-ucb, and whether the two
layouts chose the same inputs.
"""

from __future__ import annotations

import argparse
import os

for _v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

import numpy as np  # noqa: E402


def one_run(problem, strategy: str, iterations: int) -> tuple[np.ndarray, np.ndarray]:
    from pp_decomp import Optimizer

    ds = Optimizer(problem, strategy, inference="map", seed=0).run(iterations)
    step = ds["phase"].values == "acquisition"
    ask, fit = ds["ask_seconds"].values[step], ds["fit_seconds"].values[step]
    return np.array([np.median(ask), np.median(fit), np.median(ask - fit)]), ds["x"].values


def main(argv=None) -> None:
    from pp_decomp.acquisition import ucb
    from pp_decomp.models import get_problem

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--problem", default="perceived-temperature")
    p.add_argument("--iterations", type=int, default=30)
    p.add_argument("--reps", type=int, default=3)
    args = p.parse_args(argv)
    problem = get_problem(args.problem, seed=0)
    one_run(problem, "gp-ucb", 8)  # warm-up: first fits, imports
    default = ucb.MC_BLOCK_BYTES
    variants = {
        "gp-ucb": ("gp-ucb", default),
        "d-gpucb-mc": ("d-gpucb-mc", default),
        "d-gpucb-mc, one block": ("d-gpucb-mc", 1 << 62),
    }
    times = {k: [] for k in variants}
    chosen = {}
    for r in range(args.reps):
        for name in list(variants)[:: 1 if r % 2 == 0 else -1]:
            strategy, block = variants[name]
            ucb.MC_BLOCK_BYTES = block
            t, x = one_run(problem, strategy, args.iterations)
            times[name].append(t)
            chosen.setdefault(name, x)
    ucb.MC_BLOCK_BYTES = default
    base = np.mean(times["gp-ucb"], axis=0)[0]
    print(f"{args.problem}, {args.iterations} evaluations, {args.reps} repetitions, MAP")
    for name, rows in times.items():
        ask, fit, rest = 1e3 * np.mean(rows, axis=0)
        print(
            f"{name:<22} ask {ask:6.1f} ms (fit {fit:5.1f}, acquisition {rest:5.1f})  "
            f"x gp-ucb {ask / 1e3 / base:5.2f}"
        )
    same = np.array_equal(chosen["d-gpucb-mc"], chosen["d-gpucb-mc, one block"])
    print(f"blocks and one block chose the same inputs: {same}")


if __name__ == "__main__":
    main()
