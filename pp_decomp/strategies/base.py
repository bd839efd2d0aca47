"""What a strategy is: a named rule, the surrogate it uses and what it needs.

Every strategy declares its needs (:class:`Needs`) so that one function
(:func:`pp_decomp.strategies.unsupported`) decides, before any evaluation,
whether it can run on a problem with given settings; the optimiser, the
benchmark and the command line all ask that function.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from pp_decomp.acquisition.surrogate import ComposedSurrogate, DecomposedSurrogate, with_screen
from pp_decomp.additive.gp import AdditiveGP
from pp_decomp.optim import maximize
from pp_decomp.problem import Problem
from pp_decomp.space import Box

SURROGATES = ("decomposed", "composed", "additive", "peer", "none")


@dataclass
class Context:
    """Everything a strategy may use at one step, built by the loop
    (:func:`pp_decomp.loop.ask.build_context`).

    ``problem``: the problem as the GPs see it; ``t``, ``beta``: the step and its
    ``β_t``; ``rng``: the step's acquisition stream. ``decomposed`` / ``composed``
    are the surrogates of the strategy's kind (both for a decomposed strategy
    ``with_composed``), ``additive`` a fitted additive GP; ``best`` is the incumbent
    of the signed objective ``h = sign·f``, ``gamma`` GP-MI's state; ``excluded``
    ``(k, d)`` the inputs not to ask (failed, pending); ``X (n, d)``, ``Y (n, J)`` the
    observations (``Y`` under the outcome transform; peers fit their own models).
    """

    problem: Problem
    t: int
    beta: float
    rng: np.random.Generator
    excluded: np.ndarray
    X: np.ndarray
    Y: np.ndarray
    decomposed: DecomposedSurrogate | None = None
    composed: ComposedSurrogate | None = None
    additive: AdditiveGP | None = None
    best: float = -np.inf
    gamma: float = 0.0
    mc_samples: int = 512
    method: str = "auto"
    levels: int = 25


@dataclass(frozen=True)
class Needs:
    """What a strategy needs of the problem and of the run.

    Parameters
    ----------
    linear_g : the composition must be linear (``problem.weights``)
    incumbent : it improves on the best observation, so ``n_init >= 1``
    box : it maximises group by group: a Box without linear constraints
    structure : key of the problem's known structure in ``problem.metadata``
    fast_path : it can run on the fast full-Bayes path (it uses component or
        composed GPs, which that path updates)
    known_kernels : it can run with ``inference="fixed"``
    peer : the optional package a peer strategy needs (``"botorch"``)
    batch : it can choose with other inputs pending (``ask(q > 1)``, asynchronous
        runs): the strategies whose surrogates hallucinate pending inputs
    joint : its acquisition uses the components' joint posterior (samples, or the
        linear composition's variance), which a copula changes; the Lipschitz
        bounds use each component's marginal only
    """

    linear_g: bool = False
    incumbent: bool = False
    box: bool = False
    structure: str | None = None
    fast_path: bool = True
    known_kernels: bool = True
    peer: str | None = None
    batch: bool = True
    joint: bool = True


@dataclass(frozen=True)
class AdditiveSpec:
    """How an additive strategy learns its structure.

    ``method``: ``"kandasamy"`` (random disjoint decompositions scored by the
    marginal likelihood, hyperparameters by ``inference``) or ``"rolland"``
    (Gibbs sampling over a dependency graph); ``structure``: ``"learn"`` or
    ``"oracle"`` (the problem's known groups or edges); ``overlap``: whether
    Rolland's groups may overlap.
    """

    method: str
    structure: str = "learn"
    overlap: bool = True


@dataclass(frozen=True)
class Strategy:
    """A named rule for choosing the next input.

    ``build(ctx)`` returns an acquisition ``X (m, d) -> (m,)`` maximised over the
    domain; ``choose_fn(ctx)`` chooses directly (Thompson, random, additive).
    ``after_choice(ctx, x)``, if given, returns the strategy's state after
    choosing ``x`` (GP-MI's ``γ̂``). ``with_composed``: a decomposed strategy that
    also fits one GP of the composed output, given as ``ctx.composed``
    (:class:`~pp_decomp.acquisition.SmallerUCB`). ``bound``: a decomposed strategy
    whose acquisition is an upper confidence bound of ``h`` (default ``False``), the
    bound :func:`~pp_decomp.strategies.decomposed_bound` gives the step.

    Example
    -------
    >>> from pp_decomp.strategies import STRATEGIES
    >>> STRATEGIES["d-gpucb-mc"].bound, STRATEGIES["d-ei"].bound
    (True, False)
    """

    name: str
    surrogate: str
    description: str
    build: Callable | None = None
    choose_fn: Callable | None = None
    needs: Needs = field(default_factory=Needs)
    additive: AdditiveSpec | None = None
    after_choice: Callable | None = None
    with_composed: bool = False
    bound: bool = False

    def choose(self, ctx: Context) -> tuple[np.ndarray, float]:
        """The next input and its acquisition value."""
        if self.choose_fn is not None:
            return self.choose_fn(ctx)
        acq = self.build(ctx)
        if isinstance(ctx.problem.domain, Box):
            acq = with_screen(acq)
        return maximize(
            acq, ctx.problem.domain, seed=ctx.rng, method=ctx.method, exclude=ctx.excluded
        )

    def state_after(self, ctx: Context, x) -> float:
        """GP-MI's ``γ̂`` after choosing ``x`` (unchanged for the other strategies)."""
        return ctx.gamma if self.after_choice is None else self.after_choice(ctx, x)
