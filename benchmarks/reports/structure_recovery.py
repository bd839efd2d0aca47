"""Correct Connections and Correct Separations of the graphs learnt in a benchmark's runs.

Usage: python benchmarks/reports/structure_recovery.py BENCH_DIR [--problem rolland-star]

Reads every finished run of the additive strategies under ``BENCH_DIR/runs/PROBLEM``,
takes the dependency graph learnt at each relearning step (the ``structure``
variable: the groups, whose pairs are the graph's edges) and scores it against
the problem's true graph (``problem.metadata["edges"]``, the instance of that
trial's seed) with Rolland et al.'s CC and CS (eq. 9-10). Prints, per strategy,
the mean CC and CS over trials at the first, middle and last relearning step.
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

for _v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

import numpy as np  # noqa: E402


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("bench_dir")
    p.add_argument("--problem", default="rolland-star")
    a = p.parse_args(argv)
    import xarray as xr

    from pp_decomp.additive.structure import correct_connections, correct_separations, groups_edges
    from pp_decomp.models import get_problem

    root = Path(a.bench_dir) / "runs" / a.problem
    for strategy_dir in sorted(root.iterdir()):
        scores = []
        for f in sorted(strategy_dir.glob("trial*.nc")):
            if ".partial" in f.name:
                continue
            ds = xr.load_dataset(f)
            if "structure" not in ds:
                break
            problem = get_problem(a.problem, seed=int(ds.attrs["seed"]))
            true, D = problem.metadata["edges"], problem.dim
            rows = []
            for it, s in zip(ds["iteration"].values, ds["structure"].values, strict=True):
                if s:
                    E = groups_edges(json.loads(s))
                    rows.append((it, correct_connections(E, true), correct_separations(E, true, D)))
            scores.append(rows)
        if not scores:
            continue
        k = min(len(r) for r in scores)
        print(f"{strategy_dir.name} ({len(scores)} runs)")
        for i in sorted({0, k // 2, k - 1}):
            its = [r[i][0] for r in scores]
            cc = np.mean([r[i][1] for r in scores])
            cs = np.mean([r[i][2] for r in scores])
            at = int(np.mean(its))
            print(f"  relearning {i + 1} of {k} (evaluation ~{at}): CC {cc:.2f}  CS {cs:.2f}")


if __name__ == "__main__":
    main()
