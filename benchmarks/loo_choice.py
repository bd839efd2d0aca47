"""Would choosing each component's model by PSIS-LOO make its intervals honest?

For each seed, a default MAP D-GPUCB run of ``--evaluations`` on the problem;
then, on its data, each component is fitted (MAP) with each candidate model
(Matérn 1/2, 3/2, 5/2, ExpQuad × lognormal or inverse-gamma lengthscale prior),
scored by its exact leave-one-out elpd (:mod:`pp_decomp.criticism`) and by the
coverage of the truth by its 95% central intervals at ``--points`` random
inputs of the domain. Prints one line per seed and component (the LOO winner,
its coverage and the default's) and, at the end, each candidate's mean
coverage, its mean LOO rank, and the LOO winner's mean coverage against the
default's::

    python benchmarks/loo_choice.py --problem flu --seeds 3 --evaluations 30
"""

from __future__ import annotations

import argparse
import os
import warnings

import numpy as np

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")


def candidates() -> dict:
    """Name → kernel expression of every candidate."""
    from pp_decomp import Prior
    from pp_decomp import kernels as K

    out = {}
    for family in ("Matern12", "Matern32", "Matern52", "ExpQuad"):
        out[f"{family}/lognormal"] = getattr(K, family)()
        ig = Prior("InverseGamma", alpha=3, beta=0.6)
        out[f"{family}/inverse-gamma"] = getattr(K, family)(ls=ig)
    return out


def score_seed(problem_name: str, seed: int, evaluations: int, points: int, log=print) -> list:
    """Per component: {candidate: (elpd_loo, coverage at 0.95)} on one seed's run."""
    import pp_decomp as ppd
    from pp_decomp.calibration import sample_coverage
    from pp_decomp.criticism import criticise
    from pp_decomp.models import get_problem

    problem = get_problem(problem_name, seed=seed)
    opt = ppd.Optimizer(problem, "d-gpucb", seed=seed)
    opt.run(evaluations)
    rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(11,)))
    Xt = problem.domain.sample(points, seed=rng)
    F = np.asarray(problem.components(Xt), dtype=float)
    out = []
    for j, name in enumerate(problem.component_names):
        res = {}
        for cand, kernel in candidates().items():
            gp = ppd.ComponentGP(kernel, bounds=problem.domain.bounds, name=name)
            gp.fit(opt.X, opt.Y[:, j], "map", seed=0)
            cover = sample_coverage(gp.sample(Xt, 400, seed=rng), F[:, j], (0.95,))[0, 0]
            res[cand] = (criticise(gp).elpd_loo, float(cover))
        best = max(res, key=lambda c: res[c][0])
        log(
            f"seed {seed} {name}: LOO winner {best} covers {res[best][1]:.2f}, default "
            f"ExpQuad/lognormal {res['ExpQuad/lognormal'][1]:.2f}"
        )
        out.append(res)
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--problem", default="flu")
    p.add_argument("--seeds", type=int, default=3)
    p.add_argument("--evaluations", type=int, default=30)
    p.add_argument("--points", type=int, default=256)
    args = p.parse_args()
    warnings.simplefilter("ignore")
    rows = [
        r
        for s in range(args.seeds)
        for r in score_seed(args.problem, s, args.evaluations, args.points)
    ]
    names = list(rows[0])
    cover = {c: np.mean([r[c][1] for r in rows]) for c in names}
    ranks = {c: [] for c in names}
    for r in rows:
        order = sorted(names, key=lambda c: -r[c][0])
        for i, c in enumerate(order):
            ranks[c].append(i + 1)
    for c in names:
        print(f"  {c:24s} coverage {cover[c]:.3f}  mean LOO rank {np.mean(ranks[c]):.1f}")
    win = [r[max(r, key=lambda c: r[c][0])][1] for r in rows]
    default = [r["ExpQuad/lognormal"][1] for r in rows]
    print(
        f"{args.problem}: LOO winner covers {np.mean(win):.3f}, the default "
        f"{np.mean(default):.3f} ({len(rows)} components × seeds, nominal 0.95)"
    )


if __name__ == "__main__":
    main()
