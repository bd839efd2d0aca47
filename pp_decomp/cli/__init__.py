"""Command-line interface: ``pp-decomp SUBCOMMAND ...``.

Importing this package loads nothing heavy, so ``pp-decomp --help`` is quick;
each sub-command imports what it needs when it runs.
"""

from __future__ import annotations

import argparse
import sys

from pp_decomp._threads import pin_threads
from pp_decomp.cli import bench, calibration, run, tools

pin_threads()  # before numpy loads in this process


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


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``pp-decomp`` command."""
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
        print(
            "pp-decomp: interrupted; everything told so far is in the checkpoint", file=sys.stderr
        )
        return 130
