"""The ``study`` sub-command's arguments (the command: :mod:`pp_decomp.apps.cli.study`)."""

from __future__ import annotations

from pp_decomp.apps.cli.model_flags import add_kernel_flag


def add_parsers(sub) -> None:
    """``study hyper``: where full Bayes changes the decision."""
    s = sub.add_parser(
        "study",
        help="studies across inferences (hyper: when the hyperparameter posterior changes "
        "the decision)",
        description="Studies of how inference choices reach decisions.",
    )
    kinds = s.add_subparsers(dest="study", required=True, metavar="STUDY")
    h = kinds.add_parser(
        "hyper",
        help="full Bayes against MAP and fixed kernels: paired runs and counterfactual choices",
        description="Run a strategy on a problem under fixed kernels, MAP and full Bayes "
        "(paired by seed), and at every model-based step of the full-Bayes run ask what MAP "
        "and the fixed kernels would choose from the same history: disagreement, the "
        "acquisition each gives the other's choice, the choices' regret, each bound's "
        "coverage and the hyperparameters' posterior width. Writes FILE.nc, FILE.md (the "
        "tables), FILE.png (the pictures) and prints the tables; each finished seed is kept "
        "in FILE.seeds/, so the same command run again resumes.",
    )
    h.add_argument("--problem", required=True, help="a shipped problem or package.module:factory")
    h.add_argument("--strategy", default=None, help="default: the problem's default strategy")
    h.add_argument("--seeds", type=int, default=5, help="instances, one per seed")
    h.add_argument("--iterations", type=int, default=30, help="evaluations per run")
    h.add_argument("--init", type=int, default=5, help="initial design size")
    h.add_argument(
        "--inferences",
        default="fixed,map,nuts",
        help="comma-separated subset of fixed,map,nuts holding nuts (default all three)",
    )
    h.add_argument("--points", type=int, default=128, help="inputs scoring each bound")
    h.add_argument(
        "--fixed-design",
        type=int,
        default=200,
        help="evaluations fitting the fixed kernels where the problem has no true ones",
    )
    add_kernel_flag(h)
    h.add_argument("--out", default="hyper-study.nc", help="results file (and .md, .png)")
