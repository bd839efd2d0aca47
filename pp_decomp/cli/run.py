"""``pp-decomp run`` (one checkpointed run) and ``pp-decomp plot`` (its picture)."""

from __future__ import annotations

import argparse
from pathlib import Path

from pp_decomp.cli.model_flags import (
    add_copula_flag,
    add_outcome_transform_flag,
    add_prior_flag,
    add_warm_start_flag,
    prior_fields,
)
from pp_decomp.components import Priors
from pp_decomp.loop import Optimizer
from pp_decomp.loop.checkpoint import previous, read
from pp_decomp.loop.resume import stored_problem
from pp_decomp.loop.settings import RunSettings
from pp_decomp.models import get_problem
from pp_decomp.plots import plot_run
from pp_decomp.results import criticism_summary

# run flags that determine the run, as the Optimizer calls them
_FLAGS = {
    "strategy": "--strategy",
    "n_init": "--init",
    "inference": "--inference",
    "refit_every": "--refit-every",
    "warm_start": "--warm-start",
    "kernel": "--kernel",
    "priors": "--prior",
    "seed": "--seed",
    "fast": "--fast",
    "correlated": "--correlated",
    "outcome_transform": "--outcome-transform",
    "copula": "--copula",
}


def add_parsers(sub) -> None:
    """The ``run`` and ``plot`` sub-commands."""
    u = sub.add_parser(
        "run",
        help="run one strategy on one problem (ask/tell loop, checkpointed)",
        description="Run one strategy on one problem. The --out file is the checkpoint, "
        "rewritten atomically after every evaluation; --resume continues a killed run "
        "with exactly the choices it would have made.",
    )
    u.add_argument(
        "--problem",
        required=True,
        help="a shipped problem (pp-decomp problems) or your own, package.module:factory "
        "for a function returning a pp_decomp.Problem",
    )
    u.add_argument(
        "--problem-seed",
        type=int,
        default=None,
        help="instance of a random problem (synthetic functions, station split ...); "
        "default: --seed, so that another seed is another instance",
    )
    u.add_argument(
        "--strategy",
        default=None,
        help="pp-decomp strategies lists them; default d-gpucb for a linear g, else d-gpucb-mc-min",
    )
    u.add_argument(
        "--iterations",
        type=int,
        default=50,
        help="total evaluations, the initial design included (default 50)",
    )
    u.add_argument("--init", type=int, default=None, help="initial design size (default 5)")
    _add_model_flags(u)
    u.add_argument("--out", required=True, help="results netCDF file, also the checkpoint")
    mode = u.add_mutually_exclusive_group()
    mode.add_argument("--resume", action="store_true", help="continue the run in --out")
    mode.add_argument(
        "--overwrite",
        action="store_true",
        help="replace the run in --out (kept as .NAME.bak until the new run's first evaluation)",
    )
    _add_error_flags(u)
    _add_worker_flags(u)
    u.add_argument("--plot", action="store_true", help="also write a plot next to --out")
    u.add_argument("--quiet", action="store_true", help="no progress bar")
    u.set_defaults(func=cmd_run)
    _add_plot_parser(sub)


def _add_error_flags(u) -> None:
    u.add_argument(
        "--on-error",
        default="raise",
        choices=["raise", "record", "retry"],
        help="a failed evaluation stops the run (default), is recorded and skipped, or is "
        "retried twice before it is recorded",
    )
    u.add_argument(
        "--max-failures-in-a-row",
        type=int,
        default=25,
        help="with --on-error record/retry, stop the run (all kept) after this many "
        "failed evaluations in a row (default 25)",
    )


def _add_worker_flags(u) -> None:
    u.add_argument(
        "--workers",
        type=int,
        default=None,
        help="keep up to this many evaluations in flight on an embedded Dask LocalCluster, "
        "asking a new input as each result arrives; the batch grows to it by one per "
        "model-chosen result after the initial design (default: one at a time)",
    )
    u.add_argument(
        "--scheduler",
        default=None,
        help="address of an existing Dask scheduler to evaluate on (with --workers: "
        "how many in flight; default: one per worker)",
    )


