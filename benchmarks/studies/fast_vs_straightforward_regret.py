"""Regret of the full-Bayes fast path against the straightforward full-Bayes loop, same seeds.

Usage: python benchmarks/studies/fast_vs_straightforward_regret.py [--problem synthetic|flu]
       [--seeds 10] [--iterations 30] [--workers 2] [--paths fast,straightforward]
       [--out FILE.json]
       python benchmarks/studies/fast_vs_straightforward_regret.py --summarize FILE.json
       [FILE.json ...] [--out POOLED.json]

``--paths`` runs one path only (the straightforward one does not depend on the
fast path's code, so it can be run once and summarised with later fast runs:
``--summarize`` pools the runs of several reports, a later report's run
replacing an earlier one's of the same seed and path).

Both run D-GPUCB with NUTS hyperparameters, on Wang's synthetic problem (J = 10,
1000 candidates) or flu (J = 5, a 5-D box with a budget), the problem instance
seeded like the run: the fast path (``fast=True``: reweighted draws, incremental
posterior, warm-started refits when the weights degrade) and the
straightforward path (a fresh NUTS fit of every component at every step, no
reuse). Prints each run as it ends, then each path's final cumulative regret
(mean ± standard error over seeds) and the paired difference fast - straightforward.
"""

from __future__ import annotations

import argparse
import json
import os

for _v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

import time  # noqa: E402
from concurrent.futures import ProcessPoolExecutor, as_completed  # noqa: E402

import numpy as np  # noqa: E402


def one_run(args: tuple[str, int, bool, int]) -> dict:
    name, seed, fast, iterations = args
    import warnings

    from pp_decomp import Optimizer
    from pp_decomp.models import get_problem

    warnings.simplefilter("ignore")
    problem = get_problem(name, seed=seed)
    start = time.perf_counter()
    ds = Optimizer(problem, "d-gpucb", inference="nuts", fast=fast, seed=seed).run(iterations)
    return {
        "problem": name,
        "seed": seed,
        "fast": fast,
        "seconds": time.perf_counter() - start,
        "cumulative_regret": float(ds["cumulative_regret"][-1]),
        "simple_regret": float(ds["simple_regret"][-1]),
    }


def _finished(jobs: list[tuple], workers: int):
    """Each job's run as it finishes: in ``workers`` processes, or here with 1."""
    if workers == 1:
        yield from map(one_run, jobs)
        return
    with ProcessPoolExecutor(workers) as pool:
        for r in as_completed([pool.submit(one_run, job) for job in jobs]):
            yield r.result()


def mean_se(a) -> tuple[float, float]:
    a = np.asarray(a, dtype=float)
    return float(a.mean()), float(a.std(ddof=1) / np.sqrt(len(a))) if len(a) > 1 else np.nan


def summarize(runs: list[dict], seeds: int, iterations: int, problem: str = "synthetic") -> dict:
    """Mean ± standard error of each path and of the paired difference, over seeds."""
    by = {f: {r["seed"]: r for r in runs if r["fast"] == f} for f in (1, 0)}
    paired = sorted(set(by[1]) & set(by[0]))
    report = {"problem": problem, "seeds": seeds, "iterations": iterations, "runs": runs}
    for f, key in ((1, "fast"), (0, "straightforward")):
        report[key] = mean_se([r["cumulative_regret"] for r in by[f].values()])
        report[f"{key}_seconds"] = mean_se([r["seconds"] for r in by[f].values()])
    diff = [by[1][s]["cumulative_regret"] - by[0][s]["cumulative_regret"] for s in paired]
    report["paired_difference"] = mean_se(diff) if diff else (np.nan, np.nan)
    report["paired_seeds"] = paired
    for k in ("fast", "straightforward", "paired_difference"):
        m, se = report[k]
        n = len(paired) if k == "paired_difference" else len(by[int(k == "fast")])
        print(f"final cumulative regret, {k}: {m:.3f} ± {se:.3f} ({n} seeds)")
    print(
        f"mean wall time per run: fast {report['fast_seconds'][0]:.0f} s, "
        f"straightforward {report['straightforward_seconds'][0]:.0f} s"
    )
    return report


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--problem", choices=("synthetic", "flu"), default="synthetic")
    p.add_argument("--seeds", type=int, default=10)
    p.add_argument("--iterations", type=int, default=30)
    p.add_argument("--workers", type=int, default=2, help="runs in parallel processes (1: here)")
    p.add_argument("--paths", default="fast,straightforward")
    p.add_argument("--out", default=None)
    p.add_argument("--summarize", nargs="+", default=None, help="summarise finished reports")
    a = p.parse_args(argv)
    if a.summarize:
        reports = []
        for path in a.summarize:
            with open(path) as fh:
                reports.append(json.load(fh))
        # a later report's run replaces an earlier one's of the same seed and path
        latest = {(r["seed"], r["fast"]): r for rep in reports for r in rep["runs"]}
        runs = sorted(latest.values(), key=lambda r: (r["seed"], not r["fast"]))
        old = reports[0]
        report = summarize(runs, old["seeds"], old["iterations"], old.get("problem", a.problem))
        if a.out:
            with open(a.out, "w") as fh:
                json.dump(report, fh, indent=1)
        return
    paths = {"fast": True, "straightforward": False}
    fast_flags = [paths[name] for name in a.paths.split(",")]
    jobs = [(a.problem, s, f, a.iterations) for s in range(a.seeds) for f in fast_flags]
    runs = []
    for r in _finished(jobs, a.workers):
        runs.append(r)
        if a.out:  # every finished run on disk at once: hours of runs are not lost
            with open(a.out, "w") as fh:
                json.dump({"seeds": a.seeds, "iterations": a.iterations, "runs": runs}, fh)
        path = "fast" if r["fast"] else "straightforward"
        print(
            f"seed {r['seed']} {path}: regret {r['cumulative_regret']:.3f}, {r['seconds']:.0f} s",
            flush=True,
        )
    report = summarize(runs, a.seeds, a.iterations, a.problem)
    if a.out:
        with open(a.out, "w") as fh:
            json.dump(report, fh, indent=1)


if __name__ == "__main__":
    main()
