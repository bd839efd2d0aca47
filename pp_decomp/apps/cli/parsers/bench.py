"""The ``bench`` and ``summary`` sub-commands' arguments (the commands:
:mod:`pp_decomp.apps.cli.bench`)."""

from __future__ import annotations

from pp_decomp.apps.bench.presets import PRESET_NAMES
from pp_decomp.apps.cli.model_flags import (
    add_copula_flag,
    add_input_warping_flag,
    add_kernel_flag,
    add_outcome_transform_flag,
    add_output_warp_flag,
    add_prior_flag,
    add_warm_start_flag,
)
from pp_decomp.choices import INFERENCE_METHODS


def add_parsers(sub) -> None:
    """The ``bench`` and ``summary`` sub-commands."""
    b = sub.add_parser(
        "bench",
        help="strategies x problems x trials, locally or on Dask",
        description="Run every (problem, strategy, trial) of a benchmark; rerunning the same "
        "command skips finished runs and resumes interrupted ones.",
    )
    b.add_argument("--preset", choices=PRESET_NAMES, default=None, help="a paper's benchmark")
    b.add_argument("--quick", action="store_true", help="the preset's few-minute size")
    b.add_argument(
        "--problems",
        default=None,
        help="comma-separated problem names (or package.module:factory of your own)",
    )
    b.add_argument("--strategies", default=None, help="comma-separated strategy names")
    b.add_argument("--trials", type=int, default=None, help="trials (problem instances x seeds)")
    b.add_argument("--iterations", type=int, default=None, help="evaluations per run")
    b.add_argument("--init", type=int, default=None, help="initial design size")
    b.add_argument("--inference", default=None, type=str.lower, choices=INFERENCE_METHODS)
    b.add_argument("--seed", type=int, default=None, help="root seed of every task")
    b.add_argument(
        "--additive",
        default=None,
        help="AdditiveSettings of the additive strategies as KEY=VALUE,... "
        "(e.g. decomposition_search=swap), over the preset's",
    )
    b.add_argument(
        "--correlated",
        action="store_true",
        help="correlated components (one coregionalised GP) for the decomposed strategies",
    )
    add_kernel_flag(b)
    add_prior_flag(b)
    add_outcome_transform_flag(b)
    add_copula_flag(b)
    add_warm_start_flag(b)
    add_input_warping_flag(b)
    add_output_warp_flag(b)
    b.add_argument("--out", required=True, help="folder of runs, bench.nc, summary.md, plots")
    b.add_argument("--scheduler", default=None, help="address of an existing Dask scheduler")
    b.add_argument("--workers", type=int, default=None, help="embedded Dask LocalCluster size")
    b.add_argument("--quiet", action="store_true", help="no progress bar")

    sm = sub.add_parser("summary", help="rewrite a benchmark's table and plot from its bench.nc")
    sm.add_argument("out", help="the benchmark folder (its --out)")
