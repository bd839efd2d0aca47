"""Every setting that determines a run, validated once and serialisable.

:class:`RunSettings` is built by :meth:`RunSettings.build` before anything is
evaluated: each argument is checked (errors name it and its value), the
strategy is checked against the problem (:func:`pp_decomp.strategies.unsupported`),
and the defaults that depend on the problem (strategy, ``β_t``, kernel) are
filled in. Its :meth:`~RunSettings.to_dict` is stored with the run, and
:meth:`~RunSettings.from_dict` rebuilds it on resume.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields

from pp_decomp.acquisition import (
    beta_from_description,
)
from pp_decomp.additive import AdditiveSettings
from pp_decomp.components import KnownKernels, Priors
from pp_decomp.components.inference.nuts import NutsSettings
from pp_decomp.components.model.priors import as_priors
from pp_decomp.composition.outcome import model_problem
from pp_decomp.kernels import DEFAULT_KERNEL, canonical_kernel
from pp_decomp.loop.component_models import (
    check_components,
    component_models,
    component_transforms,
    model_from_dict,
)
from pp_decomp.loop.settings.beta import default_beta
from pp_decomp.loop.settings.checks import (
    check_copula,
    check_transform,
    check_warm_start,
    fast_and_correlated,
    known_kernels_for,
)
from pp_decomp.loop.settings.fast import FastSettings
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
        known = known_kernels_for(problem, inference, kw.get("known_kernels"))
        kernel = kw.get("kernel")
        if known is not None and kernel is not None and canonical_kernel(kernel) != known.kernel:
            raise ValueError(
                f"kernel={kernel!r} differs from the known kernels' family {known.kernel!r}"
            )
        kernel = known.kernel if known is not None else canonical_kernel(kernel or DEFAULT_KERNEL)
        fast, correlated = fast_and_correlated(kw, s, problem, inference, kernel)
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
