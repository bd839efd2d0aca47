"""The full-Bayes fast path's refit policy (:class:`FastSettings`), validated where it is built."""

from __future__ import annotations

import math
from dataclasses import dataclass

from pp_decomp.components.diagnostics import CONVERGENCE
from pp_decomp.components.posterior.incremental import factors_within
from pp_decomp.validate import check_positive_int

MIN_KEPT = 32  # PSIS fits k̂ to the largest min(S/5, 3√S) of S weights: 5 at least


@dataclass(frozen=True)
class FastSettings:
    """Refit policy of the fast full-Bayes path (:mod:`pp_decomp.loop.updaters.fast`).

    Each GP's ``S = kept_draws`` hyperparameter draws are reweighted by every new
    observation (sequential importance sampling). A refit starts in the background
    when the weights degrade, and is used ``lag_at(n)`` steps later, its draws
    reweighted by the observations since; draws that collapse are refit at once.

    Parameters
    ----------
    ess_refit : float
        Start a refit when the weights' ESS falls below this share of ``S``.
    ess_collapse : float
        Below this share of ``S`` the draws have collapsed onto a few values: the
        GP is refit at once and the step waits for it (0: off). Below ``ess_refit``.
    pareto_k_max : float, optional
        Also refit when the weights' Pareto ``k̂`` exceeds this; default
        ``min(1 - 1/log10 S, 0.7)`` (Vehtari et al. 2024's threshold for ``S``
        draws: 0.53 for ``S = 128``).
    max_age : int, optional
        Also refit draws this many observations old (default ``None``: off).
    lag, lag_fraction : int, float
        A refit started at step ``t`` on ``n`` observations is used at step
        ``t + max(lag, round(lag_fraction · n))`` (:meth:`lag_at`).
    max_in_flight : int
        Refits running at once.
    draws, min_draws, draws_margin, tune, chains, repairs : int, int, float, int, int, int
        Each NUTS refit: after a converged fit, draws per chain are
        ``draws_margin`` times what the ESS check needs at its ESS per draw,
        within ``[min_draws, draws]`` (:meth:`draws_for`).
    kept_draws : int
        ``S``, the draws kept for prediction: at most this many, fewer on many
        points (:meth:`kept_at`).
    held_bytes : int
        A GP's draws on ``n`` points hold ``S`` factors of ``8 n²`` bytes each;
        a fit keeps ``S`` within this budget, and never fewer than
        :data:`MIN_KEPT` (default 128 MiB: 128 draws up to 362 points, 32 from 724).
    prior_draws : int
        A fit's first try: this many prior draws weighted by their likelihood,
        ``S`` resampled, used where ``k̂ ≤ 0.7`` and ESS ≥ ``S``
        (:mod:`pp_decomp.components.inference.importance`); a first fit the prior
        cannot make is tried around the posterior's mode
        (:mod:`pp_decomp.components.inference.laplace`) before NUTS (0: NUTS only).
    max_refreshes : int
        A refit first weighs a proposal around the current draws
        (:mod:`pp_decomp.components.inference.refresh`, used where ``k̂ ≤ 0.7`` and ESS ≥
        400) and runs NUTS where that fails or after this many refreshes in a
        row (0: always NUTS).
    mode_from : int
        On this many observations or more a refit weighs the refresh's proposal
        in growing batches, tries one around the posterior's mode
        (:mod:`pp_decomp.components.inference.laplace`) where it would run NUTS,
        and, where both fail their checks, keeps the draws it has and repairs
        them by NUTS in the background (:mod:`pp_decomp.loop.updaters.fast`).

    Why these values: docs/design.md, "Why these defaults".

    Example
    -------
    >>> from pp_decomp.loop import FastSettings
    >>> s = FastSettings(kept_draws=64)
    >>> s.lag_at(100), round(s.k_threshold(64), 2), FastSettings().kept_at(1000)
    (6, 0.45, 32)
    """

    ess_refit: float = 0.5
    ess_collapse: float = 0.15
    pareto_k_max: float | None = None
    max_age: int | None = None
    lag: int = 2
    lag_fraction: float = 0.06
    max_in_flight: int = 2
    draws: int = 400
    min_draws: int = 150
    draws_margin: float = 1.5
    tune: int = 200
    chains: int = 4
    repairs: int = 6
    kept_draws: int = 128
    held_bytes: int = 2**27
    prior_draws: int = 32768
    max_refreshes: int = 3
    mode_from: int = 300

    def __post_init__(self):
        if not 0.0 < self.ess_refit <= 1.0:
            raise ValueError(f"fast_settings.ess_refit must lie in (0, 1]; got {self.ess_refit!r}")
        if not 0.0 <= self.ess_collapse < self.ess_refit:
            raise ValueError(
                "fast_settings.ess_collapse must lie in [0, ess_refit); "
                f"got {self.ess_collapse!r} with ess_refit={self.ess_refit!r}"
            )
        if not 0.0 <= self.lag_fraction < 1.0:
            raise ValueError(
                f"fast_settings.lag_fraction must lie in [0, 1); got {self.lag_fraction!r}"
            )
        k = self.pareto_k_max
        if k is not None and not (isinstance(k, int | float) and 0.0 < k <= 1.0):
            raise ValueError(f"fast_settings.pareto_k_max must lie in (0, 1] or be None; got {k!r}")
        if not self.draws_margin >= 1.0:
            raise ValueError(f"fast_settings.draws_margin must be >= 1; got {self.draws_margin!r}")
        sizes = ("lag", "max_in_flight", "draws", "min_draws", "chains", "kept_draws")
        for name in (*sizes, "held_bytes", "mode_from"):
            check_positive_int(getattr(self, name), f"fast_settings.{name}")
        check_positive_int(self.prior_draws, "fast_settings.prior_draws", minimum=0)
        check_positive_int(self.max_refreshes, "fast_settings.max_refreshes", minimum=0)
        if self.max_age is not None:
            check_positive_int(self.max_age, "fast_settings.max_age")
        check_positive_int(self.tune, "fast_settings.tune")
        check_positive_int(self.repairs, "fast_settings.repairs", minimum=0)

    def draws_for(self, ess_per_draw: float | None) -> int:
        """Draws per chain of a refit after a converged NUTS fit with ``ess_per_draw``
        (ESS over draws kept): enough for ``draws_margin`` times the ESS the
        checks ask for at that efficiency, between ``min_draws`` and ``draws``."""
        if ess_per_draw is None or not ess_per_draw > 0:
            return self.draws

        need = self.draws_margin * CONVERGENCE.ess_min / (ess_per_draw * self.chains)
        return int(min(max(math.ceil(need), self.min_draws), self.draws))

    def kept_at(self, n: int) -> int:
        """Draws a fit on ``n`` observations keeps: ``kept_draws``, fewer where their
        factors would pass ``held_bytes``, never fewer than :data:`MIN_KEPT`."""
        within = factors_within(self.held_bytes, n)
        return int(min(self.kept_draws, max(MIN_KEPT, within)))

    def lag_at(self, n: int) -> int:
        """Steps between the start of a refit on ``n`` observations and its use."""
        return max(self.lag, round(self.lag_fraction * n))

    def k_threshold(self, S: int) -> float:
        """The Pareto ``k̂`` above which ``S`` reweighted draws are refit."""
        if self.pareto_k_max is not None:
            return float(self.pareto_k_max)
        return min(1.0 - 1.0 / math.log10(max(S, 10)), 0.7)
