"""Every setting that determines a run, validated once and serialisable.

:class:`RunSettings` is built by :meth:`RunSettings.build` before anything is
evaluated: each argument is checked (errors name it and its value), the
strategy is checked against the problem (:func:`pp_decomp.strategies.unsupported`),
and the defaults that depend on the problem (strategy, ``β_t``, kernel) are
filled in. Its :meth:`~RunSettings.to_dict` is stored with the run, and
:meth:`~RunSettings.from_dict` rebuilds it on resume.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field, fields

from pp_decomp.acquisition import (
    BetaDiscrete,
    BetaKandasamy,
    BetaRolland,
    beta_from_description,
)
from pp_decomp.additive import AdditiveSettings
from pp_decomp.components import KnownKernels, Priors
from pp_decomp.components.coregion_density import CORRELATED_KERNELS
from pp_decomp.components.nuts import NutsSettings
from pp_decomp.components.priors import as_priors
from pp_decomp.composition.outcome import is_identity, model_problem
from pp_decomp.diagnostics import CONVERGENCE
from pp_decomp.kernels import DEFAULT_KERNEL, canonical_kernel
from pp_decomp.loop.component_models import (
    check_components,
    component_models,
    component_transforms,
    model_from_dict,
)
from pp_decomp.space import CandidateSet
from pp_decomp.strategies import check_strategy, default_strategy, get_strategy
from pp_decomp.validate import check_choice, check_positive_int

INFERENCE = ("map", "nuts", "fixed")
# NUTS sizes the fast path's refits take from FastSettings, not from nuts_kwargs
FAST_OWNED = ("draws", "tune", "chains", "repairs")
ACQ_METHODS = ("auto", "lbfgs", "direct")


def nuts_from_kwargs(kwargs: dict | None) -> NutsSettings:
    """:class:`NutsSettings` from a user's ``nuts_kwargs``; an unknown key is named
    before any work."""
    kwargs = dict(kwargs or {})
    known = {f.name for f in fields(NutsSettings)}
    bad = sorted(set(kwargs) - known)
    if bad:
        raise TypeError(f"nuts_kwargs has unknown key(s) {bad}; known keys: {sorted(known)}")
    return NutsSettings(**kwargs)


def _nuts_settings(nuts_kwargs, fast: bool) -> NutsSettings:
    """The run's NUTS settings; sizes the fast path takes from FastSettings are refused
    there by name rather than ignored."""
    nuts_kwargs = dict(nuts_kwargs or {})
    sized = {k: nuts_kwargs[k] for k in FAST_OWNED if k in nuts_kwargs}
    if fast and sized:
        raise ValueError(
            f"nuts_kwargs={sized} sizes a NUTS fit at every step, which the fast "
            "full-Bayes path (fast=True, the default for inference='nuts' here) does "
            "not run: its refits take draws, tune, chains and repairs from "
            "fast_settings=FastSettings(...); pass them there, or fast=False"
        )
    return nuts_from_kwargs(nuts_kwargs)


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
        ``S``, the draws kept for prediction.
    prior_draws : int
        A fit's first try: this many prior draws weighted by their likelihood,
        ``S`` resampled, used where ``k̂ ≤ 0.7`` and ESS ≥ ``S``
        (:mod:`pp_decomp.components.importance`; 0: NUTS only).
    max_refreshes : int
        A refit first weighs a proposal around the current draws
        (:mod:`pp_decomp.components.refresh`, used where ``k̂ ≤ 0.7`` and ESS ≥
        400) and runs NUTS where that fails or after this many refreshes in a
        row (0: always NUTS).

    Why these values: docs/design.md, "Why these defaults".

    Example
    -------
    >>> from pp_decomp.loop import FastSettings
    >>> s = FastSettings(kept_draws=64)
    >>> s.lag_at(100), round(s.k_threshold(64), 2)
    (6, 0.45)
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
    prior_draws: int = 32768
    max_refreshes: int = 3

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
        for name in ("lag", "max_in_flight", "draws", "min_draws", "chains", "kept_draws"):
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

    def lag_at(self, n: int) -> int:
        """Steps between the start of a refit on ``n`` observations and its use."""
        return max(self.lag, round(self.lag_fraction * n))

    def k_threshold(self, S: int) -> float:
        """The Pareto ``k̂`` above which ``S`` reweighted draws are refit."""
        if self.pareto_k_max is not None:
            return float(self.pareto_k_max)
        return min(1.0 - 1.0 / math.log10(max(S, 10)), 0.7)


@dataclass(frozen=True)
class RunSettings:
    """The validated settings of one run (see :class:`pp_decomp.Optimizer` for each)."""

    strategy: str
    n_init: int = 5
    inference: str = "map"
    refit_every: int = 1
    kernel: str = DEFAULT_KERNEL
    priors: Priors = field(default_factory=Priors)
    seed: int = 0
    nuts: NutsSettings = field(default_factory=NutsSettings)
    max_draws: int = 256
    mc_samples: int = 512
    acq_method: str = "auto"
    fast: bool = False
    fast_settings: FastSettings = field(default_factory=FastSettings)
    additive_settings: AdditiveSettings = field(default_factory=AdditiveSettings)
    known_kernels: KnownKernels | None = None
    max_retries: int = 0
    beta: object = None
    correlated: bool = False
    outcome_transform: str | tuple = "none"
    copula: bool = False
    warm_start: bool = False
    components: tuple = ()

    @classmethod
    def build(cls, problem, strategy: str | None = None, **kw) -> RunSettings:
        """Validate every argument against ``problem`` and fill in the defaults."""
        if unknown := sorted(set(kw) - set(cls.keywords())):  # else dropped without a word
            raise TypeError(f"unknown setting(s) {unknown}; the settings are {cls.keywords()}")
        components = component_models(problem, kw.get("components"))
        transform = component_transforms(kw.get("outcome_transform", "none"), components, problem)
        problem = model_problem(problem, transform)  # what the strategy and its GPs see
        strategy = default_strategy(problem) if strategy is None else strategy
        s = get_strategy(strategy)
        components = check_components(components, s, problem, kw)
        inference = check_choice(kw.get("inference", "map"), "inference", INFERENCE)
        check_transform(transform, s, inference)
        fixed = inference == "fixed"
        n_init = check_positive_int(kw.get("n_init", 5), "n_init", minimum=0 if fixed else 2)
        dom = problem.domain
        if isinstance(dom, CandidateSet) and n_init > dom.size:
            raise ValueError(
                f"n_init={n_init} exceeds the {dom.size} candidates of problem {problem.name!r}"
            )
        known = _known_kernels(problem, inference, kw.get("known_kernels"))
        kernel = kw.get("kernel")
        if known is not None and kernel is not None and canonical_kernel(kernel) != known.kernel:
            raise ValueError(
                f"kernel={kernel!r} differs from the known kernels' family {known.kernel!r}"
            )
        kernel = known.kernel if known is not None else canonical_kernel(kernel or DEFAULT_KERNEL)
        fast, correlated = _fast_and_correlated(kw, s, problem, inference, kernel)
        check_strategy(
            s, problem, inference=inference, n_init=n_init, fast=fast, known_kernels=known
        )
        additive = _additive_settings(kw.get("additive_settings"))
        priors = as_priors(kw.get("priors") or None)
        beta = kw.get("beta")
        beta = default_beta(s, problem, additive) if beta is None else beta
        if not callable(beta):
            raise TypeError("beta must be a callable t -> beta_t")
        return cls(
            strategy=s.name,
            n_init=n_init,
            inference=inference,
            refit_every=check_positive_int(kw.get("refit_every", 1), "refit_every"),
            kernel=kernel,
            priors=priors,
            seed=check_positive_int(kw.get("seed", 0), "seed", minimum=0),
            nuts=_nuts_settings(kw.get("nuts_kwargs"), fast),
            max_draws=check_positive_int(kw.get("max_draws", 256), "max_draws"),
            mc_samples=check_positive_int(kw.get("mc_samples", 512), "mc_samples"),
            acq_method=check_choice(kw.get("acq_method", "auto"), "acq_method", ACQ_METHODS),
            fast=fast,
            fast_settings=kw.get("fast_settings") or FastSettings(),
            additive_settings=additive,
            known_kernels=known,
            max_retries=check_positive_int(kw.get("max_retries", 0), "max_retries", minimum=0),
            beta=beta,
            correlated=correlated,
            outcome_transform=transform,
            copula=check_copula(kw.get("copula"), s, problem, correlated, inference),
            warm_start=check_warm_start(kw.get("warm_start", False), s, inference),
            components=components,
        )

    @classmethod
    def keywords(cls) -> tuple[str, ...]:
        """The keyword arguments of :meth:`build` (and so of ``Optimizer``) besides the
        strategy: the fields, the NUTS settings given as ``nuts_kwargs``."""
        names = (f.name for f in fields(cls) if f.name != "strategy")
        return tuple("nuts_kwargs" if n == "nuts" else n for n in names)

    def to_dict(self) -> dict:
        """JSON-serialisable settings, as stored with the run."""
        beta = self.beta
        return {
            "strategy": self.strategy,
            "seed": self.seed,
            "n_init": self.n_init,
            "inference": self.inference,
            "refit_every": self.refit_every,
            "kernel": self.kernel,
            "priors": asdict(self.priors),
            "beta_schedule": beta.describe() if hasattr(beta, "describe") else {"name": repr(beta)},
            "nuts_kwargs": asdict(self.nuts),
            "max_draws": self.max_draws,
            "mc_samples": self.mc_samples,
            "acq_method": self.acq_method,
            "fast": self.fast,
            "fast_settings": asdict(self.fast_settings),
            "additive_settings": asdict(self.additive_settings),
            "known_kernels": None if self.known_kernels is None else self.known_kernels.describe(),
            "max_retries": self.max_retries,
            "correlated": self.correlated,
            "copula": self.copula,
            "warm_start": self.warm_start,
            "outcome_transform": (
                self.outcome_transform
                if isinstance(self.outcome_transform, str)
                else list(self.outcome_transform)
            ),
            "components": {name: gp.model_dict() for name, gp in self.components},
        }

    @staticmethod
    def kwargs_from_dict(s: dict) -> dict:
        """The :meth:`build` keyword arguments that reproduce stored settings ``s``."""
        kw = dict(
            strategy=s["strategy"],
            n_init=s["n_init"],
            inference=s["inference"],
            refit_every=s["refit_every"],
            kernel=s["kernel"],
            priors=Priors(**s["priors"]),
            seed=s["seed"],
            # a fast run's stored sizes are FastSettings' business (see FAST_OWNED)
            nuts_kwargs={
                k: v
                for k, v in s["nuts_kwargs"].items()
                if not s.get("fast") or k not in FAST_OWNED
            },
            max_draws=s["max_draws"],
            mc_samples=s["mc_samples"],
            acq_method=s["acq_method"],
            fast=s.get("fast", False),
            # checkpoints written before these settings existed: a fixed lag, NUTS
            # only, every refit of full size, collapsed draws waiting for their lag
            fast_settings=FastSettings(
                **{
                    "lag_fraction": 0.0,
                    "ess_collapse": 0.0,
                    "prior_draws": 0,
                    "max_refreshes": 0,
                    "min_draws": s.get("fast_settings", {}).get("draws", 400),
                    **s.get("fast_settings", {}),
                }
            ),
            # checkpoints written before these settings existed fitted untied
            # hyperparameters and, under NUTS, used a relearning's draws unweighed
            # (reweight changes nothing else: such a MAP run resumes with the default)
            additive_settings=AdditiveSettings(
                **{
                    "shared_hyperparameters": False,
                    "reweight": s.get("inference") != "nuts",
                    **s.get("additive_settings", {}),
                }
            ),
            beta=beta_from_description(s["beta_schedule"]),
            max_retries=s.get("max_retries", 0),
            correlated=s.get("correlated", False),
            outcome_transform=s.get("outcome_transform", "none"),
            copula=s.get("copula", False),
            warm_start=s.get("warm_start", False),
            components={n: model_from_dict(m) for n, m in s.get("components", {}).items()} or None,
        )
        if s.get("known_kernels") is not None:
            kw["known_kernels"] = KnownKernels.from_description(s["known_kernels"])
        return kw


def _additive_settings(value) -> AdditiveSettings:
    additive = value or AdditiveSettings()
    if not isinstance(additive, AdditiveSettings):
        raise TypeError("additive_settings must be a pp_decomp.additive.AdditiveSettings")
    return additive


def _fast_and_correlated(kw: dict, s, problem, inference: str, kernel: str) -> tuple[bool, bool]:
    """The run's ``fast`` (the fast full-Bayes path, default wherever it applies)
    and ``correlated`` settings, checked against each other."""
    fast = kw.get("fast")
    if fast and inference != "nuts":
        raise ValueError(
            f"fast=True is the full-Bayes path: needs inference='nuts', got {inference!r}"
        )
    correlated = kw.get("correlated", False)
    if not isinstance(correlated, bool):
        raise TypeError(f"correlated must be True or False; got {correlated!r}")
    if correlated:
        check_correlated(s, problem, inference, kernel, fast)
        return False, True  # the fast path reweights independent component GPs
    if fast is None:
        fast = inference == "nuts" and s.needs.fast_path and s.surrogate != "none"
    return bool(fast), False


def check_correlated(strategy, problem, inference: str, kernel: str, fast) -> None:
    """Refuse ``correlated=True`` where correlated components cannot run, by name."""
    if fast:
        raise ValueError(
            "fast=True reweights independent component GPs; it cannot run with "
            "correlated=True (leave fast unset)"
        )
    if strategy.surrogate != "decomposed":
        raise ValueError(
            f"correlated=True correlates the component GPs of a decomposed strategy; "
            f"strategy {strategy.name!r} models {strategy.surrogate!r}"
        )
    if strategy.with_composed:
        raise ValueError(
            f"correlated=True models the components only; strategy {strategy.name!r} "
            "also fits one GP of g, which the correlated model does not update"
        )
    if problem.n_components < 2:
        raise ValueError(
            f"correlated=True needs at least 2 components; problem {problem.name!r} has "
            f"{problem.n_components}"
        )
    if inference not in ("map", "nuts"):
        raise ValueError(f"correlated=True needs inference 'map' or 'nuts'; got {inference!r}")
    if kernel not in CORRELATED_KERNELS:
        raise ValueError(f"correlated=True needs kernel in {CORRELATED_KERNELS}; got {kernel!r}")


def copula_applies(strategy, problem, correlated: bool, inference: str) -> bool:
    """Whether the copula is on by default (``copula=None``): for the joint bounds of
    a decomposed strategy's independent, fitted component GPs (at least two);
    known kernels (``inference="fixed"``) keep the papers' independent components."""
    return (
        strategy.surrogate == "decomposed"
        and strategy.needs.joint
        and problem.n_components >= 2
        and not correlated
        and inference != "fixed"
    )


