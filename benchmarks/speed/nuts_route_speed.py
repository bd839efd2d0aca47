"""One NUTS fit of a component GP by two checkouts, each in its own Python:
typically the old route (nutpie 0.16.8 calling numba C callbacks) against the
new one (nutpie's public ``from_pyfunc`` calling the numba density).

Usage:
    python benchmarks/speed/nuts_route_speed.py --old PYTHON:TREE --new PYTHON:TREE
        [--sizes 10,50,100] [--dim 2] [--reps 5] [--repeat 3]

Each run is a fresh process of one route that, after a warm-up fit per size
(numba's cache, nutpie's start-up), fits every size ``repeat`` times in turn,
by ``ComponentGP._sample``: 4 chains x 400 draws, 300 tuning steps, 2 cores,
the same data and seeds for both routes. Runs alternate between the routes
(the order swapped every repetition). Prints per size the median seconds of
each route over all its fits, their ratio new/old, the median over the
repetitions of the ratio of a repetition's two runs (paired, so less
sensitive to a machine whose speed drifts), and the mean ``log η`` both ways
(equal to Monte Carlo error).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

for _v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

DRAWS, TUNE, CHAINS = 400, 300, 4


def _data(n: int, d: int):
    import numpy as np

    rng = np.random.default_rng(n)
    X = rng.uniform(size=(n, d))
    y = np.sin(6 * X[:, 0]) + 0.1 * rng.standard_normal(n)
    return X, y


def worker(sizes: list[int], d: int, seed: int, repeat: int) -> None:
    """Fit every size ``repeat`` times after a warm-up; print
    ``{n: [[seconds, ...], mean log eta]}``."""
    from pp_decomp.components.gp.gp import ComponentGP
    from pp_decomp.components.inference.nuts import NutsSettings

    settings = NutsSettings(draws=DRAWS, tune=TUNE, chains=CHAINS)
    problems = {}
    for n in sizes:
        gp = ComponentGP("se", d, name="f")
        Xs, ys = gp._set_data(*_data(n, d))
        gp._sample(Xs, ys, settings, 10_000 + seed)  # warm-up
        problems[n] = gp, Xs, ys
    out = {n: [[], 0.0] for n in sizes}
    for r in range(repeat):
        for n, (gp, Xs, ys) in problems.items():
            start = time.perf_counter()
            trace = gp._sample(Xs, ys, settings, seed + 1000 * r)
            out[n][0].append(time.perf_counter() - start)
            out[n][1] += float(trace.posterior["eta_log__"].mean()) / repeat
    print(json.dumps(out))


def _run(route: str, args, seed: int) -> dict:
    python, tree = route.split(":", 1)
    env = dict(os.environ, PYTHONPATH=tree)
    cmd = [python, os.path.abspath(__file__), "--worker", "--sizes", args.sizes]
    cmd += ["--dim", str(args.dim), "--seed", str(seed), "--repeat", str(args.repeat)]
    done = subprocess.run(cmd, cwd=tree, env=env, capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--old", help="PYTHON:TREE of the old route")
    parser.add_argument("--new", help="PYTHON:TREE of the new route")
    parser.add_argument("--sizes", default="10,50,100")
    parser.add_argument("--dim", type=int, default=2)
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    sizes = [int(v) for v in args.sizes.split(",")]
    if args.worker:
        worker(sizes, args.dim, args.seed, args.repeat)
        return
    runs: dict[str, list[dict]] = {"old": [], "new": []}
    routes = {"old": args.old, "new": args.new}
    for rep in range(args.reps):
        order = ("old", "new") if rep % 2 == 0 else ("new", "old")
        for name in order:
            runs[name].append(_run(routes[name], args, rep))
            times = {n: [round(t, 3) for t in v[0]] for n, v in runs[name][-1].items()}
            print(f"rep {rep} {name}: {times}", file=sys.stderr, flush=True)
    print(
        f"d={args.dim}, {CHAINS} chains x {DRAWS} draws, {TUNE} tuning; "
        f"{args.reps} runs of {args.repeat} fits per route"
    )
    print("   T   old median s   new median s   new/old   paired   mean log eta old / new")
    for n in sizes:
        old = [r[str(n)] for r in runs["old"]]
        new = [r[str(n)] for r in runs["new"]]
        t_old = statistics.median(t for v in old for t in v[0])
        t_new = statistics.median(t for v in new for t in v[0])
        paired = statistics.median(
            statistics.median(b[0]) / statistics.median(a[0]) for a, b in zip(old, new, strict=True)
        )
        m_old = statistics.mean(v[1] for v in old)
        m_new = statistics.mean(v[1] for v in new)
        print(
            f"{n:4d}   {t_old:12.3f}   {t_new:12.3f}   {t_new / t_old:7.2f}   {paired:6.2f}"
            f"   {m_old:+.3f} / {m_new:+.3f}"
        )


if __name__ == "__main__":
    main()