def _add_model_flags(u) -> None:
    u.add_argument(
        "--inference",
        default=None,
        choices=["map", "nuts", "fixed"],
        help="hyperparameters by MAP (default) or NUTS, or 'fixed': the problem's known "
        "kernels, as in Wang et al.'s experiments",
    )
    u.add_argument(
        "--fast",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="full-Bayes fast path (the default with --inference nuts where the strategy "
        "supports it; background refits, reweighted draws)",
    )
    u.add_argument(
        "--refit-every",
        type=int,
        default=None,
        help="refit hyperparameters every N steps (default 1)",
    )
    add_warm_start_flag(u)
    u.add_argument("--kernel", default=None, help="se (default), matern52, matern32 or rq")
    add_prior_flag(u)
    u.add_argument("--seed", type=int, default=None, help="seed of every random choice (default 0)")
    u.add_argument(
        "--correlated",
        action="store_true",
        default=None,
        help="the components as one GP with correlated outputs (decomposed strategies)",
    )
    add_outcome_transform_flag(u)
    add_copula_flag(u)


def _add_plot_parser(sub) -> None:
    pl = sub.add_parser("plot", help="plot a run (objective, regret, time per step)")
    pl.add_argument("file", help="a run's results file")
    pl.add_argument("--out", default=None, help="picture to write (default FILE.png)")
    pl.add_argument("--overwrite", action="store_true", help="replace an existing picture")
    pl.set_defaults(func=cmd_plot)


def _given(args) -> dict:
    """The run-determining flags the user typed, as Optimizer keyword arguments."""
    kw = {
        "strategy": args.strategy,
        "n_init": args.init,
        "inference": args.inference,
        "refit_every": args.refit_every,
        "warm_start": args.warm_start,
        "kernel": args.kernel,
        "seed": args.seed,
        "fast": args.fast,
        "correlated": args.correlated,
        "outcome_transform": args.outcome_transform,
        "copula": args.copula,
        "priors": Priors(**prior_fields(args.prior)) if args.prior else None,
    }
    return {k: v for k, v in kw.items() if v is not None}


def _check_resume_flags(out: Path, problem, given: dict, problem_seed) -> None:
    """Refuse flags that contradict the run stored in ``out``, naming both values."""
    import json

    results, _ = read(out)
    stored = json.loads(results.attrs["settings"])
    fp = stored.get("problem_fingerprint", {})
    held = stored_problem(stored)
    if held is not None and held != problem.name:
        raise ValueError(
            f"--resume: {out} holds a run of problem {held!r}; --problem {problem.name!r} was asked"
        )
    if problem_seed is not None and fp.get("instance") not in (None, problem_seed):
        raise ValueError(
            f"--problem-seed {problem_seed} differs from the run in {out} "
            f"(problem instance {fp['instance']})"
        )
    want = RunSettings.build(problem, **RunSettings.kwargs_from_dict(stored)).to_dict()
    asked = RunSettings.build(
        problem, **{**RunSettings.kwargs_from_dict(stored), **given}
    ).to_dict()
    for kw in given:
        if asked[kw] != want[kw]:
            a, w = given[kw], want[kw]
            if kw == "priors":  # name the fields that differ, not two whole Priors
                names = [k for k in w if asked[kw][k] != w[k]]
                a, w = ({k: d[k] for k in names} for d in (asked[kw], want[kw]))
            raise ValueError(
                f"{_FLAGS[kw]} {a} differs from the run in {out} ({w}); "
                "drop the flag to continue that run, or give another --out"
            )


