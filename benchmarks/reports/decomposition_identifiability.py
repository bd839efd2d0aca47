"""Can the marginal likelihood tell the true decomposition from learnt ones?

Usage: python benchmarks/reports/decomposition_identifiability.py BENCH_DIR
       [--problem kandasamy-24-6-4] [--strategy add-gp-ucb] [--sizes 35,60,110,160,200]

For each finished run under ``BENCH_DIR/runs/PROBLEM/STRATEGY`` and each prefix of
``n`` evaluations of it, fits the shared hyperparameters (one lengthscale, one
amplitude, the noise; MAP) on the problem's true groups and scores, with them,
the GP log marginal likelihood of

* the true decomposition,
* the best of ``D`` random partitions into groups of the true size (what
  ``add-gp-ucb`` keeps at a relearning step), and
* a hill-climb from that partition by swapping two dimensions between groups
  while the likelihood rises (:func:`pp_decomp.additive.structure.swap_climb`,
  unbounded here; a much stronger search than the paper's).

Each line also gives the share of the true groups' pairs of dimensions that a
partition groups together (Correct Connections). If the hill-climb beats the
truth's likelihood with few correct pairs, the data of a run do not identify the
structure, and no search over decompositions can recover it from them.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

for _v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

import numpy as np  # noqa: E402


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("bench_dir")
    p.add_argument("--problem", default="kandasamy-24-6-4")
    p.add_argument("--strategy", default="add-gp-ucb")
    p.add_argument("--sizes", default="35,60,110,160,200")
    a = p.parse_args(argv)
    import xarray as xr

    from pp_decomp.additive import AdditiveGP, log_marginal_likelihood
    from pp_decomp.additive.structure import (
        correct_connections,
        groups_edges,
        random_decomposition,
        swap_climb,
    )
    from pp_decomp.components.gp.scaling import to_model_scale
    from pp_decomp.models import get_problem

    sizes = [int(v) for v in a.sizes.split(",")]
    runs = sorted((Path(a.bench_dir) / "runs" / a.problem / a.strategy).glob("trial*.nc"))
    rows = []
    for f in [r for r in runs if ".partial" not in r.name]:
        ds = xr.load_dataset(f)
        problem = get_problem(a.problem, seed=int(ds.attrs["seed"]))
        true = [list(g) for g in problem.metadata["groups"]]
        true_edges, D, d = groups_edges(true), problem.dim, len(true[0])
        rng = np.random.default_rng(int(ds.attrs["seed"]))
        X, y = ds["x"].values, ds["objective"].values
        for n in [s for s in sizes if s <= len(y)]:
            gp = AdditiveGP(true, D, bounds=problem.domain.bounds, shared=True)
            dr = gp.fit(X[:n], y[:n], "map", seed=0).draws
            Xs, ys, _, _ = to_model_scale(X[:n], y[:n], problem.domain.bounds)

            def score(groups, dr=dr, Xs=Xs, ys=ys):
                eta = np.full(len(groups), dr.eta[0, 0])
                return log_marginal_likelihood(Xs, ys, groups, dr.ls[0], dr.sigma[0], eta)

            cands = [[list(g) for g in random_decomposition(D, d, rng)] for _ in range(D)]
            scores = [score(c) for c in cands]
            best = cands[int(np.argmax(scores))]
            climbed, climbed_ll = swap_climb(score, best, max(scores))
            cc = [correct_connections(groups_edges(g), true_edges) for g in (best, climbed)]
            rows.append((n, score(true), max(scores), climbed_ll, *cc))
            print(
                f"{f.name} n={n:3d}: log ML true {rows[-1][1]:8.1f}, best random "
                f"{rows[-1][2]:8.1f} (CC {cc[0]:.2f}), "
                f"hill-climb {climbed_ll:8.1f} (CC {cc[1]:.2f})",
                flush=True,
            )
    print("\nmean over runs: n, true − best random, hill-climb − true, CC random, CC hill-climb")
    for n in sizes:
        r = np.array([row[1:] for row in rows if row[0] == n])
        if len(r):
            print(
                f"n={n:3d} ({len(r)} runs): {np.mean(r[:, 0] - r[:, 1]):+7.1f}  "
                f"{np.mean(r[:, 2] - r[:, 0]):+7.1f}  {r[:, 3].mean():.2f}  {r[:, 4].mean():.2f}"
            )


if __name__ == "__main__":
    main()
