"""What a strategy sees at one step, and the guard against re-asking failed inputs."""

from __future__ import annotations

import numpy as np

from pp_decomp._runtime import warn
from pp_decomp.acquisition import ComposedSurrogate, DecomposedSurrogate
from pp_decomp.acquisition.hallucination import hallucinate as hallucinate_pending
from pp_decomp.acquisition.surrogate import decomposed_surrogate
from pp_decomp.composition.outcome import forward
from pp_decomp.loop.setup import RunSetup
from pp_decomp.loop.state import LoopState
from pp_decomp.optim import exclusion_radius, is_excluded
from pp_decomp.space import CandidateSet
from pp_decomp.strategies import Context


def build_context(
    setup: RunSetup,
    state: LoopState,
    models: dict,
    t: int,
    rng: np.random.Generator,
    *,
    beta: float | None = None,
    hallucinate: bool = True,
) -> Context:
    """The :class:`~pp_decomp.strategies.Context` of step ``t`` from the step's fitted GPs.

    Pending inputs are hallucinated in the surrogates (unless ``hallucinate=False``:
    the bound a choice maximised, shown beside its posterior) and excluded, and the
    incumbent is the best of the observed and the believed values at them; ``beta``
    defaults to the schedule's ``β_t``.
    """
    s, kind, problem = setup.settings, setup.strategy.surrogate, setup.model_problem
    P = state.pending.X if hallucinate else state.pending.X[:0]
    surrogates = {}
    if kind == "decomposed":
        comps = [models[n] for n in problem.component_names]
        surrogate = decomposed_surrogate(comps, problem, copula=s.model.copula)
        surrogates["decomposed"] = hallucinate_pending(surrogate, P)
    elif kind == "additive":
        surrogates["additive"] = models["additive"]
    if kind == "composed" or setup.strategy.with_composed:
        surrogates["composed"] = hallucinate_pending(ComposedSurrogate(models["composed"]), P)
    best = -np.inf
    if state.n:
        best = float(np.max(setup.problem.signed_objective(state.Y, state.X)))
    if len(P) and kind in ("decomposed", "composed"):
        best = max(best, _believed_best(surrogates[kind], P))
    return Context(
        problem,
        t,
        float(s.acquisition.beta(t)) if beta is None else float(beta),
        rng,
        excluded=state.busy(),
        X=state.X,
        Y=forward(s.model.outcome_transform, state.Y),
        best=best,
        gamma=state.gamma_asked,
        mc_samples=s.acquisition.mc_samples,
        method=s.acquisition.method,
        levels=s.model.additive.levels,
        **surrogates,
    )


def _believed_best(surrogate, P: np.ndarray) -> float:
    """Best signed objective believed at the pending inputs: ``h`` of the posterior means."""
    if isinstance(surrogate, DecomposedSurrogate):
        return float(np.max(surrogate.h(surrogate.moments(P)[0], P)))
    return float(np.max(surrogate.moments(P)[0]))


def chosen_or_fallback(domain, x, excluded, rng) -> np.ndarray:
    """``x``, unless it is excluded (failed, or pending): then a random feasible one that is not.

    Maximisers skip excluded inputs themselves; this guards the strategies that
    choose otherwise (additive maximisers, a box's random design point).
    """
    x = np.asarray(x, dtype=float)
    if not is_excluded(x[None], excluded, domain.widths, exclusion_radius(domain))[0]:
        return x
    if isinstance(domain, CandidateSet):
        free = ~is_excluded(domain.X, excluded, domain.widths)
        if not free.any():
            raise RuntimeError("every candidate has failed: nothing is left to ask")
        # one index drawn so consumes rng as rng.integers(len(free)): runs keep their choices
        choice = domain.sample(1, seed=rng, keep=free)[0]
    else:
        choice = domain.sample(1, seed=rng)[0]
    warn(
        f"the strategy chose x={x.tolist()}, which failed before or is pending; asking a "
        f"random feasible input instead ({choice.tolist()})",
        RuntimeWarning,
    )
    return choice


def design_point(state: LoopState, rng: np.random.Generator, excluded) -> np.ndarray:
    """The next point of the initial design; after failures there, fresh random points."""
    used = state.asked_init
    if used < len(state.init_design):
        return state.init_design[used]
    x = state.domain.sample(1, seed=rng)[0]
    return chosen_or_fallback(state.domain, x, excluded, rng)
