"""The other sub-commands: ``problems``, ``strategies``, ``demo``, ``report``, ``regression``,
``perf``; their arguments: :mod:`pp_decomp.apps.cli.parsers.tools`."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from pp_decomp.apps.cli.user_code import cwd_on_path, load_components
from pp_decomp.apps.perf import run_perf
from pp_decomp.apps.plots import plot_comparison
from pp_decomp.apps.regression import plot_regression, regression_study
from pp_decomp.apps.regression_problem import problem_regression_study
from pp_decomp.apps.report_pictures import (
    fit_kinds,
    paired_difference,
    run_pictures,
    title,
    write_report,
)
from pp_decomp.apps.run_report import report
from pp_decomp.loop import Optimizer
from pp_decomp.models import PROBLEMS, get_problem
from pp_decomp.strategies import STRATEGIES

DEMO = {
    "problem": "synthetic",
    "strategies": ("d-gpucb", "gp-ucb"),
    "inference": "nuts",
    "iterations": 30,
    "init": 5,
    "seeds": (0, 1, 2),
}


def cmd_problems(args) -> int:
    """``pp-decomp problems``."""
    for name, entry in PROBLEMS.items():
        print(f"{name:<26} {entry.summary}")
    print("\nyour own: --problem package.module:factory (a function returning a pp_decomp.Problem)")
    return 0


def cmd_strategies(args) -> int:
    """``pp-decomp strategies``."""
    for name, s in STRATEGIES.items():
        print(f"{name:<22} [{s.surrogate}] {s.description}")
    return 0


def cmd_demo(args) -> int:
    """``pp-decomp demo``: D-GPUCB against GP-UCB under full Bayes on synthetic
    instances, then the pictures and report of :mod:`pp_decomp.apps.report_pictures`."""
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    what = f"{' vs '.join(DEMO['strategies'])} ({DEMO['inference']}) on {DEMO['problem']}"
    print(f"pp-decomp demo: {what}, {DEMO['iterations']} evaluations, seeds {DEMO['seeds']}")
    runs, shown = {}, None
    for seed in DEMO["seeds"]:
        problem = get_problem(DEMO["problem"], seed=seed)
        for strategy in DEMO["strategies"]:
            path = out / f"{DEMO['problem']}-{strategy}-seed{seed}.nc"
            kw = dict(n_init=DEMO["init"], seed=seed, inference=DEMO["inference"])
            with Optimizer(problem, strategy, checkpoint=path, overwrite=True, **kw) as opt:
                runs[(strategy, seed)] = opt.run(DEMO["iterations"], progress=not args.quiet)
                if shown is None:
                    opt.ask()  # the next input, with the models on every observation
                    view = opt.report_view()
                    shown = (view, run_pictures(view, out))
    seeds = len(DEMO["seeds"])
    pictures = {"regret.png": f"cumulative and average regret, mean ± SE over {seeds} seeds"}
    plot_comparison(runs, out / "regret.png", title=what)
    pictures.update(shown[1])
    notes, finals = [], {}
    for strategy in DEMO["strategies"]:
        final = [float(runs[(strategy, s)]["cumulative_regret"][-1]) for s in DEMO["seeds"]]
        finals[strategy] = final
        se = np.std(final, ddof=1) / np.sqrt(len(final))
        line = f"{strategy}: final cumulative regret {np.mean(final):.3f} ± {se:.2g} (SE)"
        notes.append(f"- {line}; {fit_kinds(runs[(strategy, DEMO['seeds'][0])])}, seed 0")
        print(line)
    first, second = DEMO["strategies"][:2]
    paired = paired_difference(finals[first], finals[second], first, second)
    notes.append(f"- {paired}")
    print(paired)
    report = write_report(out, f"pp-decomp demo: {what}", pictures, notes)
    print(f"pictures of {title(shown[0])} and the regret: {out}/*.png\nreport:  {report}")
    return 0


def cmd_report(args) -> int:
    """``pp-decomp report RUN``: :func:`pp_decomp.apps.run_report.report` of a run's file."""
    run = Path(args.run)
    if not run.is_file():
        raise ValueError(f"RUN {str(run)!r} is not a file")
    cwd_on_path()  # --problem mod:factory in the current folder, without PYTHONPATH
    components = None if args.components is None else load_components(args.components)
    written = report(run, args.problem, components, out=args.out)
    print(f"pictures: {written.parent}/*.png\nreport:   {written}")
    return 0


def cmd_regression(args) -> int:
    """``pp-decomp regression``."""
    if args.problem is not None:
        return _problem_regression(args)
    args.inference = args.inference or "true"
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
    a, k = ds.attrs, ds.sizes["trial"]
    dec, ent = float(ds.rmse_decomposed.mean()), float(ds.rmse_entire.mean())
    se = float((ds.rmse_entire - ds.rmse_decomposed).mean("n_samples").std() / k**0.5)
    print(
        f"kernel={a['kernel']} J={a['n_components']} trials={k} T={a['max_samples']} "
        f"seed={a['seed']} inference={a['inference']}\n"
        f"mean RMSE decomposed {dec:.4f}, entire {ent:.4f} "
        f"(difference {ent - dec:.4f} ± {se:.4f} SE)\n"
        f"mean relative RMSE improvement: {100 * a['relative_rmse_improvement']:.1f}%"
    )
    print(f"results: {out}\nplot:    {plot_path}")
    return 0


def _problem_regression(args) -> int:
    """``pp-decomp regression --problem P``: the study on a problem's own components."""
    args.inference = args.inference or "map"
    if args.inference == "true":
        raise SystemExit(
            "--inference true needs generating kernels; with --problem use map or nuts"
        )
    try:
        sizes = [int(n) for n in args.sizes.split(",")]
    except ValueError:
        raise SystemExit(f"--sizes must be comma-separated integers; got {args.sizes!r}") from None
    problem = get_problem(args.problem, seed=args.seed)
    ds = problem_regression_study(
        problem,
        sizes,
        args.trials,
        args.seed,
        inference=args.inference,
        n_test=args.test_points,
        progress=not args.quiet,
    )
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    ds.to_netcdf(out)
    plot_regression(ds, out.with_suffix(".png"))
    k = ds.sizes["trial"]
    print(
        f"{problem.name}: d={problem.dim} J={problem.n_components} trials={k} "
        f"inference={args.inference} kernel={ds.attrs['kernel']}"
    )
    print("    n   RMSE decomposed       RMSE entire   entire - decomposed (paired)")
    for n in ds["n_samples"].values:
        d, e = ds.rmse_decomposed.sel(n_samples=n), ds.rmse_entire.sel(n_samples=n)
        diff = e - d
        print(
            f"{n:5d}  {float(d.mean()):9.4g} ± {float(d.std()) / k**0.5:<8.2g}"
            f"{float(e.mean()):9.4g} ± {float(e.std()) / k**0.5:<8.2g}"
            f"{float(diff.mean()):+10.4g} ± {float(diff.std()) / k**0.5:.2g}"
        )
    print(f"results: {out}\nplot:    {out.with_suffix('.png')}")
    return 0


def cmd_perf(args) -> int:
    """``pp-decomp perf``."""
    run_perf(quick=args.quick, out=args.out, cases=tuple(args.case or ("synthetic", "flu")))
    print(f"report: {args.out}")
    return 0
