"""``Optimizer.ask``: choosing inputs, one at a time or in batches with others pending.

Asked inputs stay pending until told (in any order). A new input is chosen
with every pending input hallucinated
(:mod:`pp_decomp.acquisition.hallucination`) and excluded, so a batch holds
distinct inputs that do not duplicate each other's information. New inputs
are numbered by every input asked before them (told, failed or pending), so
their random numbers never repeat and a run resumed from its checkpoint,
which holds the pending inputs, makes the same choices.
"""

from __future__ import annotations

import time

import numpy as np

from pp_decomp.loop.context import build_context, chosen_or_fallback, design_point
from pp_decomp.loop.records import (
    ACQ_STREAM,
    FIT_STREAM,
    INIT_STREAM,
    criticism_record,
    step_record,
)
from pp_decomp.loop.updaters import loop_data
from pp_decomp.optim import is_excluded
from pp_decomp.space import CandidateSet
from pp_decomp.validate import check_positive_int


def ask_batch(opt, q: int) -> tuple[np.ndarray, bool]:
    """``q`` inputs to have in flight, ``(q, d)``: the pending ones oldest first,
    then new ones; and whether new ones were chosen (then the caller checkpoints)."""
    q = check_positive_int(q, "q")
    new = q - len(opt.pending)
    if new > 0:
        _check_batch(opt, q, new)
        for _ in range(new):
            _ask_one(opt)
    return opt.pending.X[:q].copy(), new > 0


def in_flight(opt, workers: int, n_iter: int) -> int:
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
    need = min(workers, n_iter - opt.n)
    design_pending = sum(rec["phase"] == "init" for _, rec in opt.pending.items)
    left = opt.state.design_left
    if design_pending or left:
        return min(need, design_pending + left)
    chosen = sum(r["phase"] == "acquisition" for r in opt.records)
    return min(need, chosen + 1)


def _check_batch(opt, q: int, new: int) -> None:
    s = opt.strategy
    # some of the new inputs are chosen by the model, with others in flight
    if opt.settings.model.correlated and len(opt.pending) + new > 1 and new > opt.state.design_left:
        raise ValueError(
            f"correlated=True chooses one input at a time after the design: ask(q={q}) "
            f"with {len(opt.pending)} pending input(s) would choose with inputs pending; "
            "tell their results first (independent components support batches)"
        )
    if (q > 1 or len(opt.pending)) and not s.needs.batch:
        raise ValueError(
            f"strategy {s.name!r} chooses one input at a time: ask(q={q}) with "
            f"{len(opt.pending)} pending input(s) needs a strategy that supports batches "
            "(the decomposed and composed ones)"
        )
    domain = opt.problem.domain
    if isinstance(domain, CandidateSet):
        free = int(np.sum(~is_excluded(domain.X, opt.state.busy(), domain.widths)))
        if new > free:
            raise ValueError(
                f"ask(q={q}) needs {new} new candidate(s) but only {free} of the "
                f"{domain.size} are neither pending ({len(opt.pending)}) nor failed"
            )


def _gamma(opt) -> float:
    """GP-MI's state after every input asked so far (the last pending one's, if any)."""
    return float(opt.pending.items[-1][1]["gamma_next"]) if len(opt.pending) else opt.gamma


def _ask_one(opt) -> None:
    """Choose one new input, with the pending ones hallucinated; add it to the pending."""
    state = opt.state
    key, start = state.next_key + len(state.pending), time.perf_counter()
    rec = step_record("init", _gamma(opt))
    busy = state.busy()
    # with the design still in flight, a GP cannot be fitted on fewer than 2 results:
    # more random inputs are asked instead (never in a sequential run)
    if state.design_left or state.n < min(2, state.n_init):
        x = design_point(state, state.rng(key, INIT_STREAM), busy)
    else:
        models = {}
        if opt.updater is not None:
            models = opt.updater.update(loop_data(opt), key, state.rng(key, FIT_STREAM), rec)
        opt.models = models
        opt.draw_log.add(key, models)
        rec["fit_seconds"] = time.perf_counter() - start
        names = opt.model_problem.component_names
        transform = opt.settings.model.outcome_transform
        rec["criticism"] = criticism_record(models, transform, names, rec["refit"])
        t = opt.n + len(opt.pending) + 1
        ctx = build_context(opt, models, t, state.rng(key, ACQ_STREAM), busy, _gamma(opt))
        x, value = opt.strategy.choose(ctx)
        x = chosen_or_fallback(opt.problem.domain, x, busy, ctx.rng)
        rec.update(phase="acquisition", beta=ctx.beta, acq_value=value)
        rec["gamma_next"] = opt.strategy.state_after(ctx, x)
        if opt.strategy.surrogate == "none":
            rec.update(beta=np.nan, fit_seconds=0.0)
    rec["ask_seconds"] = time.perf_counter() - start
    rec["key"] = key
    state.pending.add(x, rec)
