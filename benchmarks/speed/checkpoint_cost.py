"""What keeping every step's draws costs a checkpointed run: write time and file size.

Usage: python benchmarks/speed/checkpoint_cost.py [--steps 100] [--inference nuts]
       [--repeats 5]

Runs D-GPUCB on Wang's synthetic problem (J = 10) for ``--steps`` evaluations,
then builds the checkpoint file's bytes (:func:`pp_decomp.loop.checkpoint.to_bytes`,
what every ``tell`` writes) with and without the draw log
(:mod:`pp_decomp.loop.draw_log`), alternately, ``--repeats`` times each, and
prints the median seconds and the size of each.
"""

from __future__ import annotations

import argparse
import os

for _v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

import time  # noqa: E402
import warnings  # noqa: E402

import numpy as np  # noqa: E402


def measure(steps: int, inference: str, repeats: int, seed: int = 0) -> dict:
    """Seconds (median) and bytes of one checkpoint write with and without the draws."""
    import pp_decomp as ppd
    from pp_decomp.loop import checkpoint as ckpt
    from pp_decomp.loop.resume import loop_state
    from pp_decomp.models import get_problem

    warnings.simplefilter("ignore")  # a fit's diagnostics are in the results
    problem = get_problem("synthetic", seed=seed)
    opt = ppd.Optimizer(problem, "d-gpucb", inference=inference, seed=seed)
    opt.run(steps)
    results, state = opt.results(), loop_state(opt)
    draws = opt.draw_log.to_dataset(opt.records)
    times = {"without": [], "with": []}
    size = {}
    for _ in range(repeats):
        for label, d in (("without", None), ("with", draws)):
            start = time.perf_counter()
            data = ckpt.to_bytes(results, state, d)
            times[label].append(time.perf_counter() - start)
            size[label] = len(data)
    return {
        "steps": steps,
        "J": problem.n_components,
        "inference": inference,
        **{f"seconds_{k}": float(np.median(v)) for k, v in times.items()},
        **{f"bytes_{k}": v for k, v in size.items()},
    }


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=100)
    ap.add_argument("--inference", default="nuts")
    ap.add_argument("--repeats", type=int, default=5)
    a = ap.parse_args(argv)
    r = measure(a.steps, a.inference, a.repeats)
    for k in ("without", "with"):
        print(
            f"T={r['steps']} J={r['J']} {r['inference']}: checkpoint write {k} draws "
            f"{r[f'seconds_{k}']:.3f} s, {r[f'bytes_{k}'] / 1e6:.2f} MB"
        )


if __name__ == "__main__":
    main()
