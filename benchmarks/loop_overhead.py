"""A fixed loop workload for timing one version of the package against another.

Usage: farm-bench -n 6 --vs "sh -c 'PYTHONPATH=OLD python benchmarks/loop_overhead.py'" \\
           -- sh -c 'PYTHONPATH=NEW python benchmarks/loop_overhead.py'

where ``OLD`` and ``NEW`` are checkouts (``git worktree add``) of the two
versions. On the synthetic problem (seed 0) it runs D-GPUCB with the true
kernels for 100 steps (the loop's own overhead: asking, telling, records,
checkpoint-free results), then D-GPUCB and GP-UCB with MAP refits for 30 steps
each. It uses only the API every version since the loop split has, so the
same file times both sides.
"""

from __future__ import annotations

import os

for _v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

import warnings  # noqa: E402


def main() -> None:
    from pp_decomp import Optimizer

    try:
        from pp_decomp.models import get_problem
    except ImportError:  # versions before the problems were reachable from the package
        from models import get_problem

    warnings.simplefilter("ignore")
    problem = get_problem("synthetic", seed=0)
    Optimizer(problem, "d-gpucb", inference="fixed", n_init=0, seed=0).run(100)
    Optimizer(problem, "d-gpucb", inference="map", seed=0).run(30)
    Optimizer(problem, "gp-ucb", inference="map", seed=0).run(30)


if __name__ == "__main__":
    main()
