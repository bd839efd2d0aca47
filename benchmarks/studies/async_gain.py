"""What asynchronous batches gain: q evaluations in flight against one at a time.

Usage: python benchmarks/studies/async_gain.py [--problems synthetic,flu] [--seeds 10]
       [--iterations 100] [--q 1,4,8] [--strategy d-gpucb] [--inference map]
       [--out docs/results/batch] [--workers 1]

For each problem instance and seed (``--problem-seed`` = seed), D-GPUCB runs
``--iterations`` evaluations with q = 1, 4, 8 workers in simulated time
(:func:`pp_decomp.loop.simulate.simulate_async`). Evaluation durations are
log-normal (median 1, σ_log = 0.5: a simulator whose run time varies by about
±50%), drawn once per seed, so every q sees the same durations in the order its
evaluations were asked. Written to ``--out``: ``async.nc`` (every run's
per-evaluation results), ``summary.md`` and ``regret.png`` (cumulative regret
against evaluations and against simulated time). The summary reports, per
problem and q, the mean ± SE over seeds of the final cumulative regret, its
ratio to q = 1 (paired), the final simple regret and its difference from q = 1's
(paired), the simulated time to finish, and the time to reach q = 1's final
best value. Each run is also
kept under ``--out/runs``; a rerun of the command skips the runs already there.
"""

from __future__ import annotations

import argparse
import os

for _v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

import time  # noqa: E402
import warnings  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import xarray as xr  # noqa: E402

from pp_decomp.apps.hyper_summary import mean_se  # noqa: E402


def one_run(problem_name: str, seed: int, q: int, n: int, strategy: str, inference: str):
    from pp_decomp import Optimizer
    from pp_decomp.loop.simulate import simulate_async
    from pp_decomp.models import get_problem

    warnings.simplefilter("ignore")
    problem = get_problem(problem_name, seed=seed)
    rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(7,)))
    durations = rng.lognormal(0.0, 0.5, size=n + 64)
    opt = Optimizer(problem, strategy, inference=inference, seed=seed)
    start = time.perf_counter()
    ds = simulate_async(opt.setup, opt.state, opt.steps, n, q, durations)
    seconds = time.perf_counter() - start
    out = xr.Dataset(
        {
            "regret": ds["regret"],
            "cumulative_regret": ds["cumulative_regret"],
            "finish_time": ds["finish_time"],
        }
    ).drop_vars([c for c in ds.coords if c != "iteration"], errors="ignore")
    out = out.assign_coords(iteration=np.arange(1, n + 1))
    return out.expand_dims(problem=[problem_name], seed=[seed], q=[q]), seconds


def run_path(runs: Path, problem: str, seed: int, q: int) -> Path:
    return runs / f"{problem}-seed{seed}-q{q}.nc"


def cached_run(runs: Path, problem: str, seed: int, q: int, n: int, strategy: str, inference: str):
    """One run written to ``runs``, so an interrupted benchmark resumes where it stopped."""
    ds, sec = one_run(problem, seed, q, n, strategy, inference)
    cr = float(ds.cumulative_regret.isel(iteration=-1).squeeze())
    t = float(ds.finish_time.isel(iteration=-1).squeeze())
    print(
        f"{problem} seed {seed} q={q}: cumulative regret {cr:.3f}, "
        f"simulated time {t:.1f}, compute {sec:.1f} s",
        flush=True,
    )
    ds.to_netcdf(run_path(runs, problem, seed, q))


