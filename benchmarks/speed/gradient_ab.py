"""Analytic against finite-difference gradients in the box maximiser: the same
acquisition, maximised both ways from the same starts, at every step of a run.

Usage: python benchmarks/speed/gradient_ab.py [--problem tuberculosis-110]
       [--strategy d-gpucb] [--evals 16] [--after 10] [--inference map] [--seed 0]
       [--out FILE.json]

A ``--strategy`` run on ``--problem`` (its own choices, 10 space-filling
evaluations first); at each step from ``--after`` evaluations on, the step's
acquisition (its models, ``β_t`` and draws, screened as the loop screens it) is maximised by
:func:`~pp_decomp.optim.maximizers.maximize` with analytic gradients and again
with forward differences, same seed. Prints per step the two maximisation times
and the acquisition's value at each result, then the median time ratio and how
often each found the higher value (a change of choice is a better optimum of the
same acquisition when the analytic value is at least the other's, to ``TOL``).
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

TOL = 1e-6  # relative: two maximisers' values closer than this are the same optimum


def both_ways(acq, domain, seed: int) -> dict:
    from pp_decomp.optim import maximizers

    out = {}
    real, min_dim = maximizers.has_gradient, maximizers.GRADIENT_MIN_DIM
    for way in ("analytic", "differences"):
        if way == "differences":
            maximizers.has_gradient = lambda acq, X: False
        else:  # whatever the dimension
            maximizers.GRADIENT_MIN_DIM = 1
        try:
            start = time.perf_counter()
            x, _ = maximizers.maximize(acq, domain, seed=seed)
            out[way] = (time.perf_counter() - start, float(acq(x[None])[0]))
            out[f"x_{way}"] = x
        finally:
            maximizers.has_gradient, maximizers.GRADIENT_MIN_DIM = real, min_dim
    moved = np.abs(out.pop("x_analytic") - out.pop("x_differences")) / domain.widths
    out["moved"] = float(moved.max())
    return out


def steps(
    problem_name: str,
    strategy: str,
    evals: int,
    after: int,
    inference: str,
    seed: int,
    measure=both_ways,
) -> list[dict]:
    """``measure(acq, domain, seed)``'s dict at every step of a run from ``after``
    evaluations on (``acq``: the step's acquisition, screened as the loop screens
    it), each with the step's ``n``."""
    from pp_decomp import Optimizer
    from pp_decomp.acquisition.surrogate import with_screen
    from pp_decomp.loop.ask import build_context
    from pp_decomp.models import get_problem

    problem = get_problem(problem_name, seed=seed)
    opt = Optimizer(problem, strategy, inference=inference, n_init=10, seed=seed)
    rows = []
    for k in range(evals):
        x = opt.ask()
        if opt.n >= after:  # the step's models and β, its input not yet pending
            rng = np.random.default_rng(seed + k)
            ctx = build_context(opt.setup, opt.state, opt.models, opt.n + 1, rng, hallucinate=False)
            acq = with_screen(opt.strategy.build(ctx))
            rows.append({"n": opt.n, **measure(acq, problem.domain, seed + k)})
        opt.tell(x, problem.evaluate(x[None], seed=seed)[0])
    opt.close()
    return rows


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--problem", default="tuberculosis-110")
    ap.add_argument("--strategy", default="d-gpucb")
    ap.add_argument("--evals", type=int, default=16)
    ap.add_argument("--after", type=int, default=10)
    ap.add_argument("--inference", default="map")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default=None)
    args = ap.parse_args(argv)
    warnings.simplefilter("ignore")
    rows = steps(args.problem, args.strategy, args.evals, args.after, args.inference, args.seed)
    for r in rows:
        (ta, va), (tf, vf) = r["analytic"], r["differences"]
        print(
            f"n={r['n']:3d} analytic {ta:6.2f} s value {va:.6g}   "
            f"differences {tf:6.2f} s value {vf:.6g}   choice moved {r['moved']:.1e} of a width"
        )
    ratio = np.median([r["analytic"][0] / r["differences"][0] for r in rows])
    scale = np.median([abs(r["differences"][1]) for r in rows])
    higher = sum(r["analytic"][1] >= r["differences"][1] - TOL * scale for r in rows)
    gap = np.array([r["analytic"][1] - r["differences"][1] for r in rows]) / scale
    print(
        f"{args.problem} {args.strategy} ({args.inference}): analytic / differences time, median "
        f"{ratio:.2f}; analytic value >= differences' (to {TOL:g} of |value|) at {higher} of "
        f"{len(rows)} steps; choices moved up to {max(r['moved'] for r in rows):.1e} of a width; "
        f"value gap mean {gap.mean():+.2e} ± {gap.std(ddof=1) / np.sqrt(len(gap)):.1e} "
        f"(of the median |value|)"
    )
    if args.out:
        with open(args.out, "w") as fh:
            json.dump({"problem": args.problem, "rows": rows}, fh, indent=1)


if __name__ == "__main__":
    main()
