"""opt.posterior() after a 20-step full-Bayes run on flu: each GP's one-sentence
description and arviz.summary of its hyperparameters (issue 47).

Usage: python benchmarks/studies/run_posterior.py [--steps 20]
"""

from __future__ import annotations

import argparse


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--steps", type=int, default=20, help="evaluations of the run")
    a = p.parse_args(argv)
    import arviz

    import pp_decomp as ppd
    from pp_decomp.models import get_problem

    opt = ppd.Optimizer(get_problem("flu", seed=0), inference="nuts", seed=0)
    opt.run(a.steps)
    for name, tree in opt.posterior().items():
        print(f"{name}: {tree.attrs['description']}")
        summary = arviz.summary(tree, var_names=["ls", "eta", "sigma"], kind="diagnostics")
        print(summary.to_string())


if __name__ == "__main__":
    main()
