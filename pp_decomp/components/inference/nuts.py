"""NUTS refits that converge by default: checked, and repaired before their draws are used.

Every fit is checked against :class:`~pp_decomp.components.diagnostics.Convergence`
(the thresholds of Vehtari et al. 2021, "Rank-normalization, folding, and
localization: an improved R̂", Bayesian Analysis 16(2)): rank-normalised split
``R̂ ≤ 1.01``, bulk and tail ESS of at least 400, no divergent transition.

A refit is warm-started: each chain starts at a draw of the previous posterior
(:class:`StartAtDraws`; nutpie's own ``init_mean`` does nothing for PyMC
models, so before this every refit started at the prior's centre). A run that
fails is first weighed by importance sampling from a mixture fitted to its
chains (:func:`reweighted`, :mod:`pp_decomp.components.inference.reweight`), where the
model gives its log density: used when the weights pass their checks, which
settles chains in different modes, where repairs cannot. On flu
(``pp-decomp perf --case flu``: D-GPUCB, 100 steps, seed 0) 49 of 50 NUTS
refits met the thresholds, 47 of them weighed (worst ``k̂`` 0.58), with 10
reruns in all; before, 126 reruns left 14 of 51 unconverged. Otherwise the fit
is repaired (:func:`repair_plan`) before its draws are used, at most ``repairs`` times:

* chains that agree but fall short (R̂ not settled, too little ESS) are
  *extended*: as many chains again are run and pooled with them, and R̂ and the
  ESS computed over all, at the cost of one more run;
* after divergences the chains are discarded and the fit rerun with doubled
  adaptation and a higher target acceptance (smaller steps); a chain elsewhere
  (R̂ > 1.05) is rerun from new starts with doubled adaptation. Sizes never
  grow beyond twice the first run's.

What still fails after the last repair is reported once, with its numbers.

Why 4 chains x 400 draws: R̂ ≤ 1.01 is only reliable with an ESS of about
400 (Vehtari et al.), and these posteriors (3-7 hyperparameters) give an ESS of
about 0.4 per draw. Measured on the synthetic problem's components
(T = 10-100): with 4 x 150 draws the median R̂ was 1.016 and 25% of first runs
met 1.01; with 4 x 400, median 1.006 and 85%. The extra draws cost little next
to the adaptation: 3.3 s against 1.5 s for 4 x 50 draws at T = 100.
"""

from __future__ import annotations

import importlib
import time
from dataclasses import dataclass, replace

import numpy as np

from pp_decomp._runtime import quiet_third_party
from pp_decomp.components.diagnostics import CONVERGENCE, summarize_nuts
from pp_decomp.components.inference.refresh import sampler_density
from pp_decomp.components.inference.reweight import reweight_chains
from pp_decomp.components.posterior.tree import concat_chains, draws_dataset, with_group
from pp_decomp.validate import check_positive_int, int_seed

# NUTS trees at most 2**8 leapfrog steps per draw (nutpie's default is 2**10): these
# posteriors have 3-7 parameters, healthy trees stay below depth 5, and a chain at
# the cap is stuck anyway (its ESS fails the checks) but costs 4 times less
MAX_TREE_DEPTH = 8