def check_out_path(out: Path, flag: str) -> None:
    """Refuse an output path that cannot be written, naming it, before any work:
    a file where a folder should be, or a folder this user cannot write in."""
    parent = out.parent
    while not parent.exists() and parent != parent.parent:
        parent = parent.parent
    if out.exists() and out.is_dir():
        raise ValueError(f"{flag} {out} is a folder; give a file name")
    if not parent.is_dir():
        raise ValueError(f"{flag} {out}: {parent} is a file, not a folder")
    import tempfile

    try:  # what the checkpoint will do there; os.access says yes to root everywhere
        with tempfile.NamedTemporaryFile(dir=parent, prefix=".pp-decomp-probe"):
            pass
    except OSError as err:
        raise ValueError(f"{flag} {out}: cannot write in {parent} ({err.strerror})") from None


def _problem(args):
    seed = args.problem_seed
    if seed is None:
        seed = args.seed if args.seed is not None else 0
    return get_problem(args.problem, seed=seed)


def cmd_run(args) -> int:
    """``pp-decomp run``: every argument checked before the file is touched."""
    out = Path(args.out)
    check_out_path(out, "--out")
    if args.resume and not out.exists():
        # the preemptible job's pattern: always --resume; a first start finds no file
        if not previous(out).exists():  # else the Optimizer refuses, naming that file
            print(f"--resume: {out} does not exist yet: starting a run there")
        args.resume = False
    if out.exists() and not (args.resume or args.overwrite):
        raise ValueError(f"--out {out} exists; pass --resume to continue it or --overwrite")
    problem, given = _problem(args), _given(args)
    if args.resume:
        problem_seed = args.problem_seed if args.problem_seed is not None else args.seed
        _check_resume_flags(out, problem, given, problem_seed)
        opt = Optimizer.resume(out, problem)
        print(f"resuming {out}: {opt.n} evaluation(s) kept")
    else:
        settings = RunSettings.build(problem, **given)  # every flag checked first
        if args.iterations <= settings.n_init:
            raise ValueError(
                f"--iterations {args.iterations} must exceed --init {settings.n_init}: "
                "the evaluations after the initial design are the optimisation"
            )
        opt = Optimizer(problem, checkpoint=out, overwrite=args.overwrite, **given)
    with opt:
        ds = opt.run(
            args.iterations,
            progress=not args.quiet,
            on_error=args.on_error,
            max_failures_in_a_row=args.max_failures_in_a_row,
            workers=args.workers,
            scheduler=args.scheduler,
        )
    if args.plot:
        plot_run(ds, out.with_suffix(".png"))
    _report(problem, opt, ds, out)
    return 0


def _report(problem, opt, ds, out) -> None:
    best = ds["objective"].max() if problem.maximize else ds["objective"].min()
    msg = (
        f"{problem.name}/{opt.strategy.name}: {opt.n} evaluations, best objective {float(best):.6g}"
    )
    if len(opt.failures):
        msg += f", {len(opt.failures)} failed"
    if "cumulative_regret" in ds:
        msg += (
            f", cumulative regret {float(ds.cumulative_regret[-1]):.4g}, "
            f"simple regret {float(ds.simple_regret[-1]):.4g}"
        )
    criticism = criticism_summary(ds)
    if criticism:
        msg += "\neach GP's criticism at the last step (pp_decomp.criticism):\n" + criticism
    print(msg + f"\nresults: {out}")


def cmd_plot(args) -> int:
    """``pp-decomp plot``: never replaces a picture unless asked."""
    import xarray as xr

    path = Path(args.file)
    if not path.is_file():
        raise ValueError(f"file {path} does not exist")
    out = Path(args.out) if args.out else path.with_suffix(".png")
    if out.exists() and not args.overwrite:
        raise ValueError(f"{out} exists; pass --overwrite to replace it or --out for another file")
    try:
        with xr.open_dataset(path, engine="h5netcdf") as ds:
            ds = ds.load()
    except Exception as err:  # a damaged file makes HDF5 raise almost anything
        raise ValueError(f"{path} is not a pp_decomp results file ({err})") from None
    if "objective" not in ds:
        raise ValueError(f"{path} is not a pp_decomp results file (no 'objective' variable)")
    plot_run(ds, out)
    print(f"plot: {out}")
    return 0
