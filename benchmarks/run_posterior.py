"""opt.posterior() after a 20-step full-Bayes run on flu: each GP's one-sentence
description and arviz.summary of its hyperparameters (issue 47)::

    python benchmarks/run_posterior.py
"""

import arviz

import pp_decomp as ppd
from pp_decomp.models import get_problem

opt = ppd.Optimizer(get_problem("flu", seed=0), inference="nuts", seed=0)
opt.run(20)
for name, tree in opt.posterior().items():
    print(f"{name}: {tree.attrs['description']}")
    print(arviz.summary(tree, var_names=["ls", "eta", "sigma"], kind="diagnostics").to_string())
