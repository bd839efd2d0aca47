"""Refresh ``tuberculosis-110``'s stored optimum from the best policies runs have found.

Usage: python benchmarks/reports/tb_optimum.py BENCH_DIR [BENCH_DIR ...] [--top 5] [--write]

Reads every run of ``tuberculosis-110`` under each folder's ``runs/`` (finished
``trial*.nc`` files, and interrupted ``*.partial.nc`` ones), takes the ``--top``
policies with the least true objective, and polishes each by the swap search of
the stored optimum's own search (``models.tuberculosis.polish_110``: one age at
``v_max`` swapped out for one at 0 while any swap lowers the total). Prints the
stored optimum, the runs' best, and the polished best; with ``--write`` the
polished best replaces the stored optimum in ``models/data/optima.json`` when it
is lower. Every run's regret is against that stored value.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

for _v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

import numpy as np  # noqa: E402


def run_policies(folders) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """Every evaluated policy (N, 110), its true objective (N,) and its run's file."""
    import xarray as xr

    X, values, where = [], [], []
    for folder in folders:
        files = sorted(Path(folder).glob("runs/tuberculosis-110/*/trial*.nc"))
        if not files:
            raise SystemExit(f"{folder}: no runs of tuberculosis-110 under runs/")
        for path in files:
            with xr.open_dataset(path) as ds:
                X.append(ds["x"].values)
                values.append(ds["true_objective"].values)
                where += [str(path)] * len(ds["x"])
    X, values = np.concatenate(X), np.concatenate(values)
    keep = np.isfinite(values) & np.all(np.isfinite(X), axis=1)
    return X[keep], values[keep], [w for w, k in zip(where, keep, strict=True) if k]


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("folders", nargs="+")
    ap.add_argument("--top", type=int, default=5)
    ap.add_argument("--write", action="store_true", help="store a lower optimum")
    args = ap.parse_args(argv)
    if args.top < 1:
        raise SystemExit(f"--top must be at least 1; got {args.top}")
    from pp_decomp.models import get_problem
    from pp_decomp.models.optima import improve_optimum
    from pp_decomp.models.tuberculosis import TB110, optimum_key_110, polish_110

    stored = get_problem("tuberculosis-110").optimum
    X, values, where = run_policies(args.folders)
    top = np.argsort(values, kind="stable")[: args.top]
    print(f"stored optimum {stored:.6f}")
    print(f"runs' best {values[top[0]]:.6f} over {len(values)} policies ({where[top[0]]})")
    best = polish_110(X[top], TB110)
    print(f"polished best {best['value']:.6f} (from the runs' #{best['from'] + 1})")
    if args.write:
        found = {"x": best["x"], "value": best["value"]}
        if improve_optimum(optimum_key_110(TB110), found, lower=True):
            print(f"stored optimum replaced: {stored:.6f} -> {best['value']:.6f}")
        else:
            print("stored optimum kept")


if __name__ == "__main__":
    main()
