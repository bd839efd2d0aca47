"""Command-line interface: ``pp-decomp SUBCOMMAND ...``."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from pp_decomp._threads import pin_threads

pin_threads()  # before numpy loads in this process


def _cmd_regression(args) -> int:
    from pp_decomp.regression import plot_regression, regression_study

    ds = regression_study(
        kernel=args.kernel,
        n_components=args.components,
        trials=args.trials,
        max_samples=args.max_samples,
        seed=args.seed,
        inference=args.inference,
        input_dim=args.dim,
        n_test=args.test_points,
        noise_sd=args.noise,
        progress=not args.quiet,
    )
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    ds.to_netcdf(out)
    plot_path = out.with_suffix(".png")
    plot_regression(ds, plot_path)
    _print_regression(ds)
    print(f"results: {out}\nplot:    {plot_path}")
    return 0


def _print_regression(ds) -> None:
    a = ds.attrs
    dec, ent = float(ds.rmse_decomposed.mean()), float(ds.rmse_entire.mean())
    k = ds.sizes["trial"]
    se = float((ds.rmse_entire - ds.rmse_decomposed).mean("n_samples").std() / k**0.5)
    print(
        f"kernel={a['kernel']} J={a['n_components']} trials={k} T={a['max_samples']} "
        f"seed={a['seed']} inference={a['inference']}\n"
        f"mean RMSE decomposed {dec:.4f}, entire {ent:.4f} "
        f"(difference {ent - dec:.4f} ± {se:.4f} SE)\n"
        f"mean relative RMSE improvement: {100 * a['relative_rmse_improvement']:.1f}%"
    )


def _cmd_run(args) -> int:
    from pp_decomp.loop import Optimizer
    from pp_decomp.models import get_problem
    from pp_decomp.results import plot_run

    problem = get_problem(args.problem, seed=args.problem_seed)
    out = Path(args.out)
    if out.exists() and not (args.resume or args.overwrite):
        raise ValueError(f"--out {out} exists; pass --resume to continue it or --overwrite")
    if out.exists() and args.overwrite:
        out.unlink()
    opt = Optimizer.open(
        out,
        problem,
        strategy=args.strategy,
        n_init=args.init,
        inference=args.inference,
        refit_every=args.refit_every,
        kernel=args.kernel,
        seed=args.seed,
    )
    if opt.n:
        print(f"resuming {out}: {opt.n} evaluation(s) kept")
    ds = opt.run(args.iterations, progress=not args.quiet)
    if args.plot:
        plot_run(ds, out.with_suffix(".png"))
    msg = f"{problem.name}/{opt.strategy.name}: {opt.n} evaluations, best objective "
    best = ds["objective"].max() if problem.maximize else ds["objective"].min()
    msg += f"{float(best):.6g}"
    if "cumulative_regret" in ds:
        msg += (
            f", cumulative regret {float(ds.cumulative_regret[-1]):.4g}, "
            f"simple regret {float(ds.simple_regret[-1]):.4g}"
        )
    print(msg + f"\nresults: {out}")
    return 0


def _cmd_problems(args) -> int:
    from pp_decomp.models import PROBLEMS

    for name, entry in PROBLEMS.items():
        print(f"{name:<24} {entry.summary}")
    return 0


def _cmd_strategies(args) -> int:
    from pp_decomp.strategies import STRATEGIES

    for name, s in STRATEGIES.items():
        print(f"{name:<20} [{s.surrogate}] {s.description}")
    return 0


def _cmd_plot(args) -> int:
    import xarray as xr

    from pp_decomp.results import plot_run

    path = Path(args.file)
    if not path.exists():
        raise ValueError(f"file {path} does not exist")
    ds = xr.load_dataset(path)
    out = Path(args.out) if args.out else path.with_suffix(".png")
    plot_run(ds, out)
    print(f"plot: {out}")
    return 0


def _cmd_bench(args) -> int:
    from pp_decomp.bench import BenchSpec, parse_list, preset, run_bench

    overrides = dict(
        problems=parse_list(args.problems),
        strategies=parse_list(args.strategies),
        trials=args.trials,
        iterations=args.iterations,
        n_init=args.init,
        inference=args.inference,
        root_seed=args.seed,
    )
    if args.preset:
        spec = preset(args.preset, quick=args.quick, **overrides)
    else:
        if overrides["problems"] is None or overrides["strategies"] is None:
            raise ValueError("give --preset, or both --problems and --strategies")
        spec = BenchSpec(**{k: v for k, v in overrides.items() if v is not None})
    ds = run_bench(
        spec, args.out, scheduler=args.scheduler, workers=args.workers, progress=not args.quiet
    )
    print((Path(args.out) / "summary.md").read_text())
    print(
        f"results: {args.out}/bench.nc, {args.out}/summary.md, {args.out}/regret.png "
        f"({ds.attrs['wall_seconds']:.0f} s)"
    )
    return 0


def _cmd_summary(args) -> int:
    from pp_decomp.bench import summarize

    print(summarize(args.out))
    print(f"rewrote {args.out}/summary.md and {args.out}/regret.png from {args.out}/bench.nc")
    return 0


def _cmd_perf(args) -> int:
    from pp_decomp.perf import run_perf

    run_perf(quick=args.quick, out=args.out)
    print(f"report: {args.out}")
    return 0


DEMO = {
    "problem": "synthetic",
    "strategies": ("d-gpucb", "gp-ucb"),
    "iterations": 40,
    "init": 5,
    "seeds": (0, 1),
}


def _cmd_demo(args) -> int:
    from pp_decomp.loop import Optimizer
    from pp_decomp.models import get_problem
    from pp_decomp.results import plot_comparison

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    print(
        f"pp-decomp demo: {' vs '.join(DEMO['strategies'])} on the {DEMO['problem']} problem, "
        f"{DEMO['iterations']} evaluations, seeds {DEMO['seeds']}"
    )
    runs = {}
    for seed in DEMO["seeds"]:
        problem = get_problem(DEMO["problem"], seed=seed)
        for strategy in DEMO["strategies"]:
            path = out / f"{DEMO['problem']}-{strategy}-seed{seed}.nc"
            opt = Optimizer(problem, strategy, n_init=DEMO["init"], seed=seed, checkpoint=path)
            runs[(strategy, seed)] = opt.run(DEMO["iterations"], progress=not args.quiet)
    plot_path = out / "regret.png"
    plot_comparison(runs, plot_path)
    for strategy in DEMO["strategies"]:
        final = [float(runs[(strategy, s)]["cumulative_regret"][-1]) for s in DEMO["seeds"]]
        print(f"{strategy:>10}: mean final cumulative regret {sum(final) / len(final):.3f}")
    print(f"results: {out}/*.nc\nplot:    {plot_path}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The ``pp-decomp`` argument parser with one sub-command per job."""
    p = argparse.ArgumentParser(prog="pp-decomp", description=__doc__)
    sub = p.add_subparsers(dest="command", required=True)

    r = sub.add_parser("regression", help="decomposed vs entire GP regression study (Wang Fig. 2)")
    r.add_argument("--kernel", default="se", choices=["se", "matern", "matern52", "matern32", "rq"])
    r.add_argument("--components", type=int, default=5, help="J, number of components")
    r.add_argument("--trials", type=int, default=30)
    r.add_argument("--max-samples", type=int, default=30, help="T, largest training size")
    r.add_argument("--seed", type=int, default=0)
    r.add_argument(
        "--inference",
        default="true",
        choices=["true", "map", "nuts"],
        help="'true': generating kernels (paper); map/nuts: learned hyperparameters",
    )
    r.add_argument("--dim", type=int, default=1, help="input dimension")
    r.add_argument("--test-points", type=int, default=200)
    r.add_argument("--noise", type=float, default=1e-4, help="component noise sd")
    r.add_argument("--out", default="regression.nc")
    r.add_argument("--quiet", action="store_true", help="no progress bar")
    r.set_defaults(func=_cmd_regression)

    u = sub.add_parser("run", help="run one strategy on one problem (ask/tell loop, checkpointed)")
    u.add_argument("--problem", required=True)
    u.add_argument("--problem-seed", type=int, default=0, help="instance of a random problem")
    u.add_argument("--strategy", default="d-gpucb")
    u.add_argument("--iterations", type=int, default=50, help="total evaluations incl. --init")
    u.add_argument("--init", type=int, default=5)
    u.add_argument(
        "--inference",
        default="map",
        choices=["map", "nuts", "fixed"],
        help="hyperparameters by MAP or NUTS, or 'fixed': the problem's known kernels (paper)",
    )
    u.add_argument("--refit-every", type=int, default=1)
    u.add_argument("--kernel", default=None, help="kernel family (default se)")
    u.add_argument("--seed", type=int, default=0)
    u.add_argument("--out", required=True, help="results netCDF, also the checkpoint")
    u.add_argument("--resume", action="store_true", help="continue the run in --out")
    u.add_argument("--overwrite", action="store_true", help="start afresh even if --out exists")
    u.add_argument("--plot", action="store_true", help="also write a plot next to --out")
    u.add_argument("--quiet", action="store_true")
    u.set_defaults(func=_cmd_run)

    b = sub.add_parser("bench", help="strategies x problems x trials, locally or on Dask")
    b.add_argument(
        "--preset",
        choices=["wang2019", "contal2014", "kandasamy2015", "rolland2018"],
        default=None,
    )
    b.add_argument("--quick", action="store_true", help="the preset's few-minute size")
    b.add_argument("--problems", default=None, help="comma-separated problem names")
    b.add_argument("--strategies", default=None, help="comma-separated strategy names")
    b.add_argument("--trials", type=int, default=None)
    b.add_argument("--iterations", type=int, default=None)
    b.add_argument("--init", type=int, default=None)
    b.add_argument("--inference", default=None, choices=["map", "nuts", "fixed"])
    b.add_argument("--seed", type=int, default=None, help="root seed of every task")
    b.add_argument("--out", required=True, help="folder of runs, bench.nc, summary.md, plots")
    b.add_argument("--scheduler", default=None, help="address of a Dask scheduler")
    b.add_argument("--workers", type=int, default=None, help="embedded Dask LocalCluster size")
    b.add_argument("--quiet", action="store_true")
    b.set_defaults(func=_cmd_bench)

    sm = sub.add_parser("summary", help="rewrite a benchmark's table and plot from its bench.nc")
    sm.add_argument("out", help="the benchmark folder (its --out)")
    sm.set_defaults(func=_cmd_summary)

    pf = sub.add_parser("perf", help="speed of the full-Bayes loop against its references")
    pf.add_argument("--quick", action="store_true")
    pf.add_argument("--out", default="perf.json")
    pf.set_defaults(func=_cmd_perf)

    sub.add_parser("problems", help="list problems").set_defaults(func=_cmd_problems)
    sub.add_parser("strategies", help="list strategies").set_defaults(func=_cmd_strategies)
    pl = sub.add_parser("plot", help="plot a finished run")
    pl.add_argument("file")
    pl.add_argument("--out", default=None)
    pl.set_defaults(func=_cmd_plot)

    d = sub.add_parser("demo", help="the main job on embedded defaults")
    d.add_argument("--out", default="demo-output", help="folder for results and plots")
    d.add_argument("--quiet", action="store_true")
    d.set_defaults(func=_cmd_demo)
    return p


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``pp-decomp`` command."""
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except (ValueError, TypeError) as err:
        print(f"pp-decomp: error: {err}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
