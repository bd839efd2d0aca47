"""Failed evaluations as first-class data.

A system that fails at an input (a simulator crash, a lost sample, a non-finite
output) is told with ``Optimizer.tell_failure(x, reason)``. The failure is kept
in the results (dimension ``failure``) and the checkpoint, and the strategy does
not ask that input again once it has failed more than ``max_retries`` times:
on a candidate set it is masked, on a box the acquisition is ``-inf`` within
0.1% of the domain's extent of it in every coordinate
(:data:`pp_decomp.optim.maximizers.BOX_RADIUS`). A run stops with an error after
``max_failures_in_a_row`` failures in a row (``Optimizer.run``).
"""

from __future__ import annotations

import numpy as np
import xarray as xr

from pp_decomp.optim import TOL, within


class FailureLog:
    """The failed evaluations of a run, in the order they were told."""

    def __init__(self, dim: int, max_retries: int = 0):
        self.dim, self.max_retries = dim, int(max_retries)
        self.X = np.empty((0, dim))
        self.reasons: list[str] = []
        self.after: list[int] = []  # successful evaluations before each failure
        self.phases: list[str] = []  # "init" or "acquisition": where the input came from

    def __len__(self) -> int:
        return len(self.reasons)

    def record(self, x: np.ndarray, reason: str, n_done: int, phase: str) -> None:
        """Add a failure at ``x (d,)`` after ``n_done`` successful evaluations."""
        self.X = np.vstack([self.X, np.asarray(x, dtype=float)[None]])
        self.reasons.append(str(reason))
        self.after.append(int(n_done))
        self.phases.append(str(phase))

    def excluded(self, scale: np.ndarray, radius: float = 10 * TOL) -> np.ndarray:
        """Inputs with more than ``max_retries`` failures within ``radius × scale``
        of them (``scale`` (d,) the domain's extent; see
        :func:`~pp_decomp.optim.maximizers.exclusion_radius`): (k, d)."""
        if not len(self) or self.max_retries == 0:
            return self.X
        return self.X[within(self.X, self.X, scale, radius).sum(axis=1) > self.max_retries]

    def state(self) -> dict:
        """JSON-serialisable form for the checkpoint."""
        return {
            "X": self.X.tolist(),
            "reasons": self.reasons,
            "after": self.after,
            "phases": self.phases,
        }

    def restore(self, state: dict) -> None:
        """Inverse of :meth:`state`."""
        self.X = np.asarray(state.get("X", []), dtype=float).reshape(-1, self.dim)
        self.reasons = list(state.get("reasons", []))
        self.after = [int(a) for a in state.get("after", [])]
        self.phases = list(state.get("phases", []))

    def to_dataset(self) -> xr.Dataset:
        """``failed_x(failure, dim)``, ``failure_reason``, ``failed_after`` (successful
        evaluations before it) and ``failed_phase`` over ``failure``."""
        ds = xr.Dataset(
            {
                "failed_x": (("failure", "dim"), self.X),
                "failure_reason": ("failure", np.array(self.reasons, dtype=str)),
                "failed_after": ("failure", np.array(self.after, dtype=np.int64)),
                "failed_phase": ("failure", np.array(self.phases, dtype=str)),
            },
            coords={"failure": np.arange(1, len(self) + 1)},
        )
        for name, (long_name, description) in _ATTRS.items():
            ds[name].attrs.update(long_name=long_name, description=description)
        ds["failed_x"].attrs["units"] = "the problem's input units"
        ds["failed_after"].attrs["units"] = "1"
        return ds


_ATTRS = {
    "failure": ("failed evaluation number", "failures in the order they were told"),
    "failed_x": ("failed input", "an input whose evaluation failed"),
    "failure_reason": ("failure reason", "the error or non-finite output that was told"),
    "failed_after": ("evaluations before the failure", "successful evaluations told before it"),
    "failed_phase": ("phase of the failed input", "init (design) or acquisition"),
}
