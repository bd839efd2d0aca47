"""Evaluating the problem's simulator inside ``Optimizer.run`` under an error policy."""

from __future__ import annotations

import numpy as np

from pp_decomp.loop.records import NOISE_STREAM
from pp_decomp.validate import check_positive_int


def evaluate_with_policy(problem, x, rng, on_error: str, retries: int, transform: str = "none"):
    """``(y, None)`` for a successful evaluation at ``x``, or ``(None, reason)``.

    A failure is an exception of the simulator, a non-finite component or
    objective, or a component outside the outcome ``transform``'s domain (a
    value ≤ 0 under ``"log"``). ``on_error="raise"`` re-raises it (an output as a
    ValueError); ``"record"`` returns its reason; ``"retry"`` evaluates again up
    to ``retries`` times before returning the last reason.
    """
    from pp_decomp.composition.outcome import forward

    attempts = 1 + (retries if on_error == "retry" else 0)
    reason = ""
    for _ in range(attempts):
        try:
            y = np.asarray(problem.evaluate(x[None, :], seed=rng)[0], dtype=float)
        except Exception as err:  # the simulator is the user's code: any error is a failure
            if on_error == "raise":
                raise
            reason = f"{type(err).__name__}: {err}"
            continue
        h = problem.compose(y[None], x[None])
        if not (np.all(np.isfinite(y)) and np.all(np.isfinite(h))):
            reason = f"non-finite output: y={y.tolist()}, g(y; x)={float(h[0])}"
            if on_error == "raise":
                raise ValueError(f"the system's output at x={x.tolist()} is not finite ({reason})")
            continue
        try:
            forward(transform, y[None], problem.component_names)
        except ValueError as err:
            reason = f"{err}: y={y.tolist()}"
            if on_error == "raise":
                raise ValueError(f"the system's output at x={x.tolist()}: {reason}") from None
            continue
        return y, None
    return None, reason


class Outcomes:
    """Tells each evaluation's components ``y``, or its failure ``reason`` when ``y``
    is None, to ``opt``; ticks ``bar`` on a success.

    A run whose system fails ``limit`` times in a row raises, instead of asking
    forever (a simulator that fails everywhere, or wherever the acquisition
    looks): everything told so far stays in the results and the checkpoint, and
    calling ``run`` again goes on from there.
    """

    def __init__(self, opt, bar, limit: int):
        self.opt, self.bar, self.limit = opt, bar, limit
        self.in_a_row = 0

    def tell(self, x, y, reason) -> None:
        """Tell ``y`` at ``x``, or the failure ``reason`` (``y`` None)."""
        if y is not None:
            self.in_a_row = 0
            self.opt.tell(x, y)
            if self.bar is not None:
                self.bar.update()
            return
        self.opt.tell_failure(x, reason)
        self.in_a_row += 1
        if self.in_a_row >= self.limit:
            raise RuntimeError(
                f"the last {self.in_a_row} evaluations all failed (max_failures_in_a_row="
                f"{self.limit}); the last at x={np.asarray(x).tolist()}: {reason}. The "
                f"{self.opt.n} successful evaluations and {len(self.opt.failures)} failures "
                "are kept (results, checkpoint); call run again to go on"
            )


def _check_workers(opt, workers, scheduler) -> None:
    if workers is not None:
        workers = check_positive_int(workers, "workers")
        if workers > 1 and opt.settings.correlated:
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
    from pp_decomp._progress import bar_context, status

    _check_workers(opt, workers, scheduler)
    max_failures_in_a_row = check_positive_int(max_failures_in_a_row, "max_failures_in_a_row")
    bar = None
    if progress:
        from tqdm.auto import tqdm

        s = opt.settings
        desc = f"{opt.problem.name}/{s.strategy} ({s.inference}, seed {s.seed})"
        bar = tqdm(desc=desc, unit="eval", initial=opt.n, total=n_iter)
    outcomes = Outcomes(opt, bar, max_failures_in_a_row)
    transform = opt.settings.outcome_transform
    try:
        with bar_context(bar):
            if workers is not None or scheduler is not None:
                from pp_decomp.loop.workers import run_workers

                run_workers(opt, n_iter, workers, scheduler, on_error, retries, outcomes)
            while opt.n < n_iter:
                status("choosing the next input")
                x = opt.ask()
                rng = opt._rng(opt.pending.record(x).get("key", opt._key), NOISE_STREAM)
                status("evaluating")
                outcomes.tell(
                    x, *evaluate_with_policy(opt.problem, x, rng, on_error, retries, transform)
                )
    finally:  # a stopped run leaves no half-drawn bar behind
        if bar is not None:
            bar.close()
