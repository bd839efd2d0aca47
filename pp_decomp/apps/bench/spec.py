"""What a benchmark runs: tasks (problem × strategy × trial), specs and the papers' presets.

Trial ``k`` uses the seed ``SeedSequence([root_seed, k])`` for the problem
instance and the optimiser, so every strategy of a trial meets the same
instance and initial design, and results do not depend on where or in which
order tasks run.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from pp_decomp.additive import AdditiveSettings
from pp_decomp.apps.bench.presets import PRESETS, QUICK
from pp_decomp.choices import INFERENCE_METHODS
from pp_decomp.components import Priors
from pp_decomp.composition.outcome import check_outcome_transform
from pp_decomp.kernels import canonical_kernel
from pp_decomp.loop.settings import copula_applies
from pp_decomp.models import check_problem_name, get_problem
from pp_decomp.strategies import canonical_strategy, get_strategy, unsupported
from pp_decomp.validate import canonical_choice, check_choice, check_positive_int


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
    outcome_transform: str = "none"  # of the component GPs (decomposed strategies only)
    copula: bool = False  # their errors correlated by a Gaussian copula (decomposed only)
    warm_start: bool = False  # MAP refits from the last mode (component and composed GPs)

    @property
    def seed(self) -> int:
        return int(np.random.SeedSequence([self.root_seed, self.trial]).generate_state(1)[0])

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
    # what the component GPs of the decomposed strategies regress (Optimizer(outcome_transform=))
    outcome_transform: str = "none"
    # their posterior errors correlated by a Gaussian copula (Optimizer(copula=);
    # None: wherever it applies, the Optimizer's default)
    copula: bool | None = None
    # MAP refits of the component and composed GPs from the last mode (Optimizer(warm_start=True))
    warm_start: bool = False
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
        check_positive_int(self.n_init, "init", minimum=0 if self.inference == "fixed" else 2)
        check_positive_int(self.iterations, "iterations", minimum=self.n_init + 1)
        if self.correlated and self.inference == "fixed":
            raise ValueError("correlated=True needs inference 'map' or 'nuts'; got 'fixed'")
        check_choice(self.beta_schedule, "beta_schedule", ("default", "kandasamy"))

        if self.kernel is not None:
            self.kernel = canonical_kernel(self.kernel)
        Priors(**self.priors)  # validates the fields before any run

        check_outcome_transform(self.outcome_transform)
        if self.outcome_transform != "none" and self.inference == "fixed":
            raise ValueError(
                f"outcome_transform={self.outcome_transform!r} needs inference 'map' or "
                "'nuts'; got 'fixed'"
            )
        if self.copula is not None and not isinstance(self.copula, bool):
            raise TypeError(f"copula must be True, False or None; got {self.copula!r}")
        if self.copula and self.correlated:
            raise ValueError(
                "copula=True correlates independent component GPs; correlated=True models "
                "the correlation in one GP already: choose one"
            )
        if not isinstance(self.warm_start, bool):
            raise TypeError(f"warm_start must be True or False; got {self.warm_start!r}")
        if self.warm_start and self.inference != "map":
            raise ValueError(f"warm_start=True needs inference 'map'; got {self.inference!r}")

        AdditiveSettings(**self.additive)  # validates the fields before any run

    def tasks(self) -> list[Task]:
        """Every applicable task; a strategy that cannot run on a problem with these
        settings is skipped with the reason (:func:`pp_decomp.strategies.unsupported`)."""
        out, self.skipped = [], []
        additive = tuple(sorted(self.additive.items()))
        priors = tuple(sorted(self.priors.items()))
        for p in self.problems:
            problem = get_problem(p, seed=0)
            for s in self.strategies:
                surrogate = get_strategy(s).surrogate
                decomposed = surrogate == "decomposed"
                why = unsupported(s, problem, inference=self.inference, n_init=self.n_init)
                if why is None and decomposed:
                    why = self._decomposed_unsupported(s, problem)
                if why is not None:
                    self.skipped.append((p, s, why))
                    continue
                out += [
                    Task(
                        p,
                        s,
                        k,
                        self.iterations,
                        self.n_init,
                        self.inference,
                        self.root_seed,
                        self.beta_schedule,
                        additive,
                        self.correlated and decomposed,
                        self.kernel,
                        priors,
                        self.outcome_transform if decomposed else "none",
                        self._copula(s, problem) if decomposed else False,
                        self.warm_start and surrogate in ("decomposed", "composed"),
                    )
                    for k in range(self.trials)
                ]
        return out

    def _copula(self, strategy: str, problem) -> bool:
        """The copula setting a decomposed strategy's runs get."""
        if self.copula is not None:
            return self.copula
        return copula_applies(get_strategy(strategy), problem, self.correlated, self.inference)

    def _decomposed_unsupported(self, strategy: str, problem) -> str | None:
        """Why the correlated or transformed components cannot run, or ``None``."""
        if (self.correlated or self.copula) and problem.n_components < 2:
            what = "the copula needs" if self.copula else "correlated components need"
            return f"{what} at least 2 components"
        if self.copula and not get_strategy(strategy).needs.joint:
            return "its bound uses each component's marginal only: the copula changes nothing"
        if self.outcome_transform != "none" and get_strategy(strategy).needs.linear_g:
            return (
                f"its analytic bound needs a linear g, and under outcome_transform="
                f"{self.outcome_transform!r} g is composed with the inverse transform"
            )
        return None


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