def summarize(ds: xr.Dataset) -> str:
    lines = [
        "| problem | q | final cumulative regret | ratio to q=1 (paired) "
        "| final simple regret | minus q=1's (paired) "
        "| simulated time to finish | ratio to q=1 | time to q=1's best | seeds |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for p in ds.problem.values:
        d = ds.sel(problem=p)
        base_cr = d.cumulative_regret.sel(q=1).isel(iteration=-1)
        base_t = d.finish_time.sel(q=1).isel(iteration=-1)
        base_best = d.regret.sel(q=1).min("iteration")
        for q in d.q.values:
            e = d.sel(q=q)
            cr = e.cumulative_regret.isel(iteration=-1)
            t = e.finish_time.isel(iteration=-1)
            ratio = (cr / base_cr).values
            tratio = (t / base_t).values
            # simulated time when the best regret so far first reached q=1's final best
            best_so_far = np.minimum.accumulate(e.regret.values, axis=-1)
            reach = []
            for i, s in enumerate(d.seed.values):
                hit = np.nonzero(best_so_far[i] <= base_best.sel(seed=s).values + 1e-12)[0]
                reach.append(
                    e.finish_time.values[i, hit[0]] / base_t.sel(seed=s).values
                    if len(hit)
                    else np.nan
                )
            k = cr.sizes["seed"]
            simple, gap = best_so_far[:, -1], best_so_far[:, -1] - base_best.values
            lines.append(
                f"| {p} | {q} | {float(cr.mean()):.3f} ± {mean_se(cr.values)[1]:.3f} "
                f"| {np.mean(ratio):.3f} ± {mean_se(ratio)[1]:.3f} "
                f"| {np.mean(simple):.4g} ± {mean_se(simple)[1]:.2g} "
                f"| {np.mean(gap):+.3g} ± {mean_se(gap)[1]:.2g} "
                f"| {float(t.mean()):.1f} | {np.mean(tratio):.3f} "
                f"| {np.nanmean(reach):.3f} of q=1's time ({np.sum(np.isfinite(reach))}/{k} reach) "
                f"| {k} |"
            )
    return "\n".join(lines)


def plot(ds: xr.Dataset, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    probs = list(ds.problem.values)
    fig, axes = plt.subplots(len(probs), 2, figsize=(10, 3.5 * len(probs)), squeeze=False)
    for row, p in zip(axes, probs, strict=True):
        d = ds.sel(problem=p)
        for q in d.q.values:
            cr = d.cumulative_regret.sel(q=q)
            row[0].plot(d.iteration, cr.mean("seed"), label=f"q={q}")
            row[1].plot(d.finish_time.sel(q=q).mean("seed"), cr.mean("seed"), label=f"q={q}")
        row[0].set(title=f"{p}: per evaluation", xlabel="evaluations", ylabel="cumulative regret")
        row[1].set(title=f"{p}: per simulated time", xlabel="simulated time (median run = 1)")
        row[0].legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--problems", default="synthetic,flu")
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--iterations", type=int, default=100)
    ap.add_argument("--q", default="1,4,8")
    ap.add_argument("--strategy", default="d-gpucb")
    ap.add_argument("--inference", default="map")
    ap.add_argument("--out", default="docs/results/batch")
    ap.add_argument("--workers", type=int, default=1, help="runs in parallel processes")
    a = ap.parse_args()
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    qs = [int(v) for v in a.q.split(",")]
    if 1 not in qs:
        raise SystemExit(f"--q must include 1 (the baseline); got {a.q!r}")
    jobs = [(p, seed, q) for p in a.problems.split(",") for seed in range(a.seeds) for q in qs]
    runs = out / "runs"
    runs.mkdir(exist_ok=True)
    todo = [j for j in jobs if not run_path(runs, *j).exists()]
    args = [(runs, *j, a.iterations, a.strategy, a.inference) for j in todo]
    if a.workers > 1:
        from concurrent.futures import ProcessPoolExecutor

        with ProcessPoolExecutor(a.workers) as pool:
            list(pool.map(cached_run, *zip(*args, strict=True)))
    else:
        for arg in args:
            cached_run(*arg)
    # problem names as objects: fixed-width strings of unequal length are cut when combined
    parts = [xr.load_dataset(run_path(runs, *j)) for j in jobs]
    parts = [part.assign_coords(problem=part.problem.astype(object)) for part in parts]
    ds = xr.combine_by_coords(parts)
    ds.attrs.update(strategy=a.strategy, inference=a.inference, durations="lognormal(0, 0.5)")
    ds.to_netcdf(out / "async.nc")
    table = summarize(ds)
    (out / "summary.md").write_text(
        f"# Asynchronous batches: {a.strategy} ({a.inference}), {a.iterations} evaluations\n\n"
        f"Command: `python benchmarks/studies/async_gain.py --problems {a.problems} "
        f"--seeds {a.seeds} --iterations {a.iterations} --q {a.q} --strategy {a.strategy} "
        f"--inference {a.inference} --out {a.out}`\n\n{table}\n"
    )
    plot(ds, out / "regret.png")
    print(table)


if __name__ == "__main__":
    main()
