"""Evaluating the problem's simulator inside ``Optimizer.run`` under an error policy."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from pp_decomp.loop.setup import Steps
from pp_decomp.loop.state import LoopState
from pp_decomp.problem import forward
from pp_decomp.validate import check_choice, check_positive_int

ON_ERROR = ("raise", "record", "retry")


@dataclass(frozen=True)
class ErrorPolicy:
    """What a run does when an evaluation fails (an exception, a non-finite output):
    ``on_error`` ``"raise"`` stops, ``"record"`` tells the failure, ``"retry"``
    evaluates again ``retries`` times first; ``max_in_a_row`` failures in a row raise.

    >>> ErrorPolicy("record").max_in_a_row
    25
    """

    on_error: str = "raise"
    retries: int = 2
    max_in_a_row: int = 25

    def __post_init__(self):
        check_choice(self.on_error, "on_error", ON_ERROR)
        check_positive_int(self.max_in_a_row, "max_failures_in_a_row")


def evaluate_with_policy(problem, x, rng, on_error: str, retries: int, transform: str = "none"):
    """``(y, None)`` for a successful evaluation at ``x``, or ``(None, reason)``.

    A failure is an exception of the simulator, a non-finite component or
    objective, or a component outside the outcome ``transform``'s domain (a
    value ≤ 0 under ``"log"``). ``on_error="raise"`` re-raises it (an output as a
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
    is None, through the run's ``steps``; ticks ``bar`` on a success.

    A run whose system fails ``limit`` times in a row raises, instead of asking
    forever (a simulator that fails everywhere, or wherever the acquisition
    looks): everything told so far stays in the results and the checkpoint, and
    calling ``run`` again goes on from there.
    """

    def __init__(self, steps: Steps, state: LoopState, bar, limit: int):
        self.steps, self.state, self.bar, self.limit = steps, state, bar, limit
        self.in_a_row = 0

    def tell(self, x, y, reason) -> None:
        """Tell ``y`` at ``x``, or the failure ``reason`` (``y`` None)."""
        if y is not None:
            self.in_a_row = 0
            self.steps.tell(x, y)
            if self.bar is not None:
                self.bar.update()
            return
        self.steps.tell_failure(x, reason)
        self.in_a_row += 1
        if self.in_a_row >= self.limit:
            raise RuntimeError(
                f"the last {self.in_a_row} evaluations all failed (max_failures_in_a_row="
                f"{self.limit}); the last at x={np.asarray(x).tolist()}: {reason}. The "
                f"{self.state.n} successful evaluations and {len(self.state.failures)} failures "
                "are kept (results, checkpoint); call run again to go on"
            )
