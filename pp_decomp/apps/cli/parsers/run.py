"""The ``run`` and ``plot`` sub-commands' arguments
(the commands: :mod:`pp_decomp.apps.cli.run`)."""

from __future__ import annotations

import argparse

from pp_decomp.apps.cli.model_flags import (
    add_component_kernel_flag,
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
        help="pp-decomp strategies lists them; default network-ucb on a function network, "
        "d-gpucb for a linear g, else d-gpucb-mc-min",
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
        type=str.lower,
        choices=INFERENCE_METHODS,
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
    add_kernel_flag(u)
    add_component_kernel_flag(u)
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
    add_input_warping_flag(u)
    add_output_warp_flag(u)


def _add_plot_parser(sub) -> None:
    pl = sub.add_parser("plot", help="plot a run (objective, regret, time per step)")
    pl.add_argument("file", help="a run's results file")
    pl.add_argument("--out", default=None, help="picture to write (default FILE.png)")
    pl.add_argument("--overwrite", action="store_true", help="replace an existing picture")
