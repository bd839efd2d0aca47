"""``Optimizer.run``: ask, evaluate under the error policy, tell, one at a time or on Dask."""

from __future__ import annotations

from pp_decomp._progress import bar_context, status
from pp_decomp.loop.evaluate import Outcomes, evaluate_with_policy
from pp_decomp.loop.workers import run_workers
from pp_decomp.validate import check_positive_int


def _check_workers(opt, workers, scheduler) -> None:
    if workers is not None:
        workers = check_positive_int(workers, "workers")
        if workers > 1 and opt.settings.model.correlated:
            raise ValueError(
                f"workers={workers}: correlated=True chooses one input at a time after "
                "the design; run with workers=1, or with independent components"
            )
        if workers > 1 and not opt.strategy.needs.batch:
            raise ValueError(
                f"workers={workers}: strategy {opt.strategy.name!r} chooses one input "
                "at a time; use a decomposed or composed strategy for parallel evaluation"
            )
    if scheduler is not None and not isinstance(scheduler, str):
        raise TypeError(f"scheduler must be an address string; got {scheduler!r}")


def run_loop(
    opt,
    n_iter: int,
    progress: bool,
    on_error: str,
    retries: int,
    workers,
    scheduler,
    max_failures_in_a_row: int,
):
    """``Optimizer.run``: ask, evaluate under the error policy, tell, until ``n_iter``
    evaluations succeeded, here one at a time or with ``workers``/``scheduler``
    on Dask (:mod:`pp_decomp.loop.workers`); long phases show in the progress bar."""
    _check_workers(opt, workers, scheduler)
    max_failures_in_a_row = check_positive_int(max_failures_in_a_row, "max_failures_in_a_row")
    bar = None
    if progress:
        from tqdm.auto import tqdm

        s = opt.settings
        desc = f"{opt.problem.name}/{s.strategy} ({s.inference.method}, seed {s.seed})"
        bar = tqdm(desc=desc, unit="eval", initial=opt.n, total=n_iter)
    outcomes = Outcomes(opt, bar, max_failures_in_a_row)
    transform = opt.settings.model.outcome_transform
    try:
        with bar_context(bar):
            if workers is not None or scheduler is not None:
                run_workers(opt, n_iter, workers, scheduler, on_error, retries, outcomes)
            while opt.n < n_iter:
                status("choosing the next input")
                x = opt.ask()
                rng = opt.state.noise_rng(x)
                status("evaluating")
                outcomes.tell(
                    x, *evaluate_with_policy(opt.problem, x, rng, on_error, retries, transform)
                )
    finally:  # a stopped run leaves no half-drawn bar behind
        if bar is not None:
            bar.close()
