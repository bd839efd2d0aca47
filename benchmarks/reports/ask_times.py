"""How long each strategy's asks took in a benchmark folder: median, mean, 95th
percentile and maximum of ``ask_seconds`` per problem and strategy.

Usage: python benchmarks/reports/ask_times.py DIR [--after N] [--problem P]

``--after N`` counts only the asks once ``N`` evaluations are in (iteration
``> N``); by default ``N`` is the benchmark's initial design (its points were
not asked for; their ``ask_seconds`` are 0). Strategies with no timed ask
(all ``NaN``, e.g. skipped by a budget) are listed as such. Where a run
resumed, an ask's time is the one of the process that made it.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("dir")
    p.add_argument("--after", type=int, default=None)
    p.add_argument("--problem", default=None)
    a = p.parse_args(argv)
    import xarray as xr

    ds = xr.load_dataset(Path(a.dir) / "bench.nc")
    after = json.loads(ds.attrs["settings"])["n_init"] if a.after is None else a.after
    if after < 0:
        raise SystemExit(f"--after must be >= 0; got {after}")
    print(f"asks after {after} evaluations")
    problems = [a.problem] if a.problem else [str(v) for v in ds["problem"].values]
    for problem in problems:
        if problem not in ds["problem"].values:
            raise SystemExit(f"--problem {problem!r} is not in {list(ds['problem'].values)}")
        for strategy in ds["strategy"].values:
            sec = ds["ask_seconds"].sel(problem=problem, strategy=strategy)
            sec = sec.where(sec["iteration"] > after).values.ravel()
            sec = sec[np.isfinite(sec)]
            label = f"{problem} {strategy}"
            if not len(sec):
                print(f"{label}: no timed ask")
                continue
            print(
                f"{label}: {len(sec)} asks, median {np.median(sec):.3f} s, "
                f"mean {sec.mean():.3f} s, p95 {np.quantile(sec, 0.95):.3f} s, "
                f"max {sec.max():.3f} s"
            )


if __name__ == "__main__":
    main()
