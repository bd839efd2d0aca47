"""``Optimizer.ask``: choosing inputs, one at a time or in batches with others pending,
from the step's :class:`~pp_decomp.strategies.Context` (:func:`build_context`, what
a strategy sees), guarded against re-asking failed or pending inputs.

Asked inputs stay pending until told (in any order). A new input is chosen
with every pending input hallucinated
(:mod:`pp_decomp.acquisition.surrogate`) and excluded, so a batch holds
distinct inputs that do not duplicate each other's information. New inputs
are numbered by every input asked before them (told, failed or pending), so
their random numbers never repeat and a run resumed from its checkpoint,
which holds the pending inputs, makes the same choices.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from pp_decomp._runtime import warn
from pp_decomp.acquisition import ComposedSurrogate, DecomposedSurrogate
from pp_decomp.acquisition.surrogate import decomposed_surrogate
from pp_decomp.acquisition.surrogate import hallucinate as hallucinate_pending
from pp_decomp.loop.records import (
    ACQ_STREAM,
    FIT_STREAM,
    INIT_STREAM,
    FitNotes,
    StepRecord,
    criticism_record,
)
from pp_decomp.loop.setup import RunSetup
from pp_decomp.loop.state import LoopState
from pp_decomp.loop.updaters import Updater, loop_data
from pp_decomp.network import NetworkSurrogate
from pp_decomp.optim import exclusion_radius, is_excluded
from pp_decomp.problem import forward
from pp_decomp.space import CandidateSet
from pp_decomp.strategies import Context


@dataclass(frozen=True)
class Decision:
    """One new input chosen by :func:`ask_one`: ``x (d,)``, its step record, and the
    GPs by name it was chosen with (``None`` for an initial-design point). The
    optimiser takes it: the input becomes pending and the GPs its current models."""

    x: np.ndarray
    record: dict
    models: dict | None = None


def decisions(
    setup: RunSetup, state: LoopState, updater: Updater | None, q: int
) -> Iterator[Decision]:
    """The new inputs ``ask(q)`` needs beside the pending ones, one at a time: each is
    chosen once the caller has taken the one before (made it pending), so that it is
    chosen with that one hallucinated. ``q`` inputs in flight are refused where the
    run cannot have them (a strategy that chooses one at a time, too few candidates)."""
    new = q - len(state.pending)
    if new > 0:
        _check_batch(setup, state, q, new)
    for _ in range(new):
        yield ask_one(setup, state, updater)


def in_flight(state: LoopState, workers: int, n_iter: int) -> int:
    """How many inputs an asynchronous run keeps in flight: ``min(workers, n_iter - n)``,
    capped while the model is young.

    * While the initial design is in flight, only its inputs are: a run with more
      workers than design points would otherwise fill them with random inputs
      (no GP is fitted on fewer than 2 results) or with inputs chosen from two
      or three results.
    * After it, at most one input more than the model-chosen results told
      (``1 + #acquisition results``), so the batch grows to ``workers`` over the
      first ``workers - 1`` results, much as GP-AUCB (Desautels et al. 2014)
      grows its batches as the posterior firms up (small batches first).

    A user who wants every worker busy at once asks ``ask(q)`` directly. Why the
    caps: docs/design.md, "Why these defaults".
    """
    need = min(workers, n_iter - state.n)
    design_pending = sum(rec["phase"] == "init" for _, rec in state.pending.items)
    left = state.design_left
    if design_pending or left:
        return min(need, design_pending + left)
    chosen = sum(r["phase"] == "acquisition" for r in state.records)
    return min(need, chosen + 1)


def _check_batch(setup: RunSetup, state: LoopState, q: int, new: int) -> None:
    s, pending = setup.strategy, len(state.pending)
    # some of the new inputs are chosen by the model, with others in flight
    if setup.settings.model.correlated and pending + new > 1 and new > state.design_left:
        raise ValueError(
            f"correlated=True chooses one input at a time after the design: ask(q={q}) "
            f"with {pending} pending input(s) would choose with inputs pending; "
            "tell their results first (independent components support batches)"
        )
    if (q > 1 or pending) and not s.needs.batch:
        raise ValueError(
            f"strategy {s.name!r} chooses one input at a time: ask(q={q}) with "
            f"{pending} pending input(s) needs a strategy that supports batches "
            "(the decomposed, composed and network ones)"
        )
    domain = setup.problem.domain
    if isinstance(domain, CandidateSet):
        free = int(np.sum(~is_excluded(domain.X, state.busy(), domain.widths)))
        if new > free:
            raise ValueError(
                f"ask(q={q}) needs {new} new candidate(s) but only {free} of the "
                f"{domain.size} are neither pending ({pending}) nor failed"
            )


def ask_one(
    setup: RunSetup, state: LoopState, updater: Updater | None, key: int | None = None
) -> Decision:
    """One new input, chosen with the pending ones hallucinated (the updater brings
    its models up to date first); nothing of the run is written here. ``key``: the
    step's random streams' (default: every input asked before it, plus one)."""
    key = state.next_key + len(state.pending) if key is None else key
    start = time.perf_counter()
    # with the design still in flight, a GP cannot be fitted on fewer than 2 results:
    # more random inputs are asked instead (never in a sequential run)
    if state.design_left or state.n < min(2, state.n_init):
        x = design_point(state, state.rng(key, INIT_STREAM), state.busy())
        seconds = time.perf_counter() - start
        rec = StepRecord("init", key, ask_seconds=seconds, gamma_next=state.gamma_asked)
        return Decision(x, rec.as_dict())
    models, notes = {}, FitNotes()
    if updater is not None:
        models = updater.update(loop_data(setup, state), key, state.rng(key, FIT_STREAM), notes)
    fit_seconds = time.perf_counter() - start
    names = setup.model_problem.component_names
    transform = setup.settings.model.outcome_transform
    criticism = criticism_record(models, transform, names, notes.refit)
    t = state.n + len(state.pending) + 1
    ctx = build_context(setup, state, models, t, state.rng(key, ACQ_STREAM))
    x, value = setup.strategy.choose(ctx)
    x = chosen_or_fallback(setup.problem.domain, x, ctx.excluded, ctx.rng)
    beta = ctx.beta
    if setup.strategy.surrogate == "none":
        beta, fit_seconds = np.nan, 0.0
    rec = StepRecord(
        "acquisition",
        key,
        beta=beta,
        acq_value=value,
        fit_seconds=fit_seconds,
        ask_seconds=time.perf_counter() - start,
        gamma_next=setup.strategy.state_after(ctx, x),
        notes=notes,
        criticism=criticism,
    )
    return Decision(x, rec.as_dict(), models)


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
    elif kind == "network":
        network = NetworkSurrogate.of(
            problem, models, s.model.copula, state.n, s.model.outcome_transform
        )
        surrogates["network"] = network.believing(P)
    if kind == "composed" or setup.strategy.with_composed:
        surrogates["composed"] = hallucinate_pending(ComposedSurrogate(models["composed"]), P)
    best = -np.inf
    if state.n:
        best = float(np.max(setup.problem.signed_objective(state.Y, state.X)))
    if len(P) and kind in ("decomposed", "composed", "network"):
        best = max(best, _believed_best(surrogates[kind], P))
    return Context(
        problem,
        t,
        float(s.acquisition.beta(t)) if beta is None else float(beta),
        rng,
        excluded=state.busy(),
        X=state.X,
        Y=state.Y if kind == "network" else forward(s.model.outcome_transform, state.Y),
        best=best,
        gamma=state.gamma_asked,
        mc_samples=s.acquisition.mc_samples,
        method=s.acquisition.method,
        levels=s.model.additive.levels,
        **surrogates,
    )


def _believed_best(surrogate, P: np.ndarray) -> float:
    """Best signed objective believed at the pending inputs: ``h`` of the posterior means
    (a network's: of the means carried down the graph)."""
    if isinstance(surrogate, NetworkSurrogate):
        return float(np.max(surrogate.believed_objective(P)))
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
