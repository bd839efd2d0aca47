"""How long ``ask`` keeps a user waiting on the full-Bayes fast path, given how long
their system takes to evaluate.

Usage: python benchmarks/speed/ask_latency.py [--eval-seconds 0,3] [--steps 60] [--seed 0]
       [--out docs/results/perf/ask_latency.json]

D-GPUCB with NUTS (the fast path: background refits consumed ``lag`` steps
after they start) on Wang's synthetic problem. Each evaluation takes
``--eval-seconds`` of wall time (a sleep standing in for the user's simulator),
during which the background refits run. Prints and writes, per evaluation
time, the optimiser's construction seconds (what it imports there, the
sampler included, is not paid in an ask), the first model-based ask (it makes
every GP's first fit) and, over the asks after it, the ask-latency median,
95th percentile and maximum, the evaluation the longest ask chose, the line
``2 × p50 + 1 s`` it is judged against, and how many steps waited over 1 s.
``pp-decomp perf`` measures with instant evaluations, the worst case for latency.
"""

from __future__ import annotations

import argparse
import json
import os

for _v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

import time  # noqa: E402
import warnings  # noqa: E402

import numpy as np  # noqa: E402


def one(eval_seconds: float, steps: int, seed: int) -> dict:
    from pp_decomp import Optimizer
    from pp_decomp.models import get_problem

    warnings.simplefilter("ignore")
    problem = get_problem("synthetic", seed=seed)
    start = time.perf_counter()
    opt = Optimizer(problem, "d-gpucb", inference="nuts", seed=seed)
    construct = time.perf_counter() - start
    waits = []
    for _ in range(steps):
        start = time.perf_counter()
        x = opt.ask()
        waits.append(time.perf_counter() - start)
        y = problem.evaluate(x[None], seed=seed)[0]
        time.sleep(eval_seconds)
        opt.tell(x, y)
    first = opt.settings.n_init + 1  # the asks after the first fit
    w = np.array(waits[first:])
    return {
        "eval_seconds": eval_seconds,
        "steps": steps,
        "construct_seconds": construct,
        "first_ask": waits[opt.settings.n_init],
        "ask_p50": float(np.median(w)),
        "ask_p95": float(np.quantile(w, 0.95)),
        "ask_max": float(w.max()),
        "ask_max_evaluation": first + int(np.argmax(w)) + 1,
        "line": 2.0 * float(np.median(w)) + 1.0,
        "steps_over_1s": int(np.sum(w > 1.0)),
        "steps_scored": len(w),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--eval-seconds", default="0,3")
    ap.add_argument("--steps", type=int, default=60)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default=None)
    a = ap.parse_args()
    rows = [one(float(e), a.steps, a.seed) for e in a.eval_seconds.split(",")]
    for r in rows:
        print(
            f"evaluation {r['eval_seconds']:g} s: construct {r['construct_seconds']:.2f} s, "
            f"first ask {r['first_ask']:.3f} s, "
            f"ask p50 {r['ask_p50']:.3f} s, p95 {r['ask_p95']:.3f} s, max {r['ask_max']:.3f} s "
            f"(evaluation {r['ask_max_evaluation']}; line 2 × p50 + 1 = {r['line']:.3f} s), "
            f"{r['steps_over_1s']} of {r['steps_scored']} model steps over 1 s"
        )
    if a.out:
        with open(a.out, "w") as fh:
            json.dump(rows, fh, indent=2)


if __name__ == "__main__":
    main()
