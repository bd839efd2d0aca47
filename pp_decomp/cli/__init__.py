"""Command-line interface: ``pp-decomp SUBCOMMAND ...``.

Every sub-command's module is imported with the parser (pp_decomp imports stay at
the top of their modules); heavy optional dependencies (Dask, BoTorch,
matplotlib) load only when a sub-command needs them. ``import pp_decomp``, which
comes first, pins the BLAS threads before numpy loads.
"""

from __future__ import annotations

import argparse
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
