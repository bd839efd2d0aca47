"""``pp-decomp run`` (one checkpointed run) and ``pp-decomp plot`` (its picture); their
arguments: :mod:`pp_decomp.apps.cli.parsers.run`."""

from __future__ import annotations

from dataclasses import fields
from pathlib import Path

from pp_decomp.apps.plots import plot_run
from pp_decomp.components import Priors
from pp_decomp.kernels import canonical_kernel
from pp_decomp.loop import Optimizer
from pp_decomp.loop.checkpoint import previous, read, stored_problem
from pp_decomp.loop.settings import RunSettings
from pp_decomp.models import get_problem
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
    "input_warping": "--input-warping",
    "output_warp": "--output-warp",
    "components": "--component-kernel",
}


def prior_fields(items: list[str]) -> dict:
    """``NAME=VALUE`` strings as :class:`~pp_decomp.components.Priors` keyword
    arguments (numbers where they parse), each name checked against the fields and
    the whole set by ``Priors`` itself."""
    names = [f.name for f in fields(Priors)]
    kw = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or name not in names:
            raise ValueError(f"--prior must be NAME=VALUE with NAME one of {names}; got {item!r}")
        try:
            kw[name] = float(value)
        except ValueError:
            kw[name] = value
    Priors(**kw)
    return kw


def component_kernels(items: list[str], problem) -> dict | None:
    """``--component-kernel NAME=KERNEL`` strings as the Optimizer's ``components``
    (a kernel by component name; ``None`` for none), each ``NAME`` checked against
    ``problem``'s components and each ``KERNEL`` against the kernels, before any run."""
    if not items:
        return None
    names, out = list(problem.component_names), {}
    for item in items:
        name, sep, kernel = item.partition("=")
        if not sep or name not in names:
            raise ValueError(
                f"--component-kernel must be NAME=KERNEL with NAME one of {names}; got {item!r}"
            )
        if name in out:
            raise ValueError(f"--component-kernel names {name!r} twice ({item!r})")
        try:
            out[name] = canonical_kernel(kernel)
        except ValueError as e:
            raise ValueError(f"--component-kernel {item!r}: {e}") from None
    return out


def _given(args, problem) -> dict:
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
        "input_warping": args.input_warping,
        "output_warp": args.output_warp,
        "priors": Priors(**prior_fields(args.prior)) if args.prior else None,
        "components": component_kernels(args.component_kernel, problem),
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
    a file where a folder should be, or a folder this user cannot write in (its
    nearest existing folder: the writer makes the rest, :func:`made_folder`)."""
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


def made_folder(out: Path) -> Path:
    """``out``, its folder made if missing: called when results are written, after the
    work, so a refused command leaves no empty folder behind."""
    out.parent.mkdir(parents=True, exist_ok=True)
    return out


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
    problem = _problem(args)
    given = _given(args, problem)
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
    _report(problem, opt.strategy.name, ds, out)
    return 0


def _report(problem, strategy: str, ds, out) -> None:
    """Print a run's summary line (evaluations, best, failures, regret) and its criticism."""
    best = ds["objective"].max() if problem.maximize else ds["objective"].min()
    n = ds.sizes["iteration"]
    msg = f"{problem.name}/{strategy}: {n} evaluations, best objective {float(best):.6g}"
    failed = ds.sizes.get("failure", 0)
    if failed:
        msg += f", {failed} failed"
    if "cumulative_regret" in ds:
        msg += (
            f", cumulative regret {float(ds.cumulative_regret[-1]):.4g}, "
            f"simple regret {float(ds.simple_regret[-1]):.4g}"
        )
    criticism = criticism_summary(ds)
    if criticism:
        head = "each GP's criticism at the last step (pp_decomp.components.criticism)"
        msg += f"\n{head}:\n{criticism}"
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
