"""Command-line interface: ``pp-decomp SUBCOMMAND ...``.

The parser is built from :mod:`pp_decomp.apps.cli.parsers`, which load neither numpy nor
PyMC, so ``pp-decomp --help`` (and each sub-command's) is quick. :data:`HANDLERS`
names each sub-command's function as ``"module:function"``; :func:`main` imports
that module when the command runs, by name, as ``pp_decomp`` imports its public names
(an import inside a function would hide the dependency from the architecture
test; a name in a table does not pretend otherwise). ``import pp_decomp``, which
comes first, pins the BLAS threads before numpy loads.
"""

from __future__ import annotations

import argparse
import shlex
import sys
from collections.abc import Callable
from importlib import import_module

# aliased: the command modules of the same names become attributes of this package
from pp_decomp.apps.cli.parsers import bench as bench_args
from pp_decomp.apps.cli.parsers import calibration as calibration_args
from pp_decomp.apps.cli.parsers import run as run_args
from pp_decomp.apps.cli.parsers import study as study_args
from pp_decomp.apps.cli.parsers import tools as tools_args

# the function each sub-command runs, its module imported only then (numpy, PyMC ...)
HANDLERS = {
    "run": "pp_decomp.apps.cli.run:cmd_run",
    "plot": "pp_decomp.apps.cli.run:cmd_plot",
    "bench": "pp_decomp.apps.cli.bench:cmd_bench",
    "summary": "pp_decomp.apps.cli.bench:cmd_summary",
    "problems": "pp_decomp.apps.cli.tools:cmd_problems",
    "strategies": "pp_decomp.apps.cli.tools:cmd_strategies",
    "demo": "pp_decomp.apps.cli.tools:cmd_demo",
    "report": "pp_decomp.apps.cli.tools:cmd_report",
    "regression": "pp_decomp.apps.cli.tools:cmd_regression",
    "perf": "pp_decomp.apps.cli.tools:cmd_perf",
    "calibration": "pp_decomp.apps.cli.calibration:cmd_calibration",
    "study": "pp_decomp.apps.cli.study:cmd_study",
}


def build_parser() -> argparse.ArgumentParser:
    """The ``pp-decomp`` argument parser with one sub-command per job."""
    p = argparse.ArgumentParser(
        prog="pp-decomp",
        description="Bayesian optimisation with decomposed feedback, on PyMC.",
    )
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")
    run_args.add_parsers(sub)
    bench_args.add_parsers(sub)
    tools_args.add_parsers(sub)
    calibration_args.add_parsers(sub)
    study_args.add_parsers(sub)
    return p


def handler(args: argparse.Namespace) -> Callable[[argparse.Namespace], int]:
    """The function that runs the parsed sub-command, its module imported now."""
    module, _, name = HANDLERS[args.command].partition(":")
    return getattr(import_module(module), name)


def interrupted(args: argparse.Namespace, argv: list[str]) -> str:
    """What Ctrl-C leaves, and the command that continues it: for ``run``, the
    same command with ``--resume`` (and without ``--overwrite``, which would start
    afresh); for ``bench``, the same command again."""
    if args.command == "run":
        again = [a for a in argv if a != "--overwrite"]
        again += [] if "--resume" in again else ["--resume"]
        return (
            f"pp-decomp: interrupted; every evaluation told so far is in the checkpoint "
            f"{args.out}; continue the run with:\n  pp-decomp {shlex.join(again)}"
        )
    if args.command == "bench":
        return (
            f"pp-decomp: interrupted; the finished runs are in {args.out}; the same command "
            f"skips them and resumes the others:\n  pp-decomp {shlex.join(argv)}"
        )
    return "pp-decomp: interrupted"


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``pp-decomp`` command."""
    argv = sys.argv[1:] if argv is None else list(argv)
    args = build_parser().parse_args(argv)
    args.command_line = "pp-decomp " + shlex.join(argv)  # as given, also when called from Python
    try:
        return handler(args)(args)
    except (ValueError, TypeError, ConnectionError) as err:
        print(f"pp-decomp: error: {err}", file=sys.stderr)
        return 2
    except OSError as err:  # a file or folder the system refused: said, not traced
        print(f"pp-decomp: error: {err}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(interrupted(args, argv), file=sys.stderr)
        return 130
