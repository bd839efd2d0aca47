"""Correlated components under MAP against independent ones: a run's wall time, on
Wang's synthetic problem (J = 10, 1000 candidates), D-GPUCB.

Usage: python benchmarks/speed/correlated_map_time.py [--steps 100] [--seed 0]
       [--problem synthetic] [--choices FILE.npy]

Runs D-GPUCB with MAP refits every step twice in one process, once with one
coregionalised GP of the ten components (``correlated=True``) and once with ten
independent GPs (``--problem``: another problem with several components), and
prints each run's seconds, ask median and maximum, final cumulative regret, and
their time ratio (the issue's line: correlated within 5×).
``--choices FILE.npy`` keeps the correlated run's inputs there; when FILE holds
another tree's, it first prints how many asks chose the same input.
"""

from __future__ import annotations

import argparse
import os

for _v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

import time  # noqa: E402
import warnings  # noqa: E402

import numpy as np  # noqa: E402

N_INIT = 5  # the Optimizer's default initial design


def one_run(name: str, steps: int, seed: int, correlated: bool) -> tuple[dict, np.ndarray]:
    """Seconds, ask median/max and final cumulative regret of one run, and its inputs."""
    from pp_decomp import Optimizer
    from pp_decomp.models import get_problem

    problem = get_problem(name, seed=seed)
    opt = Optimizer(
        problem, "d-gpucb", inference="map", seed=seed, correlated=correlated, n_init=N_INIT
    )
    start = time.perf_counter()
    ds = opt.run(steps)
    seconds = time.perf_counter() - start
    ask = ds["ask_seconds"].values[ds["phase"].values == "acquisition"]
    row = {
        "seconds": seconds,
        "ask_median": float(np.median(ask)),
        "ask_max": float(ask.max()),
        "regret": float(ds["cumulative_regret"][-1]),
    }
    return row, ds["x"].values


def compare_choices(X: np.ndarray, path: str) -> None:
    """Print how many of ``X``'s inputs equal those kept in ``path``; keep ``X`` there."""
    if os.path.exists(path):
        old = np.load(path)
        n = min(len(old), len(X))
        same = np.abs(X[:n] - old[:n]).max(axis=1) <= 1e-12
        first = int(np.argmin(same)) if not same.all() else n
        print(
            f"choices against {path}: {int(same.sum())} of {n} the same; first differs at {first}"
        )
    np.save(path, X)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--problem", default="synthetic")
    ap.add_argument("--steps", type=int, default=100)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--choices", default=None, help="FILE.npy of a correlated run's inputs")
    args = ap.parse_args(argv)
    if args.steps <= N_INIT:
        raise SystemExit(f"--steps must exceed the {N_INIT} initial evaluations; got {args.steps}")
    warnings.simplefilter("ignore")  # a fit's diagnostics are in the results
    rows = {}
    for correlated in (True, False):
        rows[correlated], X = one_run(args.problem, args.steps, args.seed, correlated)
        if correlated and args.choices:
            compare_choices(X, args.choices)
    for correlated, r in rows.items():
        label = "correlated" if correlated else "independent"
        print(
            f"{label} {r['seconds']:.1f} s, ask median {r['ask_median']:.3f} s, "
            f"max {r['ask_max']:.3f} s, regret {r['regret']:.4f}"
        )
    print(f"correlated / independent: {rows[True]['seconds'] / rows[False]['seconds']:.2f}x")


if __name__ == "__main__":
    main()
