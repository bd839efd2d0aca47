"""Full-Bayes wall time of one run, to compare two checkouts (criticism's cost).

Run it alternately on a worktree of the commit before and on this one, in one
session::

    git worktree add ../before <commit>
    for case in synthetic flu; do for tree in . ../before; do
        PYTHONPATH=$tree python benchmarks/speed/criticism_cost.py $tree --case $case
    done; done

Prints one JSON line per run: the tree, the case, wall seconds, the median ask
and the cumulative regret (equal regret: the same choices were made).
"""

from __future__ import annotations

import argparse
import json
import os
import sys

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("tree", help="the checkout to import pp_decomp from")
    p.add_argument("--case", default="synthetic", choices=("synthetic", "flu"))
    p.add_argument("--steps", type=int, default=100)
    args = p.parse_args()
    sys.path.insert(0, args.tree)
    from pp_decomp.apps.perf import loop_run

    r = loop_run(args.case, "d-gpucb", "nuts", args.steps)
    line = {"tree": args.tree, "case": args.case, "seconds": round(r["seconds"], 2)}
    line.update(p50=round(r["ask_seconds"]["p50"], 4), regret=round(r["cumulative_regret"], 4))
    print(json.dumps(line))


if __name__ == "__main__":
    main()
