"""Monte Carlo EI on all candidates in one block against ~1 MB blocks of inputs.

Usage: python benchmarks/speed/mc_blocks_ab.py [--problem perceived-temperature-july]
       [--steps 40] [--reps 3]

Runs ``d-ei`` (MAP) for ``--steps`` evaluations, builds its acquisition on the
fitted components (512 samples), and times it over every candidate with
``MC_BLOCK_BYTES`` set to one block and to its default, alternately in one
process. Prints the mean times and whether both gave the same values.
"""

from __future__ import annotations

import argparse
import os
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402


def main(argv=None) -> None:
    from pp_decomp import Optimizer
    from pp_decomp.acquisition import ucb
    from pp_decomp.acquisition.improvement import ExpectedImprovement
    from pp_decomp.acquisition.surrogate import DecomposedSurrogate
    from pp_decomp.models import get_problem

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--problem", default="perceived-temperature-july")
    p.add_argument("--steps", type=int, default=40)
    p.add_argument("--reps", type=int, default=3)
    args = p.parse_args(argv)
    problem = get_problem(args.problem, seed=0)
    opt = Optimizer(problem, "d-ei", seed=0)
    opt.run(args.steps)
    model = DecomposedSurrogate([opt.models[n] for n in problem.component_names], problem)
    X = problem.domain.X
    acq = ExpectedImprovement(model, opt.signed_objective().max(), n_samples=512, seed=1)
    sizes = {"one block": 1 << 40, "blocks": ucb.MC_BLOCK_BYTES}
    times, values = {k: [] for k in sizes}, {}
    for _ in range(args.reps):
        for key, size in sizes.items():
            ucb.MC_BLOCK_BYTES = size
            acq(X)  # warm-up
            start = time.perf_counter()
            for _ in range(5):
                values[key] = acq(X)
            times[key].append((time.perf_counter() - start) / 5 * 1e3)
    one, blocks = (np.mean(times[k]) for k in sizes)
    same = np.array_equal(values["one block"], values["blocks"])
    print(
        f"{args.problem}, {len(X)} candidates, d-ei after {args.steps} evaluations: "
        f"one block {one:.1f} ms, blocks {blocks:.1f} ms (x {blocks / one:.2f}), "
        f"same values: {same}"
    )


if __name__ == "__main__":
    main()
