"""A fixed loop workload for timing one version of the package against another.

Usage: farm-bench -n 6 --vs "sh -c 'PYTHONPATH=OLD python benchmarks/speed/loop_overhead.py'" \\
           -- sh -c 'PYTHONPATH=NEW python benchmarks/speed/loop_overhead.py'

       python benchmarks/speed/loop_overhead.py [--steps 100] [--map-steps 30]

where ``OLD`` and ``NEW`` are checkouts (``git worktree add``) of the two
versions. On the synthetic problem (seed 0) it runs D-GPUCB with the true
kernels for ``--steps`` (100) steps (the loop's own overhead: asking, telling,
records, checkpoint-free results), then D-GPUCB and GP-UCB with MAP refits for
``--map-steps`` (30) steps each, and prints each run's seconds and final
cumulative regret (equal on both sides when the versions make the same choices).
It uses only the API every version since the loop split has, so the same file
times both sides.
"""

from __future__ import annotations

import argparse
import os

for _v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

import time  # noqa: E402
import warnings  # noqa: E402


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--steps", type=int, default=100, help="steps with the true kernels")
    p.add_argument("--map-steps", type=int, default=30, help="steps of each MAP run")
    a = p.parse_args(argv)
    from pp_decomp import Optimizer

    try:
        from pp_decomp.models import get_problem
    except ImportError:  # versions before the problems were reachable from the package
        from models import get_problem

    warnings.simplefilter("ignore")
    problem = get_problem("synthetic", seed=0)
    runs = [
        ("d-gpucb fixed", dict(inference="fixed", n_init=0), a.steps),
        ("d-gpucb map", dict(inference="map"), a.map_steps),
        ("gp-ucb map", dict(inference="map"), a.map_steps),
    ]
    for label, kwargs, steps in runs:
        start = time.perf_counter()
        ds = Optimizer(problem, label.split()[0], seed=0, **kwargs).run(steps)
        regret = float(ds["cumulative_regret"][-1])
        print(
            f"{label}: {steps} steps, {time.perf_counter() - start:.2f} s, "
            f"cumulative regret {regret:.4f}",
            flush=True,
        )


if __name__ == "__main__":
    main()
