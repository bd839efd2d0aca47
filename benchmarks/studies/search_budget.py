"""Fewer or shorter local searches in the box maximiser: what they save and what
they give up, on the same acquisition at every step of a run.

Usage: python benchmarks/studies/search_budget.py [--problem tuberculosis-110]
       [--strategy d-gpucb] [--evals 16] [--after 10] [--inference map] [--seed 0]
       [--out FILE.json]

A ``--strategy`` run on ``--problem`` (its own choices, 10 space-filling
evaluations first); at each step from ``--after`` evaluations on, the step's
acquisition (its models, ``β_t`` and draws, screened as the loop screens it) is
maximised by :func:`~pp_decomp.optim.maximizers.maximize_box` under each search
budget of :data:`BUDGETS` from the same seed: the default (8 starts, 200
iterations, scipy's tolerance), fewer starts, a looser stopping tolerance, both,
and fewer iterations. Prints per budget the median time against the default's,
at how many steps it reached the default's value (to ``TOL`` of the median
|value|), and the mean shortfall with its standard error, in units of the
acquisition's spread over the raw points (its 90% - 10% quantile range): what a
decision rule for a shorter search would have to accept.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

for _v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

import time  # noqa: E402
import warnings  # noqa: E402

import numpy as np  # noqa: E402

# the run and its steps' acquisitions are gradient_ab's
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "speed"))
from gradient_ab import steps  # noqa: E402

TOL = 1e-6  # relative: two values closer than this are the same optimum
BUDGETS = {
    "default": {},
    "4 starts": {"n_starts": 4},
    "ftol 1e-4": {"ftol": 1e-4},
    "4 starts, ftol 1e-4": {"n_starts": 4, "ftol": 1e-4},
    "50 iterations": {"maxiter": 50},
}


def budgets_at(acq, box, seed: int) -> dict:
    """Each budget's ``(seconds, value)`` on ``acq`` from ``seed``, and the
    acquisition's spread over 1024 raw points."""
    from pp_decomp.optim.maximizers import maximize_box

    out = {}
    for name, kw in BUDGETS.items():
        start = time.perf_counter()
        x, _ = maximize_box(acq, box, seed=seed, **kw)
        out[name] = (time.perf_counter() - start, float(acq(x[None])[0]))
    raw = np.asarray(acq(box.sample(1024, seed=seed)), dtype=float)
    lo, hi = np.quantile(raw[np.isfinite(raw)], [0.1, 0.9])
    out["spread"] = float(hi - lo)
    return out


def summary(rows: list[dict]) -> list[str]:
    """One line per budget: time ratio, steps at the default's value, shortfall."""
    scale = np.median([abs(r["default"][1]) for r in rows])
    lines = []
    for name in BUDGETS:
        ratio = np.median([r[name][0] / r["default"][0] for r in rows])
        short = np.array([(r["default"][1] - r[name][1]) / r["spread"] for r in rows])
        same = sum(r[name][1] >= r["default"][1] - TOL * scale for r in rows)
        se = short.std(ddof=1) / np.sqrt(len(short)) if len(short) > 1 else float("nan")
        lines.append(
            f"{name:20s} time {ratio:.2f}x the default's; its value at {same} of {len(rows)} "
            f"steps; shortfall {short.mean():+.2e} ± {se:.1e} of the spread "
            f"(max {short.max():+.2e})"
        )
    return lines


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
    rows = steps(
        args.problem, args.strategy, args.evals, args.after, args.inference, args.seed, budgets_at
    )
    print(f"{args.problem} {args.strategy} ({args.inference}), {len(rows)} steps:")
    for line in summary(rows):
        print(line)
    if args.out:
        with open(args.out, "w") as fh:
            json.dump({"problem": args.problem, "rows": rows}, fh, indent=1)


if __name__ == "__main__":
    main()
