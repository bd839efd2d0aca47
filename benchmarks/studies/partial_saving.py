"""Does evaluating a function network one node at a time find better inputs for the
same cost than evaluating it whole?

Usage: python benchmarks/studies/partial_saving.py [--problems alpine2-network]
       [--strategy network-ei] [--init 14] [--evals 30] [--seeds 0,1,2]
       [--inference map] [--out FILE.json]

For each problem and seed, two runs of ``--strategy`` from the same design of
``--init`` inputs: one evaluates ``--evals`` whole networks after the design
(``Optimizer.run``); the other evaluates node by node (``Optimizer.run_nodes``)
until it has spent what the first spent, the design included, at the problem's
node costs. Each run's simple regret is that of the best input it evaluated
completely (the objective's true value there against the optimum). Prints each
run, then per problem the paired difference node by node - whole, mean and
standard error over the seeds (negative: evaluating node by node did better),
with how many nodes the node-by-node runs evaluated and how many of their rows
they left open.
"""

from __future__ import annotations

import argparse
import json
import os

for _v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

import warnings  # noqa: E402

import numpy as np  # noqa: E402


def simple_regret(problem, X: np.ndarray) -> float:
    """``|f* - best f|`` over the completely evaluated inputs ``X``, signed as the problem."""
    f = problem.sign * problem.objective(X)
    return float(problem.sign * problem.optimum - np.max(f))


def pair(problem, strategy: str, init: int, evals: int, seed: int, inference: str) -> dict:
    """The whole and the node-by-node run on one seed (module docstring)."""
    import pp_decomp as ppd

    kw = dict(strategy=strategy, n_init=init, seed=seed, inference=inference)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        whole = ppd.Optimizer(problem, **kw)
        whole.run(init + evals)
        nodes = ppd.Optimizer(problem, **kw)
        ds = nodes.run_nodes(whole.cost_spent())
    return {
        "seed": seed,
        "cost": whole.cost_spent(),
        "whole": simple_regret(problem, whole.X),
        "nodes": simple_regret(problem, nodes.X),
        "nodes_cost": nodes.cost_spent(),
        "node_evaluations": int(ds.sizes["node_evaluation"]),
        "rows_left_open": int(np.sum(ds["partial_became"].values == 0)),
        "evaluations_completed": int(nodes.n),
    }


def main(argv=None) -> dict:
    from pp_decomp.models import get_problem

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--problems", default="alpine2-network")
    ap.add_argument("--strategy", default="network-ei")
    ap.add_argument("--init", type=int, default=14)
    ap.add_argument("--evals", type=int, default=30)
    ap.add_argument("--seeds", default="0,1,2")
    ap.add_argument("--inference", default="map")
    ap.add_argument("--out")
    a = ap.parse_args(argv)
    seeds = [int(s) for s in a.seeds.split(",")]
    report = {}
    for name in a.problems.split(","):
        problem = get_problem(name)
        rows = [pair(problem, a.strategy, a.init, a.evals, s, a.inference) for s in seeds]
        for r in rows:
            print(
                f"{name} seed {r['seed']}: cost {r['cost']:g}; simple regret whole "
                f"{r['whole']:.4g}, node by node {r['nodes']:.4g} ({r['node_evaluations']} "
                f"nodes, {r['evaluations_completed']} completed, {r['rows_left_open']} left open)"
            )
        diff = np.array([r["nodes"] - r["whole"] for r in rows])
        se = diff.std(ddof=1) / np.sqrt(len(diff)) if len(diff) > 1 else float("nan")
        print(
            f"{name} {a.strategy} ({a.inference}), {len(rows)} seeds: simple regret node by "
            f"node - whole {diff.mean():+.4g} ± {se:.2g}"
        )
        report[name] = {"rows": rows, "mean_difference": float(diff.mean()), "se": float(se)}
    if a.out:
        with open(a.out, "w") as f:
            json.dump({"args": vars(a), "problems": report}, f, indent=1)
    return report


if __name__ == "__main__":
    main()
