"""The ``calibration`` sub-command's arguments
(the command: :mod:`pp_decomp.apps.cli.calibration`)."""

from __future__ import annotations

from pp_decomp.apps.cli.model_flags import (
    add_component_kernel_flag,
    add_copula_flag,
    add_input_warping_flag,
    add_kernel_flag,
    add_outcome_transform_flag,
    add_output_warp_flag,
    add_prior_flag,
)
from pp_decomp.choices import INFERENCE_METHODS


def add_parsers(sub) -> None:
    """The ``calibration`` sub-command."""
    c = sub.add_parser(
        "calibration",
        help="coverage of the true objective and components by the posterior intervals",
        description="Run a strategy on a problem over several seeds and report, per nominal "
        "level, how often the posterior's central intervals and upper bounds cover the true "
        "objective and each true component (and how often the bound the strategy used does). "
        "Below the table, where the 95% central intervals miss: by side, by distance to the "
        "nearest observation (thirds) and by step. "
        "Writes FILE.nc, FILE.png (a reliability diagram), FILE.md (the tables) and prints them.",
    )
    c.add_argument("--problem", required=True, help="a shipped problem or package.module:factory")
    c.add_argument("--strategy", default=None, help="default: the problem's default strategy")
    c.add_argument("--inference", default="map", type=str.lower, choices=INFERENCE_METHODS)
    c.add_argument("--seeds", type=int, default=10, help="runs, one instance per seed")
    c.add_argument(
        "--first-seed",
        type=int,
        default=0,
        help="the first run's seed: the runs take seeds FIRST_SEED to FIRST_SEED + SEEDS - 1 "
        "(instances never used to choose a setting)",
    )
    c.add_argument("--iterations", type=int, default=30, help="evaluations per run")
    c.add_argument("--init", type=int, default=5, help="initial design size")
    c.add_argument("--every", type=int, default=5, help="score every this many model steps")
    c.add_argument("--points", type=int, default=256, help="inputs scored per step")
    add_kernel_flag(c)
    add_component_kernel_flag(c)
    add_prior_flag(c)
    add_outcome_transform_flag(c)
    add_copula_flag(c)
    add_input_warping_flag(c)
    add_output_warp_flag(c)
    c.add_argument(
        "--correlated",
        action="store_true",
        help="correlated components (one coregionalised GP) instead of independent GPs",
    )
    c.add_argument("--out", default="calibration.nc", help="results file (and .png)")