def check_copula(copula, strategy, problem, correlated: bool, inference: str) -> bool:
    """``copula``: ``None`` is :func:`copula_applies`; ``True`` is refused by name
    where there are no independent component GPs to correlate
    (:mod:`pp_decomp.composition.copula`)."""
    if copula is None:
        return copula_applies(strategy, problem, correlated, inference)
    if not isinstance(copula, bool):
        raise TypeError(f"copula must be True, False or None; got {copula!r}")
    if not copula:
        return False
    if strategy.surrogate != "decomposed":
        raise ValueError(
            f"copula=True correlates the component GPs of a decomposed strategy; "
            f"strategy {strategy.name!r} models {strategy.surrogate!r}"
        )
    if not strategy.needs.joint:
        raise ValueError(
            f"copula=True correlates the components' samples and linear variance; "
            f"strategy {strategy.name!r} bounds each component's marginal only"
        )
    if problem.n_components < 2:
        raise ValueError(
            f"copula=True needs at least 2 components; problem {problem.name!r} has "
            f"{problem.n_components}"
        )
    if correlated:
        raise ValueError(
            "copula=True correlates independent component GPs; correlated=True models "
            "the correlation in one GP already: choose one"
        )
    return True


def check_transform(transform: str, strategy, inference: str) -> None:
    """Refuse an outcome transform where the run has no component GPs to apply it to."""
    if is_identity(transform):
        return
    if strategy.surrogate != "decomposed":
        raise ValueError(
            f"outcome_transform={transform!r} transforms the component GPs of a decomposed "
            f"strategy; strategy {strategy.name!r} models {strategy.surrogate!r}"
        )
    if strategy.needs.linear_g:
        raise ValueError(
            f"{strategy.name}'s analytic bound needs a linear g; with outcome_transform="
            f"{transform!r} the GPs model {transform} y_j and g is composed with the inverse, "
            "which is not linear: use d-gpucb-mc (the default) or d-gpucb-lipschitz"
        )
    if inference == "fixed":
        raise ValueError(
            f"outcome_transform={transform!r} needs inference 'map' or 'nuts': known "
            "kernels describe the components in their own units"
        )


