"""Evaluating the problem's simulator inside ``Optimizer.run`` under an error policy."""

from __future__ import annotations

import numpy as np

from pp_decomp.loop.records import NOISE_STREAM


def evaluate_with_policy(problem, x, rng, on_error: str, retries: int):
    """``(y, None)`` for a successful evaluation at ``x``, or ``(None, reason)``.

    A failure is an exception of the simulator or a non-finite component or
    objective. ``on_error="raise"`` re-raises it (a non-finite output as a
    ValueError); ``"record"`` returns its reason; ``"retry"`` evaluates again up
    to ``retries`` times before returning the last reason.
    """
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
        if np.all(np.isfinite(y)) and np.all(np.isfinite(h)):
            return y, None
        reason = f"non-finite output: y={y.tolist()}, g(y; x)={float(h[0])}"
        if on_error == "raise":
            raise ValueError(f"the system's output at x={x.tolist()} is not finite ({reason})")
    return None, reason


def run_loop(opt, n_iter: int, progress: bool, on_error: str, retries: int) -> None:
    """``Optimizer.run``: ask, evaluate under the error policy, tell, until ``n_iter``
    evaluations succeeded; long phases show in the progress bar."""
    from pp_decomp._progress import bar_context, status

    bar = None
    if progress:
        from tqdm.auto import tqdm

        desc = f"{opt.problem.name}/{opt.strategy.name}"
        bar = tqdm(desc=desc, unit="eval", initial=opt.n, total=n_iter)
    with bar_context(bar):
        while opt.n < n_iter:
            status("choosing the next input")
            x, rng = opt.ask(), opt._rng(opt._key, NOISE_STREAM)
            status("evaluating")
            y, reason = evaluate_with_policy(opt.problem, x, rng, on_error, retries)
            if y is None:
                opt.tell_failure(x, reason)
            else:
                opt.tell(x, y)
                if bar is not None:
                    bar.update()
    if bar is not None:
        bar.close()
