"""``Optimizer.run``: ask, evaluate under the error policy, tell, one at a time or on Dask."""

from __future__ import annotations

from pp_decomp._runtime import bar_context, status
from pp_decomp.loop.evaluate import ErrorPolicy, Outcomes, evaluate_with_policy
from pp_decomp.loop.setup import RunSetup, Steps
from pp_decomp.loop.state import LoopState
from pp_decomp.loop.workers import run_workers
from pp_decomp.validate import check_positive_int


def _check_workers(setup: RunSetup, workers, scheduler) -> None:
    if workers is not None:
        workers = check_positive_int(workers, "workers")
        if workers > 1 and setup.settings.model.correlated:
            raise ValueError(
                f"workers={workers}: correlated=True chooses one input at a time after "
                "the design; run with workers=1, or with independent components"
            )
        if workers > 1 and not setup.strategy.needs.batch:
            raise ValueError(
                f"workers={workers}: strategy {setup.strategy.name!r} chooses one input "
                "at a time; use a decomposed, composed or network strategy for parallel evaluation"
            )
    if scheduler is not None and not isinstance(scheduler, str):
        raise TypeError(f"scheduler must be an address string; got {scheduler!r}")


def run_loop(
    setup: RunSetup,
    state: LoopState,
    steps: Steps,
    n_iter: int,
    progress: bool,
    policy: ErrorPolicy,
    workers,
    scheduler,
):
    """``Optimizer.run``: ask, evaluate under the error ``policy``, tell (through the
    run's ``steps``), until ``n_iter`` evaluations succeeded, here one at a time or
    with ``workers``/``scheduler`` on Dask (:mod:`pp_decomp.loop.workers`); long
    phases show in the progress bar."""
    _check_workers(setup, workers, scheduler)
    s, problem = setup.settings, setup.problem
    bar = None
    if progress:
        from tqdm.auto import tqdm

        desc = f"{problem.name}/{s.strategy} ({s.inference.method}, seed {s.seed})"
        bar = tqdm(desc=desc, unit="eval", initial=state.n, total=n_iter)
    outcomes = Outcomes(steps, state, bar, policy.max_in_a_row)
    transform = s.model.outcome_transform
    try:
        with bar_context(bar):
            if workers is not None or scheduler is not None:
                run_workers(setup, state, steps, n_iter, workers, scheduler, policy, outcomes)
            while state.n < n_iter:
                status("choosing the next input")
                x = steps.ask()
                rng = state.noise_rng(x)
                status("evaluating")
                y, reason = evaluate_with_policy(
                    problem, x, rng, policy.on_error, policy.retries, transform
                )
                outcomes.tell(x, y, reason)
    finally:  # a stopped run leaves no half-drawn bar behind
        if bar is not None:
            bar.close()
