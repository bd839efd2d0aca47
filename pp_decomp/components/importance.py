"""A GP's hyperparameter posterior by importance sampling from its prior.

On the few points of an initial design the posterior is close to the prior,
and is where NUTS has the hardest time: the prior's wide lengthscale tail
against 3-15 points makes it heavy-tailed or bimodal (short lengthscales that
read the data as noise against long ones), and chains started apart disagree
(r-hat 1.011-1.013 after four repairs on the synthetic problem). There the
prior itself is a good proposal: ``M`` prior draws ``θ_m`` weighted by their
likelihood ``w_m ∝ p(y | θ_m, X)`` are the posterior by importance sampling,
and ``S`` of them resampled (sampling importance resampling, Rubin 1988) are
draws of it, every mode in proportion.

The estimate is used only where it is reliable: the Pareto ``k̂`` of the
weights (Vehtari et al. 2024, "Pareto smoothed importance sampling", JMLR 25)
at most ``k_max`` and their ESS at least ``S``. As the data grow the posterior
concentrates and the check fails; NUTS takes over.
"""

from __future__ import annotations

import time

from pp_decomp.components.incremental import ess, log_likelihood, pareto_k, resample
from pp_decomp.diagnostics import FitDiagnostics


def prior_importance_fit(gp, X, y, n_prior: int, n_keep: int, k_max: float, rng) -> bool:
    """Condition ``gp`` on ``n_keep`` draws resampled from ``n_prior`` prior draws
    weighted by their likelihood on ``(X, y)``, if the weights pass the checks
    (module docstring); returns whether they did.

    ``gp.diagnostics`` then has ``inference="importance"``, ``proposal="prior"``
    and the weights' ESS (of ``n_prior``) as ``ess_bulk_min``.
    """
    start = time.perf_counter()
    Xs, ys = gp._set_data(X, y)
    prior = gp.sample_prior(n_prior, rng)
    logw = log_likelihood(gp.posterior_kernel, Xs, ys, prior, gp.mean_var)
    ess_, k = ess(logw), pareto_k(logw)
    if not (ess_ >= n_keep and k <= k_max):
        return False
    gp.condition(X, y, prior.subset(resample(logw, rng, n_keep)))
    gp.diagnostics = FitDiagnostics(
        "importance",
        n_keep,
        ess_bulk_min=ess_,
        ess_tail_min=ess_,
        pareto_k=k,
        proposal="prior",
        seconds=time.perf_counter() - start,
    )
    return True
