"""The model flags that ``run``, ``bench`` and ``calibration`` share: ``--kernel``,
``--component-kernel NAME=KERNEL`` (``run`` and ``calibration``), ``--prior NAME=VALUE``,
``--outcome-transform``, ``--copula``/``--no-copula``, ``--input-warping`` and
``--warm-start``. Arguments only: the parser loads no numpy (``--help`` stays quick);
:func:`pp_decomp.apps.cli.run.prior_fields` reads ``--prior``."""

from __future__ import annotations

from argparse import BooleanOptionalAction

from pp_decomp.choices import (
    DEFAULT_KERNEL,
    KERNEL_ALIASES,
    KERNELS,
    OUTCOME_TRANSFORMS,
    OUTPUT_WARPS,
)


def add_kernel_flag(parser) -> None:
    """``--kernel``, one of the kernels or their aliases (default: the Optimizer's,
    named from the constant the run settings default to, so the help cannot drift)."""
    parser.add_argument(
        "--kernel",
        default=None,
        type=str.lower,
        choices=[*KERNELS, *KERNEL_ALIASES],
        metavar="{" + ",".join(KERNELS) + "}",
        help=f"the GPs' kernel (default {DEFAULT_KERNEL})",
    )


def add_component_kernel_flag(parser) -> None:
    """``--component-kernel NAME=KERNEL``, repeatable: one component's (or network
    node's) own kernel, the Optimizer's ``components={NAME: KERNEL}``;
    :func:`pp_decomp.apps.cli.run.component_kernels` reads it."""
    parser.add_argument(
        "--component-kernel",
        action="append",
        default=[],
        metavar="NAME=KERNEL",
        help="one component's or network node's own kernel, the others on --kernel, "
        "e.g. sick_0-19=matern52 (repeatable)",
    )


def add_outcome_transform_flag(parser) -> None:
    """``--outcome-transform``, what the component GPs regress (default: y itself)."""
    parser.add_argument(
        "--outcome-transform",
        default=None,
        choices=list(OUTCOME_TRANSFORMS),
        help="the component GPs (or a network's node GPs) regress log y_j and g (or the "
        "node's children) sees exp (positive components spanning orders of magnitude; "
        "decomposed and network strategies; default none)",
    )


def add_copula_flag(parser) -> None:
    """``--copula`` / ``--no-copula``: the independent component GPs' errors
    correlated by a Gaussian copula (default: wherever it applies)."""
    parser.add_argument(
        "--copula",
        action=BooleanOptionalAction,
        default=None,
        help="correlate the component GPs' posterior errors by a Gaussian copula fitted "
        "to their whitened residuals (default: on for the joint bounds of decomposed "
        "strategies with fitted kernels and at least 2 components; off for a network's "
        "nodes, which --copula couples)",
    )


def add_input_warping_flag(parser) -> None:
    """``--input-warping``: the GPs' kernel on Kumaraswamy-warped inputs."""
    parser.add_argument(
        "--input-warping",
        action="store_true",
        default=None,
        help="the GPs' kernel on Kumaraswamy-warped inputs, two shapes per input inferred "
        "with the other hyperparameters (K.Warped; component and composed GPs, and a network "
        "node's own inputs)",
    )


def add_output_warp_flag(parser) -> None:
    """``--output-warp``: a learned output warp of every component GP."""
    parser.add_argument(
        "--output-warp",
        choices=OUTPUT_WARPS,
        default=None,
        help="a learned monotone warp of every component GP's outputs, inferred with its "
        "hyperparameters (ComponentGP(warp=...); strategies that sample the components "
        "through g: d-gpucb-mc, d-gpucb-mc-min, d-ei, d-pi, d-thompson)",
    )


def add_warm_start_flag(parser) -> None:
    """``--warm-start``: MAP refits from the last fit's mode, one start."""
    parser.add_argument(
        "--warm-start",
        action="store_true",
        default=None,
        help="start each MAP refit at the last fit's mode, one L-BFGS-B search instead "
        "of three afresh (about 5x faster fits; component and composed GPs)",
    )


def add_prior_flag(parser) -> None:
    """``--prior NAME=VALUE``, repeatable."""
    parser.add_argument(
        "--prior",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="a Priors field other than its default, e.g. ls_family=inverse-gamma (repeatable)",
    )
