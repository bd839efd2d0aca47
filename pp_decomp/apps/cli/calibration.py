"""``pp-decomp calibration``: how well a strategy's posterior covers the truth; its
arguments: :mod:`pp_decomp.apps.cli.parsers.calibration`."""

from __future__ import annotations

from pathlib import Path

from pp_decomp.apps.calibration import calibration_run, reliability
from pp_decomp.apps.cli.run import check_out_path, component_kernels, made_folder, prior_fields
from pp_decomp.apps.coverage_diagnosis import diagnosis, format_diagnosis
from pp_decomp.apps.plots import plot_reliability
from pp_decomp.components import Priors
from pp_decomp.models import get_problem
from pp_decomp.validate import check_positive_int


def cmd_calibration(args) -> int:
    """``pp-decomp calibration``: the runs, the table, the netCDF file and the diagram."""
    check_out_path(Path(args.out), "--out")
    seeds = check_positive_int(args.seeds, "--seeds")
    start = check_positive_int(args.first_seed, "--first-seed", minimum=0)
    priors = Priors(**prior_fields(args.prior))
    first = get_problem(args.problem, seed=0)  # a typo fails here, before any run
    components = component_kernels(args.component_kernel, first)
    ds = calibration_run(
        lambda s: get_problem(args.problem, seed=s),
        args.strategy,
        seeds=range(start, start + seeds),
        iterations=args.iterations,
        every=args.every,
        n_points=args.points,
        inference=args.inference,
        n_init=args.init,
        priors=priors,
        **({"correlated": True} if args.correlated else {}),
        **({"kernel": args.kernel} if args.kernel else {}),
        **({"components": components} if components else {}),
        **({"outcome_transform": args.outcome_transform} if args.outcome_transform else {}),
        **({"copula": args.copula} if args.copula is not None else {}),
        **({"input_warping": True} if args.input_warping else {}),
        **({"output_warp": args.output_warp} if args.output_warp else {}),
    )
    out = Path(args.out)
    ds.to_netcdf(made_folder(out))
    rel = reliability(ds)
    plot_reliability(rel, out.with_suffix(".png"))
    table = format_table(rel) + "\n\n" + format_diagnosis(diagnosis(ds, 0.95))
    out.with_suffix(".md").write_text(f"Command: `{args.command_line}`\n\n{table}\n")
    print(table)
    print(f"wrote {out} and its .png and .md")
    return 0


def format_table(rel) -> str:
    """Markdown table of a :func:`~pp_decomp.apps.calibration.reliability` summary."""
    names = [str(n) for n in rel["component"].values]
    head = "| nominal | objective, central | objective, upper | " + " | ".join(names) + " |"
    lines = [head, "|" + " --- |" * (3 + len(names))]
    for i, q in enumerate(rel["nominal"].values):
        cells = [
            f"{float(rel['objective_coverage'][i, b]):.3f} ± {float(rel['objective_se'][i, b]):.3f}"
            for b in range(2)
        ]
        cells += [f"{float(rel['component_coverage'][j, i, 0]):.3f}" for j in range(len(names))]
        lines.append(f"| {q:.2f} | " + " | ".join(cells) + " |")
    for var, label in (
        ("loo_coverage", "LOO coverage, 0.95"),
        ("loo_pit_distance", "LOO-PIT distance"),
    ):
        cells = [f"{float(v):.3f}" for v in rel[var].values]
        lines.append(f"| {label} (own observations) | | | " + " | ".join(cells) + " |")
    lines.append(
        f"\nUCB bound used (averaged over draws): coverage {float(rel['ucb_used']):.3f} at nominal "
        f"{float(rel['ucb_used_nominal']):.4f}; {rel.attrs.get('scored_steps')} scored steps."
    )
    return "\n".join(lines)
