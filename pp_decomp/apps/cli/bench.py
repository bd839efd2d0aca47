"""``pp-decomp bench`` (many runs, locally or on Dask) and ``pp-decomp summary``; their
arguments: :mod:`pp_decomp.apps.cli.parsers.bench`."""

from __future__ import annotations

import json
from pathlib import Path

from pp_decomp.apps.bench import BenchSpec, parse_list, preset, run_bench, summarize
from pp_decomp.apps.bench.presets import PRESETS
from pp_decomp.apps.cli.run import check_out_path, prior_fields


def parse_settings(value: str, flag: str) -> dict:
    """``KEY=VALUE,...`` as a dict; values read as JSON where they parse (numbers,
    ``true``), as strings otherwise."""
    out = {}
    for item in [v.strip() for v in value.split(",") if v.strip()]:
        key, sep, raw = item.partition("=")
        if not sep or not key.strip():
            raise ValueError(f"{flag} takes KEY=VALUE pairs separated by commas; got {item!r}")
        try:
            out[key.strip()] = json.loads(raw)
        except json.JSONDecodeError:
            out[key.strip()] = raw.strip()
    return out


def cmd_bench(args) -> int:
    """``pp-decomp bench``: the spec and the cluster checked before any run starts."""
    if args.workers is not None and args.workers < 1:
        raise ValueError(f"--workers must be >= 1; got {args.workers}")
    if args.workers is not None and args.scheduler is not None:
        raise ValueError("give --workers (an embedded cluster) or --scheduler, not both")
    overrides = dict(
        problems=parse_list(args.problems),
        strategies=parse_list(args.strategies),
        trials=args.trials,
        iterations=args.iterations,
        n_init=args.init,
        inference=args.inference,
        root_seed=args.seed,
        correlated=args.correlated or None,
        kernel=args.kernel,
        priors=prior_fields(args.prior) or None,
        outcome_transform=args.outcome_transform,
        copula=args.copula,
        warm_start=args.warm_start,
        input_warping=args.input_warping,
        output_warp=args.output_warp,
    )
    if args.additive is not None:
        base = PRESETS[args.preset].get("additive", {}) if args.preset else {}
        overrides["additive"] = {**base, **parse_settings(args.additive, "--additive")}

    if Path(args.out).is_file():
        raise ValueError(f"--out {args.out} is a file; a benchmark writes a folder")
    check_out_path(Path(args.out) / "bench.nc", "--out")
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


def cmd_summary(args) -> int:
    """``pp-decomp summary``: the report rewritten from ``bench.nc``."""
    print(summarize(args.out))
    print(f"rewrote {args.out}/summary.md and {args.out}/regret.png from {args.out}/bench.nc")
    return 0
