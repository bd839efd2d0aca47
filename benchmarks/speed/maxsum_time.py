"""Wall time of the exact acquisition maximiser on a chain graph (Rolland Alg. 2).

Usage: python benchmarks/speed/maxsum_time.py [--D 20] [--levels 50] [--repeats 5]

Times :func:`pp_decomp.optim.maxsum.maximize_factors` on ``D`` variables with
``levels`` values each and one random pairwise factor per edge of a chain, and,
end to end, :func:`pp_decomp.additive.g_add_gp_ucb_maximize` on an additive GP
with the chain's edges as groups (building the factor tables from the group
posteriors included). Prints the median over ``repeats``.
"""

from __future__ import annotations

import argparse
import os

for _v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

import time  # noqa: E402

import numpy as np  # noqa: E402


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--D", type=int, default=20)
    p.add_argument("--levels", type=int, default=50)
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--n", type=int, default=100, help="observations of the additive GP")
    a = p.parse_args(argv)
    from pp_decomp.additive import AdditiveDraws, AdditiveGP, g_add_gp_ucb_maximize
    from pp_decomp.optim.maxsum import maximize_factors
    from pp_decomp.space import Box

    rng = np.random.default_rng(0)
    edges = [(i, i + 1) for i in range(a.D - 1)]
    times = []
    for _ in range(a.repeats):
        factors = {e: rng.standard_normal((a.levels, a.levels)) for e in edges}
        start = time.perf_counter()
        maximize_factors(factors, [a.levels] * a.D)
        times.append(time.perf_counter() - start)
    print(
        f"max-sum, chain of {a.D} variables x {a.levels} levels: "
        f"median {np.median(times) * 1e3:.1f} ms over {a.repeats}"
    )
    X = rng.uniform(size=(a.n, a.D))
    y = np.sin(3 * X).sum(1)
    gp = AdditiveGP(edges, a.D).condition(
        X, y, AdditiveDraws([[0.3] * a.D], [[1.0 / np.sqrt(len(edges))] * len(edges)], [0.1])
    )
    box = Box(np.zeros(a.D), np.ones(a.D))
    times = []
    for _ in range(a.repeats):
        start = time.perf_counter()
        g_add_gp_ucb_maximize(gp, 2.0, box, levels=a.levels)
        times.append(time.perf_counter() - start)
    print(
        f"G-Add-GP-UCB acquisition maximisation (tables from {len(edges)} group posteriors, "
        f"n = {a.n}): median {np.median(times):.2f} s over {a.repeats}"
    )


if __name__ == "__main__":
    main()
