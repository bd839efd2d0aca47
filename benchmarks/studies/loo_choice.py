"""Would choosing each component's model by PSIS-LOO make its intervals honest?

For each seed, a MAP D-GPUCB run of ``--evaluations`` on the problem under the
defaults before issue 46; then, on its data, each component is fitted (MAP)
with each candidate model (:func:`pp_decomp.apps.model_choice.choose_model`: Matérn
1/2, 3/2, 5/2, ExpQuad × lognormal or inverse-gamma lengthscale prior), scored
by its exact leave-one-out elpd (:mod:`pp_decomp.components.criticism`) and by the
coverage of the truth by its 95% central intervals at ``--points`` random
inputs of the domain, and the candidates stacked. Prints one line per seed and
component and, at the end, each candidate's mean coverage, its mean LOO rank,
and the LOO winner's and the stacked predictive's mean coverage against the
defaults'::

    python benchmarks/studies/loo_choice.py --problem flu --seeds 3 --evaluations 30
"""

from __future__ import annotations

import argparse
import os
import warnings

import numpy as np

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

# the loop's model before issue 46 (ExpQuad, log-normal lengthscales, no copula)
EARLIER_DEFAULTS = {"kernel": "se", "ls_family": "lognormal", "copula": False}


def score_seed(problem_name: str, seed: int, evaluations: int, points: int, log=print) -> list:
    """Per component: {candidate: (elpd_loo, coverage at 0.95)} on one seed's run,
    plus ``"stacked"``: (NaN, the stacked predictive's coverage)."""
    import pp_decomp as ppd
    from pp_decomp.apps.calibration import sample_coverage
    from pp_decomp.apps.model_choice import choose_model
    from pp_decomp.models import get_problem

    problem = get_problem(problem_name, seed=seed)
    # the loop of the recorded study: the defaults before issue 46
    earlier = dict(EARLIER_DEFAULTS)
    priors = ppd.Priors(ls_family=earlier.pop("ls_family"))
    opt = ppd.Optimizer(problem, "d-gpucb", seed=seed, priors=priors, **earlier)
    opt.run(evaluations)
    rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(11,)))
    Xt = problem.domain.sample(points, seed=rng)
    F = np.asarray(problem.components(Xt), dtype=float)
    out = []
    for j, name in enumerate(problem.component_names):
        choice = choose_model(opt.X, opt.Y[:, j], bounds=problem.domain.bounds, name=name, seed=0)
        res = {}
        for cand, elpd in zip(choice.names, choice.elpd_loo, strict=True):
            draws = choice.model(cand).sample(Xt, 400, seed=rng)
            res[cand] = (float(elpd), float(sample_coverage(draws, F[:, j], (0.95,))[0, 0]))
        stacked = sample_coverage(choice.sample(Xt, 400, seed=rng), F[:, j], (0.95,))[0, 0]
        res["stacked"] = (float("nan"), float(stacked))
        log(
            f"seed {seed} {name}: LOO winner {choice.best} covers {res[choice.best][1]:.2f}, "
            f"stacked {stacked:.2f}, earlier default ExpQuad/lognormal "
            f"{res['ExpQuad/lognormal'][1]:.2f}"
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
    names = [c for c in rows[0] if c != "stacked"]
    cover = {c: np.mean([r[c][1] for r in rows]) for c in names}
    ranks = {c: [] for c in names}
    for r in rows:
        order = sorted(names, key=lambda c: -r[c][0])
        for i, c in enumerate(order):
            ranks[c].append(i + 1)
    for c in names:
        print(f"  {c:24s} coverage {cover[c]:.3f}  mean LOO rank {np.mean(ranks[c]):.1f}")
    win = [r[max(names, key=lambda c: r[c][0])][1] for r in rows]
    print(
        f"{args.problem}: LOO winner covers {np.mean(win):.3f}, stacking "
        f"{cover_of(rows, 'stacked'):.3f}, the earlier default (ExpQuad/lognormal) "
        f"{cover_of(rows, 'ExpQuad/lognormal'):.3f}, today's (Matern32/inverse-gamma) "
        f"{cover_of(rows, 'Matern32/inverse-gamma'):.3f} ({len(rows)} components × seeds, "
        "nominal 0.95)"
    )


def cover_of(rows: list, candidate: str) -> float:
    """Mean coverage of ``candidate`` over the rows."""
    return float(np.mean([r[candidate][1] for r in rows]))


if __name__ == "__main__":
    main()
