"""Every setting that determines a run, in groups, validated once and serialisable.

:class:`RunSettings` is built by :meth:`RunSettings.build` before anything is
evaluated from ``Optimizer``'s flat keyword arguments (:data:`KEYWORDS` says which
group takes each): each group is built and checked by its own ``build``
(:class:`ModelSettings`, :class:`InferenceSettings`, :class:`AcquisitionSettings`;
errors name the argument and its value), then the strategy is checked against
the problem and the groups (:func:`pp_decomp.strategies.unsupported`). The
defaults that depend on the problem (strategy, ``β_t``, kernel) are filled in
there. Its :meth:`~RunSettings.to_dict` is stored with the run, and
:meth:`~RunSettings.kwargs_from_dict` rebuilds the arguments on resume.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from pp_decomp.acquisition import beta_from_description
from pp_decomp.additive import AdditiveSettings
from pp_decomp.choices import INFERENCE_METHODS
from pp_decomp.components import KnownKernels, Priors
from pp_decomp.loop.component_models import (
    as_modelled,
    check_components,
    component_models,
    component_transforms,
    model_from_dict,
)
from pp_decomp.loop.settings.acquisition import AcquisitionSettings
from pp_decomp.loop.settings.checks import check_transform, known_kernels_for
from pp_decomp.loop.settings.fast import FastSettings
from pp_decomp.loop.settings.inference import FAST_OWNED, InferenceSettings
from pp_decomp.loop.settings.model import ModelSettings
from pp_decomp.space import CandidateSet
from pp_decomp.strategies import check_strategy, default_strategy, get_strategy
from pp_decomp.validate import canonical_choice, check_positive_int

# the flat keyword arguments of Optimizer, by the group that holds each
KEYWORDS = {
    "run": ("n_init", "seed", "max_retries"),
    "model": (
        "kernel",
        "priors",
        "known_kernels",
        "correlated",
        "outcome_transform",
        "copula",
        "components",
        "additive_settings",
        "input_warping",
        "output_warp",
    ),
    "inference": (
        "inference",
        "refit_every",
        "nuts_kwargs",
        "max_draws",
        "warm_start",
        "fast",
        "fast_settings",
    ),
    "acquisition": ("beta", "mc_samples", "acq_method"),
}


@dataclass(frozen=True)
class RunSettings:
    """The validated settings of one run, in groups (see :class:`pp_decomp.Optimizer`
    for each argument).

    It holds the strategy's name and the run's own settings (``n_init``, ``seed``,
    ``max_retries``) beside three groups: ``model`` (:class:`ModelSettings`: the
    component models), ``inference`` (:class:`InferenceSettings`: the
    hyperparameter inference and the fast full-Bayes path) and ``acquisition``
    (:class:`AcquisitionSettings`: ``β_t`` and the acquisition's sizes).

    Example
    -------
    >>> from pp_decomp.loop.settings import RunSettings
    >>> from pp_decomp.models import get_problem
    >>> s = RunSettings.build(get_problem("synthetic", seed=0), "d-gpucb")
    >>> s.inference.method, s.model.kernel
    ('map', 'matern32')
    """

    strategy: str
    model: ModelSettings
    inference: InferenceSettings
    acquisition: AcquisitionSettings
    n_init: int = 5
    seed: int = 0
    max_retries: int = 0

    @classmethod
    def build(cls, problem, strategy: str | None = None, **kw) -> RunSettings:
        """Validate every argument against ``problem`` and fill in the defaults."""
        if unknown := sorted(set(kw) - set(cls.keywords())):  # else dropped without a word
            raise TypeError(f"unknown setting(s) {unknown}; the settings are {cls.keywords()}")
        components = component_models(problem, kw.get("components"))
        transform = component_transforms(kw.get("outcome_transform", "none"), components, problem)
        warp = kw.get("output_warp")
        problem = as_modelled(problem, transform, components, warp)  # what the GPs see
        method = canonical_choice(kw.get("inference", "map"), "inference", INFERENCE_METHODS)
        s = get_strategy(strategy or _default_strategy(problem, method, kw))
        components = check_components(components, s, problem, kw)
        check_transform(transform, s, method)
        fixed = method == "fixed"
        n_init = check_positive_int(kw.get("n_init", 5), "n_init", minimum=0 if fixed else 2)
        dom = problem.domain
        if isinstance(dom, CandidateSet) and n_init > dom.size:
            raise ValueError(
                f"n_init={n_init} exceeds the {dom.size} candidates of problem {problem.name!r}"
            )
        model = ModelSettings.build(problem, s, method, kw, components, transform)
        inference = InferenceSettings.build(method, s, kw, model.correlated)
        check_strategy(
            s,
            problem,
            inference=method,
            n_init=n_init,
            fast=inference.fast,
            known_kernels=model.known_kernels,
        )
        return cls(
            strategy=s.name,
            n_init=n_init,
            seed=check_positive_int(kw.get("seed", 0), "seed", minimum=0),
            max_retries=check_positive_int(kw.get("max_retries", 0), "max_retries", minimum=0),
            model=model,
            inference=inference,
            acquisition=AcquisitionSettings.build(s, problem, model.additive, kw),
        )

    @classmethod
    def keywords(cls) -> tuple[str, ...]:
        """The keyword arguments of :meth:`build` (and so of ``Optimizer``) besides the
        strategy, group by group."""
        return tuple(name for names in KEYWORDS.values() for name in names)

    def to_dict(self) -> dict:
        """JSON-serialisable settings, as stored with the run: flat, one key per
        keyword argument (the stored form predates the groups and is read by
        :meth:`kwargs_from_dict`)."""
        m, i, a = self.model, self.inference, self.acquisition
        beta = a.beta
        return {
            "strategy": self.strategy,
            "seed": self.seed,
            "n_init": self.n_init,
            "inference": i.method,
            "refit_every": i.refit_every,
            "kernel": m.kernel,
            "priors": asdict(m.priors),
            "beta_schedule": beta.describe() if hasattr(beta, "describe") else {"name": repr(beta)},
            "nuts_kwargs": asdict(i.nuts),
            "max_draws": i.max_draws,
            "mc_samples": a.mc_samples,
            "acq_method": a.method,
            "fast": i.fast,
            "fast_settings": asdict(i.fast_path),
            "additive_settings": asdict(m.additive),
            "known_kernels": None if m.known_kernels is None else m.known_kernels.describe(),
            "max_retries": self.max_retries,
            "correlated": m.correlated,
            "copula": m.copula,
            "input_warping": m.input_warping,
            "output_warp": m.output_warp,
            "warm_start": i.warm_start,
            "outcome_transform": (
                m.outcome_transform
                if isinstance(m.outcome_transform, str)
                else list(m.outcome_transform)
            ),
            "components": {name: gp.model_dict() for name, gp in m.components},
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
            input_warping=s.get("input_warping", False),
            output_warp=s.get("output_warp"),
            warm_start=s.get("warm_start", False),
            components={n: model_from_dict(m) for n, m in s.get("components", {}).items()} or None,
        )
        if s.get("known_kernels") is not None:
            kw["known_kernels"] = KnownKernels.from_description(s["known_kernels"])
        return kw


def _default_strategy(problem, inference: str, kw: dict) -> str:
    """:func:`~pp_decomp.strategies.default_strategy` for these settings."""
    return default_strategy(
        problem,
        correlated=kw.get("correlated") is True,
        known_kernels=known_kernels_for(problem, inference, kw.get("known_kernels")),
        fast=kw.get("fast"),
    )
