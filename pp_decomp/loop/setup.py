"""What a run fixes when it starts, and the steps a driver of the loop calls.

:class:`RunSetup` is the read-only part of a run that every step reads (the
problem, the problem as the GPs see it, the settings and the strategy);
:class:`~pp_decomp.loop.state.LoopState` is the part a step reads and the
optimiser writes. The step's functions receive these (and the updater), never
the optimiser (docs/architecture.md).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from pp_decomp.loop.settings import RunSettings
from pp_decomp.problem import Problem
from pp_decomp.strategies import Strategy


@dataclass(frozen=True)
class RunSetup:
    """A run's problem, its ``model_problem`` (the components under the outcome
    transform, :func:`~pp_decomp.problem.model_problem`; a network strategy's is the
    problem itself, its surrogate applying each node's transform), its
    validated ``settings`` and its ``strategy``; fixed for the run's life.

    Examples
    --------
    >>> from pp_decomp.models import get_problem
    >>> from pp_decomp.loop.settings import RunSettings
    >>> from pp_decomp.strategies import get_strategy
    >>> p = get_problem("synthetic", seed=0)
    >>> setup = RunSetup(p, p, RunSettings.build(p, "d-gpucb"), get_strategy("d-gpucb"))
    >>> setup.strategy.surrogate, setup.settings.inference.method
    ('decomposed', 'map')
    """

    problem: Problem
    model_problem: Problem
    settings: RunSettings
    strategy: Strategy


@dataclass(frozen=True)
class Steps:
    """The public steps of a run that a driver of the loop calls (``Optimizer.run``,
    the Dask workers, the simulated-time study): bound methods of the optimiser.

    ``ask(q)`` returns the inputs to have in flight ``(q, d)`` (one ``(d,)`` with
    ``q=None``), ``tell(x, y)`` and ``tell_failure(x, reason)`` record an outcome,
    ``results()`` is the run so far.
    """

    ask: Callable
    tell: Callable
    tell_failure: Callable
    results: Callable
