"""A warped full-Bayes run on the fast path against NUTS at every refit, alternated.

Usage: python benchmarks/speed/warped_fast_path.py [--problem rates] [--seed 0]
       [--iterations 30] [--pairs 2] [--warp sinh-arcsinh]

Each pair runs ``Optimizer(problem, inference="nuts", output_warp=warp,
fast=True)`` and then the same with ``fast=False`` (NUTS every ``refit_every``
steps), each in a process of its own so that neither inherits the other's
compiled models, for ``--iterations`` evaluations. Prints per run its wall and
CPU seconds, peak memory, and per component GP how its fits were made
(``fit_draws``), then each pair's ratio fast / NUTS of wall seconds.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import time

for _v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_v, "1")


def one_run(problem: str, seed: int, iterations: int, warp: str, fast: bool) -> None:
    """One run in this process: prints how each GP's fits were made."""
    import numpy as np

    import pp_decomp as ppd
    from pp_decomp.models import get_problem

    opt = ppd.Optimizer(
        get_problem(problem, seed=seed), inference="nuts", seed=seed, output_warp=warp, fast=fast
    )
    ds = opt.run(iterations)
    asks = ds["ask_seconds"].values
    waited = float(np.nansum(ds["fit_seconds"].values))
    print(f"    asks: median {np.median(asks):.2f} s, in all {asks.sum():.1f} s, of which")
    print(f"    {waited:.1f} s updating the models (first fits, refits waited for)")
    fits = ds["fit_draws"].values.astype(str)
    for j, name in enumerate(ds["model"].values):
        kinds, counts = np.unique(fits[:, j], return_counts=True)
        made = {str(k): int(c) for k, c in zip(kinds, counts, strict=True) if k}
        print(f"    {name}: {made}")


def timed(args, fast: bool) -> float:
    """Run :func:`one_run` in a child process; print and return its wall seconds."""
    command = [sys.executable, __file__, "--child", "fast" if fast else "nuts", *args.forward]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    out = subprocess.run(command, check=True, capture_output=True, text=True).stdout
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    label = "fast path" if fast else "NUTS at every refit"
    peak = after.ru_maxrss / 1e6  # of the largest run so far
    print(f"  {label}: {wall:.1f} s wall, {cpu:.1f} s CPU, peak so far {peak:.2f} GB")
    print(out.rstrip())
    return wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--problem", default="rates")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--iterations", type=int, default=30)
    parser.add_argument("--pairs", type=int, default=2)
    parser.add_argument("--warp", default="sinh-arcsinh")
    parser.add_argument("--child", choices=("fast", "nuts"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        one_run(args.problem, args.seed, args.iterations, args.warp, args.child == "fast")
        return
    args.forward = [
        f"--problem={args.problem}",
        f"--seed={args.seed}",
        f"--iterations={args.iterations}",
        f"--warp={args.warp}",
    ]
    print(f"{args.problem} seed {args.seed}, {args.iterations} evaluations, warp {args.warp}")
    for i in range(args.pairs):
        print(f"pair {i + 1}")
        fast, nuts = timed(args, True), timed(args, False)
        print(f"  ratio fast / NUTS: {fast / nuts:.2f}")


if __name__ == "__main__":
    main()
