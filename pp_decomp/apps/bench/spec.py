"""What a benchmark runs: tasks (problem × strategy × trial), specs and the papers' presets.

Trial ``k`` uses the seed ``SeedSequence([root_seed, k])`` for the problem
instance and the optimiser, so every strategy of a trial meets the same
instance and initial design, and results do not depend on where or in which
order tasks run.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from pp_decomp.acquisition import BetaDiscrete, BetaKandasamy
from pp_decomp.additive import AdditiveSettings
from pp_decomp.apps.bench.presets import PRESETS, QUICK
from pp_decomp.choices import INFERENCE_METHODS
from pp_decomp.components import Priors
from pp_decomp.kernels import canonical_kernel
from pp_decomp.loop.settings import COPULA_SURROGATES, RunSettings
from pp_decomp.models import check_problem_name, get_problem
from pp_decomp.problem import Problem
from pp_decomp.space import CandidateSet
from pp_decomp.strategies import UnsupportedSetting, canonical_strategy, get_strategy
from pp_decomp.validate import canonical_choice, check_choice, check_positive_int

BETA_SCHEDULES = ("default", "kandasamy", "contal")


def contal_beta(problem: Problem) -> BetaDiscrete:
    """Contal et al.'s GP-UCB on a finite search set: Srinivas et al.'s
    ``β_t = 2 log(|X| t² π² / (6δ))`` unscaled, with their ``δ = 10⁻⁶``."""
    if not isinstance(problem.domain, CandidateSet):
        raise ValueError(
            f"beta_schedule 'contal' needs a finite search set; problem {problem.name!r} "
            f"has a {type(problem.domain).__name__} domain"
        )
    return BetaDiscrete(problem.domain.size, delta=1e-6, scale=1.0)


@dataclass(frozen=True)
class Task:
    """One run of the benchmark."""

    problem: str
    strategy: str
    trial: int
    iterations: int
    n_init: int
    inference: str
    root_seed: int
    beta_schedule: str = "default"
    additive: tuple = ()  # AdditiveSettings fields as (name, value) pairs
    correlated: bool = False  # correlated components (decomposed strategies only)
    kernel: str | None = None  # None: the Optimizer's default for the problem
    priors: tuple = ()  # Priors fields other than the defaults, as (name, value) pairs
    outcome_transform: str = "none"  # of the component GPs and a network's node GPs
    copula: bool = False  # their errors correlated by a Gaussian copula (decomposed, network)
    warm_start: bool = False  # MAP refits from the last mode (component and composed GPs)
    input_warping: bool = False  # the GPs' kernel on warped inputs (component, composed, node GPs)
    output_warp: str | None = None  # a learned warp of the component GPs' outputs (decomposed)

    @property
    def seed(self) -> int:
        return int(np.random.SeedSequence([self.root_seed, self.trial]).generate_state(1)[0])

    def optimizer_kwargs(self, problem) -> dict:
        """The keyword arguments of this task's :class:`~pp_decomp.Optimizer` on
        ``problem`` (this trial's instance): the strategy and its settings."""
        beta = None
        surrogate = get_strategy(self.strategy).surrogate
        if self.beta_schedule == "kandasamy" and surrogate != "additive":
            beta = BetaKandasamy(problem.dim)  # the papers' GP-UCB baseline: 0.2 D log 2t
        elif self.beta_schedule == "contal":
            beta = contal_beta(problem)
        return dict(
            strategy=self.strategy,
            n_init=self.n_init,
            inference=self.inference,
            seed=self.seed,
            beta=beta,
            additive_settings=AdditiveSettings(**dict(self.additive)),
            correlated=self.correlated,
            kernel=self.kernel,
            priors=Priors(**dict(self.priors)),
            outcome_transform=self.outcome_transform,
            copula=self.copula,
            warm_start=self.warm_start,
            input_warping=self.input_warping,
            output_warp=self.output_warp,
        )

    def path(self, out: Path) -> Path:
        """Where this task's run file lives under the benchmark folder ``out``."""
        folder = self.problem.replace(":", "--")  # a user's module:factory problem
        return Path(out) / "runs" / folder / self.strategy / f"trial{self.trial:03d}.nc"


@dataclass
class BenchSpec:
    """What to run: problems × strategies × trials."""

    problems: list[str]
    strategies: list[str]
    trials: int = 30
    iterations: int = 100
    n_init: int = 5
    inference: str = "map"
    root_seed: int = 0
    name: str = "custom"
    beta_schedule: str = "default"
    additive: dict = field(default_factory=dict)
    # correlated components for the decomposed strategies (``Optimizer(correlated=True)``)
    correlated: bool = False
    # the GPs' kernel (None: the Optimizer's default) and Priors fields other than the defaults
    kernel: str | None = None
    priors: dict = field(default_factory=dict)
    # what the component GPs of the decomposed strategies and the node GPs of the
    # network strategies regress (Optimizer(outcome_transform=))
    outcome_transform: str = "none"
    # their posterior errors correlated by a Gaussian copula (Optimizer(copula=);
    # None: wherever it applies, the Optimizer's default)
    copula: bool | None = None
    # MAP refits of the component and composed GPs from the last mode (Optimizer(warm_start=True))
    warm_start: bool = False
    # the component, composed and node GPs' kernel on warped inputs (Optimizer(input_warping=True))
    input_warping: bool = False
    # a learned warp of the component GPs' outputs (Optimizer(output_warp=); decomposed
    # strategies, the others run without it)
    output_warp: str | None = None
    # the summary's paired comparison: these strategies against the baseline
    # (default: the decomposed ``d-*`` strategies against GP-UCB)
    baseline: str = "gp-ucb"
    compared: list[str] | None = None
    skipped: list[tuple[str, str, str]] = field(default_factory=list)

    def __post_init__(self):
        for p in self.problems:
            check_problem_name(p)
        # any case names a strategy; the spec, its folders and its summary keep the registry's
        self.strategies = [canonical_strategy(s, "strategies") for s in self.strategies]
        self.baseline = canonical_strategy(self.baseline, "baseline")
        if self.compared is not None:
            self.compared = [canonical_strategy(s, "compared") for s in self.compared]
        self.inference = canonical_choice(self.inference, "inference", INFERENCE_METHODS)
        check_positive_int(self.trials, "trials")
        for flag in ("correlated", "warm_start", "input_warping"):
            # a strategy the flag does not reach would not check it
            if not isinstance(getattr(self, flag), bool):
                raise TypeError(f"{flag} must be True or False; got {getattr(self, flag)!r}")
        check_choice(self.beta_schedule, "beta_schedule", BETA_SCHEDULES)
        if self.kernel is not None:
            self.kernel = canonical_kernel(self.kernel)
        # each pair's settings are checked where a run checks them, before any run
        instances = {p: get_problem(p, seed=0) for p in self.problems}
        pairs = [self._pair(p, instances[p], s) for p in self.problems for s in self.strategies]
        self._tasks = [pair for pair in pairs if isinstance(pair, Task)]
        self.skipped = [pair for pair in pairs if not isinstance(pair, Task)]
        check_positive_int(self.iterations, "iterations", minimum=self.n_init + 1)

    def tasks(self) -> list[Task]:
        """Every applicable task; a pair whose settings a run refuses as an
        :class:`~pp_decomp.strategies.UnsupportedSetting` is skipped with the reason
        (``skipped``, filled when the spec is made: ``(problem, strategy, why)``)."""
        return [replace(t, trial=k) for t in self._tasks for k in range(self.trials)]

    def _pair(self, p: str, problem, s: str) -> Task | tuple[str, str, str]:
        """Trial 0 of strategy ``s`` on problem ``p`` (``problem``, its instance of
        seed 0), its settings validated by
        :meth:`~pp_decomp.loop.settings.RunSettings.build`; or ``(p, s, why)`` when
        the pair cannot run with them."""
        surrogate = get_strategy(s).surrogate
        decomposed = surrogate == "decomposed"
        task = Task(
            p,
            s,
            0,
            self.iterations,
            self.n_init,
            self.inference,
            self.root_seed,
            self.beta_schedule,
            tuple(sorted(self.additive.items())),
            self.correlated and decomposed,
            self.kernel,
            tuple(sorted(self.priors.items())),
            self.outcome_transform if surrogate in ("decomposed", "network") else "none",
            # None until the settings say whether the copula applies
            self.copula if surrogate in COPULA_SURROGATES else False,
            self.warm_start and surrogate in ("decomposed", "composed"),
            self.input_warping and surrogate in ("decomposed", "composed", "network"),
            self.output_warp if decomposed else None,
        )
        try:
            settings = RunSettings.build(problem, **task.optimizer_kwargs(problem))
        except UnsupportedSetting as why:
            return p, s, str(why)
        return replace(task, copula=settings.model.copula)


def preset(name: str, quick: bool = False, **overrides) -> BenchSpec:
    """A paper's benchmark settings (``quick`` shrinks trials and iterations)."""
    check_choice(name, "preset", PRESETS)
    kw = dict(PRESETS[name], name=name)
    if quick:
        kw.update(QUICK)
    kw.update({k: v for k, v in overrides.items() if v is not None})
    return BenchSpec(**kw)


def parse_list(value: str | None) -> list[str] | None:
    """Split a comma-separated command-line value into names (``None`` stays ``None``)."""
    return None if value is None else [v.strip() for v in value.split(",") if v.strip()]
