"""The listing, demo, report, regression-study and performance sub-commands' arguments
(the commands: :mod:`pp_decomp.apps.cli.tools`)."""

from __future__ import annotations

from pp_decomp.choices import STUDY_INFERENCE


def add_parsers(sub) -> None:
    """The listing, demo, regression-study and performance sub-commands."""
    sub.add_parser("problems", help="list the shipped problems")
    sub.add_parser("strategies", help="list the strategies")

    d = sub.add_parser("demo", help="the main job on embedded defaults")
    d.add_argument("--out", default="demo-output", help="folder for results and plots")
    d.add_argument("--quiet", action="store_true", help="no progress bars")

    _add_report_parser(sub)

    r = sub.add_parser("regression", help="decomposed vs entire GP regression study (Wang Fig. 2)")
    r.add_argument("--kernel", default="se", choices=["se", "matern", "matern52", "matern32", "rq"])
    r.add_argument("--components", type=int, default=5, help="J, number of components")
    r.add_argument("--trials", type=int, default=30, help="independent trials")
    r.add_argument("--max-samples", type=int, default=30, help="T, largest training size")
    r.add_argument("--seed", type=int, default=0, help="root seed")
    r.add_argument(
        "--inference",
        default=None,
        choices=STUDY_INFERENCE,
        help="'true': generating kernels (paper; the default); map/nuts: learned "
        "hyperparameters (map is the default with --problem)",
    )
    r.add_argument("--dim", type=int, default=1, help="input dimension")
    r.add_argument("--test-points", type=int, default=200, help="size of the test set")
    r.add_argument("--noise", type=float, default=1e-4, help="component noise sd")
    r.add_argument(
        "--problem",
        default=None,
        help="a shipped problem with a linear decomposition: regress its own components "
        "(then --sizes, --trials, --seed, --inference map|nuts, --test-points apply)",
    )
    r.add_argument("--sizes", default="5,10,20,30,40,50", help="training sizes with --problem")
    r.add_argument("--out", default="regression.nc", help="results file (and .png)")
    r.add_argument("--quiet", action="store_true", help="no progress bar")

    pf = sub.add_parser("perf", help="speed of the full-Bayes loop against its references")
    pf.add_argument("--quick", action="store_true", help="small sizes, a few minutes")
    pf.add_argument("--out", default="perf.json", help="report file (JSON)")
    pf.add_argument(
        "--case",
        action="append",
        choices=["synthetic", "flu", "alpine2-network"],
        help="run only this case (repeatable; default: synthetic and flu)",
    )


def _add_report_parser(sub) -> None:
    """``pp-decomp report RUN [--out DIR] [--problem P] [--components MOD:ATTR]``."""
    rp = sub.add_parser("report", help="pictures and a short report of a run's file")
    rp.add_argument("run", help="a run's results file (its checkpoint)")
    rp.add_argument("--out", default=None, help="folder for the pictures (default RUN-report)")
    rp.add_argument(
        "--problem",
        default=None,
        help="the run's problem: a shipped one or package.module:factory (found in the "
        "current folder too); default the file's shipped problem, else the file alone",
    )
    rp.add_argument(
        "--components",
        default=None,
        help="package.module:attr, a dict or list of the run's own component models "
        "(ComponentGP.from_pymc ones)",
    )
