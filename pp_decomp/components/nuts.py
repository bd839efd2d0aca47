"""NUTS refits that converge by default: checked, and repaired before their draws are used.

Every fit is checked against :class:`Convergence` (the thresholds of Vehtari
et al. 2021, "Rank-normalization, folding, and localization: an improved R̂",
Bayesian Analysis 16(2)): rank-normalised split ``R̂ ≤ 1.01``, bulk and tail
ESS of at least 100 per chain, no divergent transition. A fit that fails is
rerun, warm-started at the failed run's posterior mean, with the schedule of
:func:`repair_settings`: longer adaptation, more draws, a higher target
acceptance (smaller steps) where transitions diverged. What still fails after
the last repair is reported once, with its numbers.

Why 4 chains x 400 draws: R̂ ≤ 1.01 is only reliable with an ESS of about
400 (Vehtari et al.), and these posteriors (3-7 hyperparameters) give an ESS of
about 0.4 per draw. Measured on the synthetic problem's components
(T = 10-100): with 4 x 150 draws the median R̂ was 1.016 and 25% of first runs
met 1.01; with 4 x 400, median 1.006 and 85% (the rest mostly divergences or
two modes, which the repairs address). The extra draws cost little next to the
adaptation: 3.3 s against 1.5 s for 4 x 50 draws at T = 100, where one repair
(doubled adaptation and draws) costs more than twice a first run.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace

from pp_decomp.validate import check_positive_int


@dataclass(frozen=True)
class Convergence:
    """Thresholds a NUTS fit must meet (Vehtari et al. 2021).

    ``rhat_max``: largest rank-normalised split R̂; ``ess_per_chain``: bulk and
    tail ESS at least this many times the number of chains; ``divergences_max``.
    """

    rhat_max: float = 1.01
    ess_per_chain: float = 100.0
    divergences_max: int = 0

    def ess_min(self, chains: int) -> float:
        """The ESS a fit with ``chains`` chains must reach."""
        return self.ess_per_chain * chains


CONVERGENCE = Convergence()


# NUTS trees at most 2**8 leapfrog steps per draw (nutpie's default is 2**10): these
# posteriors have 3-7 parameters, healthy trees stay below depth 5, and a chain at
# the cap is stuck anyway (its ESS fails the checks) but costs 4 times less
MAX_TREE_DEPTH = 8


@dataclass(frozen=True)
class NutsSettings:
    """One NUTS fit: draws and tuning steps per chain, chains, target acceptance,
    how many repairs a failing fit gets, and whether nutpie adapts a low-rank
    modified mass matrix (Seyboldt et al. 2024) instead of a diagonal one.

    The diagonal mass matrix stays the default, from a measurement. On fresh fits
    of the synthetic components (``benchmarks/nuts_convergence.py --mass-matrix
    low-rank``, T = 10-100) the low-rank one raised the share of first runs
    meeting every threshold from 63% to 79% and the median bulk ESS from 617 to
    1036. But in the loop's warm-started refits (D-GPUCB, synthetic, 100 steps,
    seed 0) it gave no better convergence over the first 40 steps (86% against
    92% of 36 refits) and later left chains in different modes: one refit took
    474 s and ended at r-hat 3.0 after both repairs.
    """

    draws: int = 400
    tune: int = 300
    chains: int = 4
    target_accept: float = 0.8
    repairs: int = 2
    low_rank_mass_matrix: bool = False

    def __post_init__(self):
        check_positive_int(self.draws, "draws")
        check_positive_int(self.tune, "tune")  # nutpie panics without a tuning step
        check_positive_int(self.chains, "chains")
        check_positive_int(self.repairs, "repairs", minimum=0)
        if not isinstance(self.low_rank_mass_matrix, bool):
            raise TypeError(
                f"low_rank_mass_matrix must be True or False; got {self.low_rank_mass_matrix!r}"
            )
        if not 0.5 <= self.target_accept < 1.0:
            raise ValueError(f"target_accept must lie in [0.5, 1); got {self.target_accept!r}")


def repair_settings(s: NutsSettings, attempt: int, diverged: bool) -> NutsSettings:
    """The settings of repair number ``attempt`` (1, 2, ...) of a fit that failed.

    Each repair doubles the adaptation. A fit without divergences also doubles
    its draws (too little ESS, or R̂ not yet settled); divergences instead
    raise the target acceptance towards 1 (0.8 → 0.9 → 0.95 ...), shrinking
    the step size, and keep the draws: small steps already make every draw
    dearer (a 4 x 1600-draw repair at 0.95 once took 5 minutes at T = 90).
    """
    accept = 1.0 - (1.0 - s.target_accept) / 2**attempt if diverged else s.target_accept
    return replace(
        s,
        tune=max(s.tune, 100) * 2**attempt,
        draws=s.draws if diverged else s.draws * 2**attempt,
        target_accept=min(accept, 0.99),
    )


def fit_until_converged(gp, Xs, ys, settings: NutsSettings, rng, init=None):
    """Sample ``gp``'s hyperparameter posterior until it meets :data:`CONVERGENCE`.

    The first run starts at ``init``'s mean (or the prior's centre); each repair
    (at most ``settings.repairs``) starts at the previous run's posterior mean.
    Returns the InferenceData in use and its :class:`~pp_decomp.diagnostics.FitDiagnostics`
    (``attempts``, ``first_ok``, ``converged`` filled in).
    """
    from pp_decomp.diagnostics import summarize_nuts
    from pp_decomp.rng import int_seed

    names = gp.hyper_names()
    s, start = settings, time.perf_counter()
    init_mean = None if init is None else gp._unconstrained(init, gp._compiled())
    for attempt in range(settings.repairs + 1):
        idata = gp._sample(Xs, ys, s, int_seed(rng), init_mean)
        diag = summarize_nuts(idata, names)
        ok = not diag.problems()
        if attempt == 0:
            first_ok = ok
        if ok or attempt == settings.repairs:
            break
        previous = gp.draws_type.from_posterior(idata.posterior, names)
        init_mean = gp._unconstrained(previous, gp._compiled())
        s = repair_settings(settings, attempt + 1, diag.divergences > 0)
    diag = replace(
        diag,
        seconds=time.perf_counter() - start,
        attempts=attempt + 1,
        first_ok=first_ok,
        converged=ok,
    )
    return idata, diag