@dataclass(frozen=True)
class NutsSettings:
    """One NUTS fit: draws and tuning steps per chain, chains, target acceptance,
    how many repairs a failing fit gets (:func:`repair_plan`), and whether nutpie
    adapts a low-rank modified mass matrix (Seyboldt et al. 2024) instead of a
    diagonal one (default: diagonal; why: docs/design.md, "Why these defaults").

    Example
    -------
    >>> from pp_decomp.components.inference.nuts import NutsSettings
    >>> NutsSettings(draws=200).chains
    4
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


# R̂ above this after a run without divergences means a chain is elsewhere (another
# mode, or stuck where the step size collapsed), which more chains cannot mend
POOLABLE_RHAT = 1.05


def repair_plan(first: NutsSettings, s: NutsSettings, diag) -> tuple[NutsSettings, bool]:
    """The settings of the repair of a run with settings ``s`` (the fit's first run:
    ``first``) that failed with diagnostics ``diag``, and whether the repair pools
    its chains with the fit's.

    * Chains that agree (no divergences, R̂ ≤ :data:`POOLABLE_RHAT`) and reach
      at least half the ESS: the fit is *extended*, ``s`` run again and pooled,
      which about doubles the ESS and settles R̂ at the cost of one run.
    * Chains that agree with less than half the ESS: rerun with twice the
      first run's adaptation and draws.
    * Divergences: the chains are discarded and the fit rerun with twice the
      first run's adaptation and the target acceptance raised towards 1
      (0.8 → 0.9 → 0.95 ...), which shrinks the step size.
    * A chain elsewhere (R̂ > :data:`POOLABLE_RHAT`: another mode, or stuck):
      rerun from new starts with twice the first run's adaptation.

    Sizes never compound beyond twice the first run's: where more of the same
    does not converge a fit (a posterior with several modes), doubling again
    only multiplies the cost (a fifth 16x run once took 180 s on flu).
    """
    longer = 2 * max(first.tune, 100)
    if diag.divergences > 0:
        accept = min(1.0 - (1.0 - s.target_accept) / 2, 0.99)
        return replace(s, tune=longer, draws=first.draws, target_accept=accept), False
    if diag.rhat_max > POOLABLE_RHAT:
        return replace(s, tune=longer, draws=first.draws), False
    if min(diag.ess_bulk_min, diag.ess_tail_min) >= CONVERGENCE.ess_min / 2:
        return s, True
    return replace(s, tune=longer, draws=2 * first.draws), False


def sample_kwargs(s: NutsSettings, seed: int) -> dict:
    """``nutpie.sample``'s keyword arguments for settings ``s``, quiet, at most 2 cores."""
    return dict(
        draws=s.draws,
        tune=s.tune,
        chains=s.chains,
        cores=min(s.chains, 2),
        seed=seed,
        target_accept=s.target_accept,
        maxdepth=MAX_TREE_DEPTH,
        low_rank_modified_mass_matrix=s.low_rank_mass_matrix,
        progress_bar=False,
    )


def pool_chains(a, b):
    """Two NUTS runs of one posterior as one tree, ``b``'s chains after ``a``'s."""
    return concat_chains(a, b)


class StartAtDraws:
    """nutpie's initial-point function for a warm start: the chain seeded ``seed``
    starts at one of ``points`` (S, k), unconstrained, picked by that seed.

    Starting at draws of the previous posterior puts every chain in (or next to)
    the typical set, dispersed as that posterior is, instead of at the prior's
    centre, from where a chain can fall into a poor local mode (e.g. ``ℓ → 0``,
    the data as white noise) and stay there with a collapsed step size.
    """

    def __init__(self, points: np.ndarray):
        self.points = np.ascontiguousarray(points, dtype=float)

    def __call__(self, seed) -> np.ndarray:
        pick = np.random.default_rng(seed).integers(len(self.points))
        return self.points[pick].copy()


def import_sampler() -> None:
    """Import nutpie and what its first run imports besides (``dask.array``, which
    xarray imports on its first array where dask is installed; ``arro3``, the
    draws' Arrow tables), about a second once per process. A run whose NUTS refits
    go to a background thread calls this first: imports run Python code that holds
    the GIL, so in the refit thread they stalled the asks beside it."""
    import nutpie  # noqa: F401

    for module in ("dask.array", "arro3.core"):
        try:
            importlib.import_module(module)
        except ImportError:  # not installed: nothing to pay for
            pass


def run_nutpie(model, s: NutsSettings, seed: int, starts=None):
    """One quiet nutpie run of ``model`` (a nutpie model with its data) under
    settings ``s``; each chain starts at one of ``starts (S, k)`` (unconstrained,
    picked by its seed: :class:`StartAtDraws`), else at the model's own start."""
    import nutpie

    initial_point = None if starts is None else StartAtDraws(starts)
    with quiet_third_party():
        return nutpie.sample(
            model.build(initial_point, chain_draws=s.tune + s.draws), **sample_kwargs(s, seed)
        )


