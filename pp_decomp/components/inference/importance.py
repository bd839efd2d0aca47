"""A GP's hyperparameter posterior by importance sampling from its prior.

On the few points of an initial design the posterior is close to the prior,
and is where NUTS has the hardest time: the prior's wide lengthscale tail
against 3-15 points makes it heavy-tailed or bimodal (short lengthscales that
read the data as noise against long ones), and chains started apart disagree
(r-hat 1.011-1.013 after four repairs on the synthetic problem). There the
prior itself is a good proposal: ``M`` prior draws ``θ_m`` weighted by their
likelihood ``w_m ∝ p(y | θ_m, X)`` (a warped GP's on its warped outputs, the
warp's Jacobian included) are the posterior by importance sampling,
and ``S`` of them resampled (sampling importance resampling, Rubin 1988) are
draws of it, every mode in proportion.

The estimate is used only where it is reliable: the Pareto ``k̂`` of the
weights (Vehtari et al. 2024, "Pareto smoothed importance sampling", JMLR 25)
at most ``k_max`` and their ESS at least ``S``. As the data grow the posterior
concentrates and the check fails; NUTS takes over.

The likelihoods are computed in chunks of draws whose ``(draws, n, n)``
covariances fit in :data:`CHUNK_BYTES`, so memory does not grow with ``M``;
the first :data:`PILOT` draws decide whether the rest is worth computing: their
ESS, scaled to ``M`` draws, below ``S`` ends the attempt (a subsample misses
the largest weights, so its ESS fraction overstates the full sample's: the
projection errs towards going on).
"""

from __future__ import annotations

import time

import numpy as np

from pp_decomp.components.diagnostics import FitDiagnostics
from pp_decomp.components.gp.warped import draw_log_likelihood
from pp_decomp.components.posterior.incremental import ess, pareto_k, resample

CHUNK_BYTES = 64 * 2**20  # one chunk's (draws, n, n) covariances
PILOT = 2048  # draws whose weights decide whether to compute the rest


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
    logw = prior_log_weights(gp, Xs, ys, prior, n_prior, n_keep)
    if logw is None:
        return False
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


def prior_log_weights(gp, Xs, ys, prior, n_prior: int, n_keep: int) -> np.ndarray | None:
    """The ``n_prior`` draws' log likelihoods, chunked; ``None`` when the pilot's
    projected ESS is below ``n_keep`` (module docstring)."""
    n = len(Xs)
    chunk = int(max(64, CHUNK_BYTES // (8 * n * n)))
    logw = np.empty(n_prior)
    for lo in range(0, n_prior, chunk):
        hi = min(lo + chunk, n_prior)
        part = prior.subset(slice(lo, hi))
        logw[lo:hi] = draw_log_likelihood(gp, Xs, ys, part)
        pilot = hi >= min(PILOT, n_prior) and lo < min(PILOT, n_prior)
        if pilot and hi < n_prior and ess(logw[:hi]) * n_prior / hi < n_keep:
            return None
    return logw
