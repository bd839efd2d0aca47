"""Command-line interface: ``pp-decomp SUBCOMMAND ...``.

Every sub-command's module is imported with the parser (pp_decomp imports stay at
the top of their modules); heavy optional dependencies (Dask, BoTorch,
matplotlib) load only when a sub-command needs them. ``import pp_decomp``, which
comes first, pins the BLAS threads before numpy loads.
"""

from __future__ import annotations

import argparse
import shlex
import sys

from pp_decomp.cli import bench, calibration, run, tools


def build_parser() -> argparse.ArgumentParser:
    """The ``pp-decomp`` argument parser with one sub-command per job."""
    p = argparse.ArgumentParser(
        prog="pp-decomp",
        description="Bayesian optimisation with decomposed feedback, on PyMC.",
    )
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")
    run.add_parsers(sub)
    bench.add_parsers(sub)
    tools.add_parsers(sub)
    calibration.add_parsers(sub)
    return p


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
    try:
        return args.func(args)
    except (ValueError, TypeError, ConnectionError) as err:
        print(f"pp-decomp: error: {err}", file=sys.stderr)
        return 2
    except OSError as err:  # a file or folder the system refused: said, not traced
        print(f"pp-decomp: error: {err}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(interrupted(args, argv), file=sys.stderr)
        return 130