def _known_kernels(problem, inference: str, known) -> KnownKernels | None:
    if inference != "fixed":
        if known is not None:
            raise ValueError(
                f"known_kernels is used only with inference='fixed'; got inference={inference!r}"
            )
        return None
    known = problem.known_kernels if known is None else known
    if known is None:
        raise ValueError(
            f"inference='fixed' needs known_kernels=, and problem {problem.name!r} "
            "has no known_kernels"
        )
    if not isinstance(known, KnownKernels):
        raise TypeError(f"known_kernels must be a KnownKernels; got {type(known).__name__}")
    return known.check(problem.n_components, problem.dim)


def default_beta(strategy, problem, additive: AdditiveSettings):
    """The exploration schedule of a strategy on a problem, when the user gives none.

    The additive strategies use their papers' (``0.2 d log 2t``, ``0.5 log 2t``).
    The others, on a finite set, the scaled theoretical schedule of Wang et al.
    (:class:`BetaDiscrete`, ``J`` counted for a nonlinear ``g``, Wang Thm 8); on a
    box, Kandasamy et al.'s practice ``0.2 D log 2t`` (:class:`BetaKandasamy` with
    the box's dimension). The scaled box theorem (:class:`BetaContinuous`, Srinivas
    Thm 2) grows as ``0.4 D log t²``: 25 at t = 50 on flu's 5-D box, a bound five
    standard deviations above the mean that sends the maximiser to the box's faces
    (docs/design.md, "Exploration schedules").
    """
    spec = get_strategy(strategy).additive
    if spec is not None and spec.method == "kandasamy":
        return BetaKandasamy(max_group_size(spec, problem, additive))
    if spec is not None:
        return BetaRolland()
    if isinstance(problem.domain, CandidateSet):
        J = 1 if problem.linear is not None else problem.n_components
        return BetaDiscrete(problem.domain.size, n_components=J)
    return BetaKandasamy(problem.dim)


def max_group_size(spec, problem, additive: AdditiveSettings) -> int:
    """``d`` of Add-GP-UCB: the known groups' largest, or the settings' (default ``min(D, 3)``)."""
    if spec.structure == "oracle":
        return max(len(g) for g in problem.metadata["groups"])
    return additive.max_group_size or min(problem.dim, 3)


def check_warm_start(warm_start, strategy, inference: str) -> bool:
    """``warm_start``, refused by name where no MAP refit of the loop's GPs would use it."""
    if not isinstance(warm_start, bool):
        raise TypeError(f"warm_start must be True or False; got {warm_start!r}")
    if not warm_start:
        return False
    if inference != "map":
        raise ValueError(
            f"warm_start=True starts each MAP refit at the last fit's mode; it needs "
            f"inference='map', got {inference!r}"
        )
    if strategy.surrogate == "additive":
        raise ValueError(
            f"warm_start=True applies to the component and composed GPs' refits; strategy "
            f"{strategy.name!r} learns an additive structure, which it refits its own way"
        )
    return True