REWEIGHTED = "reweighted_posterior"  # the tree's group of a reweighted fit's draws


def reweighted(cm, density, idata, Xs, ys, diag, rng):
    """``idata`` with its chains weighed by importance sampling
    (:mod:`~pp_decomp.components.inference.reweight`) and its diagnostics, or ``None``
    where the weights fail their checks. ``cm``: the compiled model (its value
    names); ``density``: ``(log_posterior, to_draws)`` of the GP's sampler
    (:func:`~pp_decomp.components.inference.refresh.sampler_density`).

    The chains stay in ``posterior`` as NUTS ran them; the group
    ``reweighted_posterior`` holds the equal-weight resample (one chain of as
    many draws), the fit's draws.
    """
    log_posterior, to_draws = density
    post = idata["posterior"]
    C, D = post.sizes["chain"], post.sizes["draw"]
    Z = cm.chain_rows(post).reshape(C, D, -1)
    out = reweight_chains(Z, lambda Zq: log_posterior(Zq, Xs, ys), C * D, rng, CONVERGENCE.ess_min)
    if out is None:
        return None
    rows, ess, k = out
    draws = to_draws(rows)
    parts = cm.unflatten(rows)
    parts.update({n: getattr(draws, n) for n in draws.NDIM if getattr(draws, n) is not None})
    method = "importance sampling from the chains"
    weighed = draws_dataset(
        {n: v[None] for n, v in parts.items()}, ess=ess, pareto_k=k, method=method
    )
    diag = replace(diag, ess_bulk_min=ess, ess_tail_min=ess, reweighted=True, pareto_k=k)
    return with_group(idata, REWEIGHTED, weighed), diag


def reweighted_summary(idata, names: list[str], ess: float):
    """arviz-stats' summary of a reweighted fit's draws (``reweighted_posterior``), with
    the columns of a NUTS fit's: ``ess_bulk``, ``ess_tail`` the weights' ``ess``,
    ``mcse_mean = sd / sqrt(ess)``, ``r_hat`` NaN (a resample has no chains)."""
    import arviz_stats

    table = arviz_stats.summary(idata, group=REWEIGHTED, var_names=names, kind="stats")
    return table.assign(
        mcse_mean=table["sd"] / np.sqrt(ess),
        mcse_sd=np.nan,
        ess_bulk=ess,
        ess_tail=ess,
        r_hat=np.nan,
    )


def fit_until_converged(gp, Xs, ys, settings: NutsSettings, rng, init=None):
    """Sample ``gp``'s hyperparameter posterior until it meets :data:`CONVERGENCE`.

    Every chain starts at a draw of ``init`` (typically the previous fit's
    posterior; without it, at the prior's centre, jittered); so does each repair
    (at most ``settings.repairs``, planned by :func:`repair_plan`): a failed
    run's draws may hold a chain stuck where it should not be. Returns the
    posterior tree in use and its :class:`~pp_decomp.components.diagnostics.FitDiagnostics`
    (``attempts``, ``first_ok``, ``converged`` filled in).
    """
    names, cm, density = gp.hyper_names(), gp._compiled(), sampler_density(gp)
    s, start, idata, pool = settings, time.perf_counter(), None, False
    starts = None if init is None else gp._unconstrained(init, cm)
    for attempt in range(settings.repairs + 1):
        run = gp._sample(Xs, ys, s, int_seed(rng), starts)
        idata = pool_chains(idata, run) if pool else run
        diag = summarize_nuts(idata, names)
        ok = not diag.problems()
        if attempt == 0:
            first_ok = ok
        last = attempt == settings.repairs
        # weighing the chains is the first repair: none with repairs=0
        if not ok and settings.repairs and density is not None:
            weighed = reweighted(cm, density, idata, Xs, ys, diag, rng)
            if weighed is not None:
                idata, diag = weighed
                ok = True
        if ok or last:
            break
        s, pool = repair_plan(settings, s, diag)
    diag = replace(
        diag,
        seconds=time.perf_counter() - start,
        attempts=attempt + 1,
        first_ok=first_ok,
        converged=ok,
    )
    return idata, diag
