"""The cost of one ask on ``tuberculosis-110`` (110-D policies under a budget, 23 yearly
components): D-GPUCB against GP-UCB on the same data, in the same run.

Usage: python benchmarks/speed/tb_ask.py [--evals 30] [--after 20] [--inference map]
       [--seed 0] [--fd] [--choices FILE.npy] [--out FILE.json]

A D-GPUCB run (10 space-filling evaluations, then its own choices) times every
ask once ``--after`` evaluations are in; at each of those steps a fresh GP-UCB
optimiser is told the same data and its first ask (its fit and maximisation)
is timed too. ``--fd`` makes the maximiser take finite-difference gradients as
it did before analytic ones (for before/after ratios in one session). Prints
the median and maximum ask per strategy, their ratio, and the process's peak
resident memory. ``--choices FILE.npy`` keeps the D-GPUCB run's inputs there;
when FILE holds another tree's, it first prints how far each ask moved from
them (does a change keep the choices?).
"""

from __future__ import annotations

import argparse
import json
import os

for _v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

import resource  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402

import numpy as np  # noqa: E402

STRATEGIES = ("d-gpucb", "gp-ucb")


def asks(evals: int, after: int, inference: str, seed: int):
    from pp_decomp import Optimizer
    from pp_decomp.models import get_problem

    problem = get_problem("tuberculosis-110")
    opt = Optimizer(problem, "d-gpucb", inference=inference, n_init=10, seed=seed)
    out: dict[str, list[float]] = {s: [] for s in STRATEGIES}
    for _ in range(evals):
        if opt.n >= after:
            shadow = Optimizer(problem, "gp-ucb", inference=inference, n_init=2, seed=seed)
            for x, y in zip(opt.X, opt.Y, strict=True):
                shadow.tell(x, y)
            start = time.perf_counter()
            shadow.ask()
            out["gp-ucb"].append(time.perf_counter() - start)
        start = time.perf_counter()
        x = opt.ask()
        if opt.n >= after:
            out["d-gpucb"].append(time.perf_counter() - start)
        opt.tell(x, problem.evaluate(x[None], seed=seed)[0])
    opt.close()
    return out, np.asarray(opt.X)


def compare_choices(X: np.ndarray, path: str) -> None:
    """Print how far each of ``X``'s asks moved from the inputs kept in ``path``, and
    the best objective each run found; then keep ``X`` there."""
    from pp_decomp.models import get_problem

    if os.path.exists(path):
        old = np.load(path)
        n = min(len(old), len(X))
        if n <= 10:
            raise SystemExit(f"--choices: {path} and this run have no ask in common (n = {n})")
        moved = np.abs(X[:n] - old[:n]).max(axis=1)[10:]  # after the 10 initial inputs
        problem = get_problem("tuberculosis-110")
        best, best_old = problem.objective(X[:n]).min(), problem.objective(old[:n]).min()
        print(
            f"choices against {path}: {np.sum(moved <= 1e-9)} of {len(moved)} asks within 1e-9, "
            f"{np.sum(moved <= 1e-4)} within 1e-4; largest move {moved.max():.3g}; "
            f"best objective {best:.10g} here, {best_old:.10g} there"
        )
    np.save(path, X)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--evals", type=int, default=30)
    ap.add_argument("--after", type=int, default=20)
    ap.add_argument("--inference", default="map")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--fd", action="store_true", help="finite-difference gradients")
    ap.add_argument("--choices", default=None, help="FILE.npy of a run's inputs")
    ap.add_argument("--out", default=None)
    args = ap.parse_args(argv)
    from pp_decomp.optim import maximizers

    warnings.simplefilter("ignore")
    if args.fd:
        maximizers.has_gradient = lambda acq, X: False
    rows, X = asks(args.evals, args.after, args.inference, args.seed)
    if args.choices:
        compare_choices(X, args.choices)
    med = {s: float(np.median(t)) for s, t in rows.items()}
    label = "finite differences" if args.fd else "analytic"
    for s, t in rows.items():
        print(f"{s:8s} ask median {med[s]:.2f} s, max {max(t):.2f} s over {len(t)} ({label})")
    print(f"d-gpucb / gp-ucb ask: {med['d-gpucb'] / med['gp-ucb']:.1f}x")
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
    print(f"peak resident memory {peak:.2f} GB")
    if args.out:
        with open(args.out, "w") as fh:
            json.dump({"asks": rows, "median": med, "fd": args.fd, "peak_gb": peak}, fh, indent=1)


if __name__ == "__main__":
    main()
