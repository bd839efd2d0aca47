"""``pp-decomp study``: studies across inferences; arguments:
:mod:`pp_decomp.apps.cli.parsers.study`."""

from __future__ import annotations

from pathlib import Path

from pp_decomp.apps.cli.run import check_out_path, made_folder
from pp_decomp.apps.hyper_study import hyper_study
from pp_decomp.apps.hyper_summary import plot_study, study_tables
from pp_decomp.models import get_problem
from pp_decomp.validate import check_positive_int


def cmd_study(args) -> int:
    """``pp-decomp study hyper``: the runs, the tables, the netCDF file and the pictures."""
    out = Path(args.out)
    check_out_path(out, "--out")
    seeds = check_positive_int(args.seeds, "--seeds")
    get_problem(args.problem, seed=0)  # a typo fails here, before any run
    ds = hyper_study(
        lambda s: get_problem(args.problem, seed=s),
        args.strategy,
        seeds=range(seeds),
        iterations=args.iterations,
        n_init=args.init,
        inferences=[i.strip() for i in args.inferences.split(",") if i.strip()],
        n_points=args.points,
        fixed_design=args.fixed_design,
        seed_dir=out.with_suffix(".seeds"),
        **({"kernel": args.kernel} if args.kernel else {}),
    )
    ds.to_netcdf(made_folder(out))
    plot_study(ds, out.with_suffix(".png"))
    tables = study_tables(ds)
    out.with_suffix(".md").write_text(f"Command: `{args.command_line}`\n\n{tables}\n")
    print(tables)
    print(f"wrote {out} and its .md and .png")
    return 0
